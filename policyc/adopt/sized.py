"""Pools whose nodes a provisioner makes (Karpenter, NFD matching hardware): their nodes are not on the cluster until
made, so each registered provisioner's `adopt` face reads them back from its own objects, each as the node it would
make (read as nodes are, `policyc.adopt.pools`) with the pool's size and its provisioner's block."""

from __future__ import annotations

from dataclasses import dataclass, field

from ruamel.yaml.comments import CommentedMap

from policyc.adopt.draft import Draft, block, flow, guess
from policyc.cluster.reading import PoolsRead
from policyc.cluster.source import ClusterSource
from policyc.ir import LabelKeys
from policyc.registry import PROVISIONERS, provisioner_adopt, provisioner_settings

NAMED = next(iter(PROVISIONERS))
"""The default provisioner, whose pools are the cluster's nodes by name."""


@dataclass(slots=True)
class Unseen:
    """What the sized pools' objects do not show, to be guessed once the rest of the policy is read."""

    sizes: dict[str, str] = field(default_factory=dict)
    """Pool -> the field of its size that was guessed."""
    gpus: set[str] = field(default_factory=set)
    """Pools whose GPUs per node were guessed."""


def read_sized(source: ClusterSource, keys: LabelKeys, draft: Draft) -> dict[str, PoolsRead]:
    """Provisioner -> its reading, for those whose objects make pools on the cluster (the top of the policy says what
    of their pools the cluster does not show)."""
    out = {}
    for name in PROVISIONERS:
        face = provisioner_adopt(name)
        read = face.read_pools(source, keys)
        draft.expressed |= read.expressed
        if read.pools:
            out[name] = read
            draft.notes.append(f"pools of {provisioner_settings(name).TITLE}: not on the cluster: {face.UNSEEN}")
    return out


def template_nodes(sized: dict[str, PoolsRead]) -> list[dict]:
    """The node each sized pool's provisioner would make, read with the cluster's nodes."""
    return [pool.node for read in sized.values() for pool in read.pools]


def place_sized(draft: Draft, sized: dict[str, PoolsRead], keys: LabelKeys) -> Unseen:
    """A sized pool's size and provisioner block in place of its node names; `spec.provisioning`: the provisioner
    of every pool where they share one, else each pool's own, and each provisioner's settings. Returns what was
    guessed of them."""
    pools = {p["name"]: p for p in draft.spec.get("nodePools") or []}
    unseen = Unseen()
    chosen = {name: NAMED for name in pools}
    for provisioner, read in sized.items():
        for found in read.pools:
            name = found.node["metadata"]["labels"][keys.pool]
            _sized(pools[name], found.size, provisioner, found.settings)
            for key, why in found.guesses.items():
                guess(pools[name], key, why)
            chosen[name] = provisioner
            unseen.sizes.update((name, key) for key in found.size if key in found.guesses)
            if "gpu" in found.guesses:
                unseen.gpus.add(name)
    used = set(chosen.values())
    default = used.pop() if len(used) == 1 else NAMED
    provisioning: dict = {"default": default} if default != NAMED else {}
    provisioning.update({name: read.settings for name, read in sized.items() if read.settings})
    for name, provisioner in chosen.items():
        if provisioner != default:
            pools[name].insert(list(pools[name]).index("usage") + 1, "provisioning", provisioner)
    if provisioning:
        draft.spec["provisioning"] = block(provisioning)
    return unseen


def fit_unseen(draft: Draft, unseen: Unseen) -> None:
    """A pool whose GPUs per node are not on the cluster gets the most GPUs a pod of its tier's classes asks for (at
    least the 1 guessed); one whose size is not, the nodes that hold, alone, every GPU the tenants' queues guarantee
    (a pool of too few would make policyc refuse them). Each says so."""
    pools = draft.spec.get("nodePools") or []
    tiers = {p: t["name"] for t in draft.spec.get("gpuTiers") or [] for p in t["products"]}
    for pool in (p for p in pools if p["name"] in unseen.gpus):
        tier = tiers.get(pool["gpu"]["product"])
        asked = [int(w["gpus"]) for w in draft.spec.get("workloads") or [] if tier and w.get("gpuTier") == tier]
        if asked and max(asked) > int(pool["gpu"]["count"]):
            pool["gpu"]["count"] = max(asked)
            guess(pool, "gpu", "count not on the cluster: the most GPUs a pod of its tier's classes asks for")
    _hold_guarantees(draft, [p for p in pools if p["name"] in unseen.sizes], unseen.sizes)


def _hold_guarantees(draft: Draft, pools: list[CommentedMap], sizes: dict[str, str]) -> None:
    guaranteed = sum(
        int(amount)
        for tenant in draft.spec.get("tenants") or []
        for resource, amount in ((tenant.get("queue") or {}).get("guarantee") or {}).items()
        if resource == "gpu" and str(amount).isdigit()
    )
    for pool in pools if guaranteed else ():
        per_node = int(pool["gpu"]["count"]) if "gpu" in pool else 1
        pool[sizes[pool["name"]]] = max(1, -(-guaranteed // per_node))
        guess(
            pool,
            sizes[pool["name"]],
            f"not on the cluster; the nodes that hold the {guaranteed} GPUs the queues guarantee",
        )


def _sized(pool: CommentedMap, size: dict, provisioner: str, settings: dict) -> None:
    at = list(pool).index("nodes")
    del pool["nodes"]
    for offset, (key, value) in enumerate(size.items()):
        pool.insert(at + offset, key, value)
    if settings:
        pool[provisioner] = flow(settings) if _flat(settings) else block(settings)


def _flat(settings: dict) -> bool:
    """Whether the block reads well on one line (no list of maps in it)."""
    return not any(isinstance(v, list) and any(isinstance(i, dict) for i in v) for v in settings.values())

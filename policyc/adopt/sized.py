"""Pools whose nodes a provisioner makes (Karpenter, NFD matching hardware): their nodes are not on the cluster until
made, so each registered provisioner's `adopt` face reads them back from its own objects, each as the node it would
make (read as nodes are, `policyc.adopt.pools`) with the pool's size and its provisioner's block."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from policyc.adopt.draft import Draft, block, flow, guess
from policyc.cluster.reading import PoolsRead
from policyc.cluster.source import ClusterSource
from policyc.ir import LabelKeys
from policyc.registry import PROVISIONERS, provisioner_adopt

NAMED = next(iter(PROVISIONERS))
"""The default provisioner, whose pools are the cluster's nodes by name."""


def read_sized(source: ClusterSource, keys: LabelKeys, draft: Draft) -> dict[str, PoolsRead]:
    """Provisioner -> its reading, for those whose objects make pools on the cluster."""
    out = {}
    for name in PROVISIONERS:
        read = provisioner_adopt(name).read_pools(source, keys)
        draft.expressed |= read.expressed
        if read.pools:
            out[name] = read
    return out


def template_nodes(sized: dict[str, PoolsRead]) -> list[dict]:
    """The node each sized pool's provisioner would make, read with the cluster's nodes."""
    return [pool.node for read in sized.values() for pool in read.pools]


def place_sized(draft: Draft, sized: dict[str, PoolsRead], keys: LabelKeys) -> dict[str, str]:
    """A sized pool's size and provisioner block in place of its node names; `spec.provisioning`: the provisioner
    of every pool where they share one, else each pool's own, and each provisioner's settings. Returns the pools
    whose size was guessed -> the field of their size guessed."""
    pools = {p["name"]: p for p in draft.spec.get("nodePools") or []}
    unsized = {}
    chosen = {name: NAMED for name in pools}
    for provisioner, read in sized.items():
        for found in read.pools:
            name = found.node["metadata"]["labels"][keys.pool]
            _sized(pools[name], found.size, provisioner, found.settings)
            for key, why in found.guesses.items():
                guess(pools[name], key, why)
            chosen[name] = provisioner
            guessed = [key for key in found.size if key in found.guesses]
            if guessed:
                unsized[name] = guessed[0]
    used = set(chosen.values())
    default = used.pop() if len(used) == 1 else NAMED
    provisioning: dict = {"default": default} if default != NAMED else {}
    provisioning.update({name: read.settings for name, read in sized.items() if read.settings})
    for name, provisioner in chosen.items():
        if provisioner != default:
            pools[name].insert(list(pools[name]).index("usage") + 1, "provisioning", provisioner)
    if provisioning:
        draft.spec["provisioning"] = block(provisioning)
    return unsized


def hold_guarantees(draft: Draft, unsized: dict[str, str]) -> None:
    """A pool whose size is not on the cluster is given the nodes that hold, alone, every GPU the tenants' queues
    guarantee (a pool of too few would make policyc refuse the guarantees), and says so."""
    guaranteed = sum(
        int(amount)
        for tenant in draft.spec.get("tenants") or []
        for resource, amount in ((tenant.get("queue") or {}).get("guarantee") or {}).items()
        if resource == "gpu" and str(amount).isdigit()
    )
    for pool in draft.spec.get("nodePools") or []:
        if pool["name"] in unsized and guaranteed:
            per_node = int(pool["gpu"]["count"]) if "gpu" in pool else 1
            key = unsized[pool["name"]]
            pool[key] = max(1, -(-guaranteed // per_node))
            guess(pool, key, f"not on the cluster; the nodes that hold the {guaranteed} GPUs the queues guarantee")


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

"""The Karpenter provisioner's objects: a `karpenter.sh/v1` NodePool per pool (`karpenter/nodepools.yaml`)."""

from __future__ import annotations

from policyc.artifacts import Artifact, Manifest
from policyc.gpu.accelerators import VENDORS
from policyc.ir import ChosenLabel, Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.k8s.objects import metadata
from policyc.provisioners.karpenter.label_rules import (
    AWS_WELL_KNOWN,
    CAPACITY_TYPE,
    GPU_COUNT,
    GPU_NAME,
    INSTANCE_TYPE,
    NODEPOOL,
    WELL_KNOWN,
    ZONE,
)
from policyc.provisioners.karpenter.settings import KarpenterPoolSettings, NodeClassRef

NAME = "karpenter"
REFERENCES: tuple[Reference, ...] = ()
PATH = "karpenter/nodepools.yaml"
API_VERSION = "karpenter.sh/v1"
NODEPOOL_PREFIX = "policyc-"
GANG_USAGES = ("training", "hybrid")
"""Usages whose pools run training gangs: Karpenter never takes a node of theirs that has pods on it."""
GPU_VENDORS = ("nvidia", "amd")
"""Vendors whose cards Karpenter's AWS provider labels instances with (instance-gpu-name, instance-gpu-count)."""
BUDGET = "10%"
"""Karpenter's own default disruption budget: at most this share of a pool's nodes disrupted at once."""


def nodepool_name(pool: Pool) -> str:
    """The name of the pool's NodePool: also the value of `karpenter.sh/nodepool` on each of its nodes."""
    return f"{NODEPOOL_PREFIX}{pool.name}"


def own(pool: Pool) -> KarpenterPoolSettings:
    """The pool's block `nodePools[].karpenter`, or its defaults."""
    return pool.provisioning_settings or KarpenterPoolSettings.model_construct()


DEFAULT_NODE_CLASS = ("karpenter.k8s.aws", "EC2NodeClass", "default")
"""(group, kind, name) of the node class of a policy that names none."""


def node_class(cluster: Cluster, pool: Pool) -> tuple[str, str, str]:
    """(group, kind, name) of the node class the pool's nodes are made from: its own, else the cluster's, else
    `DEFAULT_NODE_CLASS`."""
    ref: NodeClassRef | None = own(pool).node_class or cluster.provisioning[NAME].node_class
    return (ref.group, ref.kind, ref.name) if ref is not None else DEFAULT_NODE_CLASS


def cards_per_node(pool: Pool) -> int:
    """The accelerator cards of one node, as the instance has them (not MIG devices, not shares)."""
    if pool.mig is not None:
        return sum(count for count, _ in pool.mig.cards)
    if pool.sharing is not None:
        return pool.gpus_per_node // pool.sharing[1]
    return pool.gpus_per_node


def by_gpu(pool: Pool) -> bool:
    """Whether the pool's instances are chosen by their GPU's name and count (no instance types listed)."""
    return not own(pool).instance_types and own(pool).gpu_name is not None and pool.vendor in GPU_VENDORS


def _in(key: str, values: list[str]) -> dict:
    return {"key": key, "operator": "In", "values": sorted(set(values))}


def requirements(pool: Pool) -> list[dict]:
    """Which instances, capacity and zones: the instance types, or the GPU's name and count; the capacity types; the
    zones; then the pool's further requirements as written."""
    settings = own(pool)
    out = []
    if settings.instance_types:
        out.append(_in(INSTANCE_TYPE, settings.instance_types))
    elif by_gpu(pool):
        out += [_in(GPU_NAME, [settings.gpu_name or ""]), _in(GPU_COUNT, [str(cards_per_node(pool))])]
    out.append(_in(CAPACITY_TYPE, list(settings.capacity_types)))
    if settings.zones:
        out.append(_in(ZONE, settings.zones))
    for r in settings.requirements:
        written: dict = {"key": r.key, "operator": r.operator}
        if r.values:
            written["values"] = list(r.values)
        if r.min_values is not None:
            written["minValues"] = r.min_values
        out.append(written)
    return out


INCLUSIVE = {"Gte": ("Gt", -1), "Lte": ("Lt", 1)}
"""Karpenter's inclusive comparisons as a node selector's strict ones: Gte n is Gt n-1, Lte n is Lt n+1."""


def _as_selected(requirement: dict) -> tuple[str, tuple[str, ...]] | None:
    """A requirement as a node selector's expression on its key says it (None: Exists, which any value meets). An
    inclusive comparison whose operand is no integer allows nothing (Karpenter refuses it: `ill-formed-requirement`)."""
    operator, values = requirement["operator"], tuple(requirement.get("values", ()))
    if operator == "Exists":
        return None
    if operator not in INCLUSIVE:
        return operator, values
    strict, step = INCLUSIVE[operator]
    return (strict, (str(int(values[0]) + step),)) if len(values) == 1 and values[0].isdigit() else ("In", ())


def chosen_labels(pool: Pool) -> tuple[ChosenLabel, ...]:
    """What Karpenter sets on each node it makes for the pool beside its template's labels: each requirement's key,
    to the one value it chose for the pods it makes the node for (among the requirement's, which the pods'
    selectors narrow; a key with DoesNotExist is left off), the well-known labels of every node it makes (zone,
    instance type, capacity type, ..., the AWS provider's), and the NodePool's name."""
    said: dict[str, list[tuple[str, tuple[str, ...]]]] = {key: [] for key in WELL_KNOWN | AWS_WELL_KNOWN}
    absent = set()
    for r in requirements(pool):
        if r["operator"] == "DoesNotExist":
            absent.add(r["key"])
            continue
        selected = _as_selected(r)
        said.setdefault(r["key"], []).extend([selected] if selected is not None else [])
    said[NODEPOOL] = [("In", (nodepool_name(pool),))]
    return tuple(ChosenLabel(key, tuple(said[key])) for key in sorted(said.keys() - absent - pool.labels.keys()))


def disruption(cluster: Cluster, pool: Pool) -> dict:
    """How Karpenter may take the pool's nodes away. A gang's pool (training, hybrid): only when empty
    (`WhenEmpty`), and never for drift (a budget of 0 nodes for `Drifted`); its nodes never expire (`expireAfter`,
    in the template). An inference pool: when empty or underused (its replicas move), 10% of its nodes at a time."""
    after = cluster.provisioning[NAME].consolidate_after
    if pool.usage in GANG_USAGES:
        budgets = [{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": BUDGET}]
        return {"consolidationPolicy": "WhenEmpty", "consolidateAfter": after, "budgets": budgets}
    return {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": after,
        "budgets": [{"nodes": BUDGET}],
    }


def limits(pool: Pool) -> dict[str, int]:
    """What Karpenter stops at: the pool's most nodes, and their cards (counted as the instances have them). No cpu or
    memory: Karpenter counts an instance's capacity, above the allocatable the policy states."""
    out = {"nodes": pool.max_nodes}
    if pool.vendor is not None and cards_per_node(pool):
        out[VENDORS[pool.vendor].resource] = cards_per_node(pool) * pool.max_nodes
    return dict(sorted(out.items()))


def node_pool(cluster: Cluster, pool: Pool) -> Manifest:
    """The pool's NodePool."""
    group, kind, name = node_class(cluster, pool)
    template_spec: dict = {
        "nodeClassRef": {"group": group, "kind": kind, "name": name},
        "requirements": requirements(pool),
    }
    if pool.taints:
        template_spec["taints"] = [t.to_dict() for t in pool.taints]
    if pool.usage in GANG_USAGES:
        template_spec["expireAfter"] = "Never"
    spec: dict = {
        "template": {"metadata": {"labels": dict(pool.labels)}, "spec": template_spec},
        "disruption": disruption(cluster, pool),
        "limits": limits(pool),
    }
    if own(pool).weight is not None:
        spec["weight"] = own(pool).weight
    obj = {"apiVersion": API_VERSION, "kind": "NodePool", "metadata": metadata(nodepool_name(pool), cluster.name),
           "spec": spec}  # fmt: skip
    return Manifest(obj, (pool.path,))


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    return [Artifact(PATH, tuple(node_pool(cluster, p) for p in pools), synced=True)]


def _shape(pool: Pool) -> str:
    """The instances the pool's NodePool makes, in a few words."""
    settings = own(pool)
    if settings.instance_types:
        return ", ".join(sorted(set(settings.instance_types)))
    if by_gpu(pool):
        return f"any instance with {cards_per_node(pool)} {settings.gpu_name} GPUs"
    return "any instance"


def describe(cluster: Cluster, pool: Pool) -> str:
    _, kind, name = node_class(cluster, pool)
    capacity = "/".join(sorted(own(pool).capacity_types))
    limit = " and ".join(f"{v} {k}" for k, v in limits(pool).items())
    gone = "only when empty" if pool.usage in GANG_USAGES else "when empty or underused"
    return (
        f"NodePool {nodepool_name(pool)}: {_shape(pool)}, {capacity}, {kind} {name}, at most {limit}, "
        f"nodes removed {gone}"
    )

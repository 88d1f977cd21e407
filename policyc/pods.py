"""What a workload's pods carry, computed from the cluster IR: where they may run and what they ask for.

Placement (DESIGN §3): a training pod requires ``node.usage In [training, hybrid]`` and ``gpu.tier In [<tier>]``,
prefers ``node.usage In [training]`` (weight 100), and tolerates exactly the usage taints of those pools and the
product taints of its tier. Inference is the mirror image. A pool is *reachable* when all of that, the workload's
nodeSelector and its extra tolerations let its pods onto the pool's nodes.

Sizing: every pod states its cpu and memory requests and limits, so that no LimitRange default rewrites it and no
quota refuses it for a missing key ("must specify"). What the workload does not state is sized from the nodes it
may land on (`pod_resources`). The templates carry this contract, the checks (capacity, sizing) and the report
reason with it, and the proof verifies the emitted templates against the same rules independently.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from policyc.gpu import dra, mig
from policyc.ir import MIG_CONFIG, RDMA_LABEL, Cluster, LimitRange, Pool, Resources, Workload
from policyc.k8s.objects import resource_list
from policyc.k8s.quantity import BINARY_SI, Quantity
from policyc.k8s.scheduling import NO_EXECUTE, NO_SCHEDULE, find_untolerated_taint

PREFERRED_WEIGHT = 100
NODE_AGENT_RESERVE = Fraction(1, 10)
"""Share of a node's allocatable cpu and memory that sized requests leave to node agents (the GPU Operator's
DaemonSets, CNI, log and metrics agents), so that a node's GPUs can all be used by pods of its size."""
_GI = 1 << 30
_MI = 1 << 20


def usages(workload: Workload) -> tuple[str, str]:
    """Pool usages a workload may run on: its own, then hybrid (the overflow)."""
    return workload.type, "hybrid"


# --- placement ----------------------------------------------------------------------------------------------


def _expressions(*pairs: tuple[str, list[str]]) -> dict:
    return {"matchExpressions": [{"key": key, "operator": "In", "values": values} for key, values in pairs]}


NAME_LABEL = "app.kubernetes.io/name"
"""The label naming a workload class on its objects and pods."""
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def affinity(cluster: Cluster, w: Workload) -> dict:
    """Strict placement requires a pool of the workload's usage (or hybrid) and tier, and prefers its own
    usage; preferred placement only prefers its tier's pools, its own usage most. RDMA is always required; one
    pod per node and one zone per workload are required pod (anti-)affinities among the class's pods."""
    usage, tier = cluster.keys.usage, cluster.keys.tier
    rdma = [(RDMA_LABEL, ["true"])] if w.rdma else []
    partitioned = _mig_expression(cluster, w)
    if w.placement == "strict":
        term = _expressions((usage, list(usages(w))), (tier, [w.tier.name]), *rdma)
        term["matchExpressions"] += partitioned
        required = {"nodeSelectorTerms": [term]}
        out: dict = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": required,
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": PREFERRED_WEIGHT, "preference": _expressions((usage, [w.type]))}
                ],
            }
        }
    else:
        out = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": PREFERRED_WEIGHT, "preference": _expressions((usage, [w.type]), (tier, [w.tier.name]))},
                    {
                        "weight": PREFERRED_WEIGHT // 2,
                        "preference": _expressions((usage, ["hybrid"]), (tier, [w.tier.name])),
                    },
                ]
            }
        }
        if rdma or partitioned:
            term = _expressions(*rdma)
            term["matchExpressions"] += partitioned
            out["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]},
                                   **out["nodeAffinity"]}  # fmt: skip
    own = {"labelSelector": {"matchLabels": {NAME_LABEL: w.name}}}
    if w.same_zone:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{**own, "topologyKey": ZONE}]}
    if w.one_per_node:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{**own, "topologyKey": HOSTNAME}]}
    return out


def _mig_expression(cluster: Cluster, w: Workload) -> list[dict]:
    """Where the workload's tier has MIG pools: a MIG workload requires the layouts with its profile, any other
    workload nodes without a layout (a pod asking for a whole card would get a MIG device there)."""
    layouts = [p for p in cluster.pools if p.tier == w.tier.name and p.mig is not None]
    if not layouts:
        return []
    if w.mig_profile is None:
        return [{"key": MIG_CONFIG, "operator": "DoesNotExist"}]
    names = sorted({p.labels[MIG_CONFIG] for p in layouts if _offers(p, w.mig_profile)})
    return [{"key": MIG_CONFIG, "operator": "In", "values": names}]


def _offers(pool: Pool, profile: str | None) -> bool:
    """Whether the pool's cards are what a workload of MIG `profile` (None: whole cards) asks for."""
    if pool.mig is None:
        return profile is None
    return profile is not None and profile in pool.mig.per_node


def accelerator(cluster: Cluster, w: Workload) -> str | None:
    """The resource each of the workload's GPUs is requested as: a MIG device of its profile under the mixed
    strategy (`nvidia.com/mig-<profile>`), else its tier's resource (None: a CPU-only workload)."""
    if w.mig_profile is not None and cluster.mig_strategy == "mixed":
        return mig.resource(w.mig_profile)
    return w.tier.resource


def devices_per_node(pool: Pool, resource: str | None) -> int:
    """How many devices of the accelerator `resource` one node of `pool` offers."""
    if resource is not None and resource == pool.resource:
        return pool.gpus_per_node
    amount = pool.allocatable.get(resource) if resource is not None else None
    return int(amount.value) if amount is not None else 0


def tolerations(cluster: Cluster, w: Workload) -> list[dict]:
    """The usage taints of the pools the workload may use and the product taints of its tier, then the
    policy's extra tolerations."""
    return placement_tolerations(cluster, w) + [dict(t) for t in w.tolerations]


def placement_tolerations(cluster: Cluster, w: Workload) -> list[dict]:
    """What policyc makes every pod of the class tolerate: the usage taints of its usage and hybrid, the product
    taints of its tier."""
    usage = [{"key": cluster.keys.usage, "operator": "Equal", "value": u, "effect": "NoSchedule"} for u in usages(w)]
    key = w.tier.product_key
    products = [{"key": key, "operator": "Equal", "value": p, "effect": "NoSchedule"} for p in w.tier.products]
    return usage + products


def once_per_workload(key):
    """Compute `compute(cluster, workload)` once per build and per `key(workload)`: several stages read the same
    result (a pod contract, a grant), and workloads with the same key have the same one. The result is shared:
    callers must not change it."""

    def decorate(compute):
        @functools.wraps(compute)
        def cached(cluster: Cluster, w: Workload):
            memo = cluster.derived.setdefault((compute.__module__, compute.__qualname__), {})
            k = key(w)
            if k not in memo:
                memo[k] = compute(cluster, w)
            return memo[k]

        return cached

    return decorate


def _placement_key(w: Workload) -> tuple:
    """What decides where a workload's pods may land."""
    extra = tuple(tuple(sorted(t.items())) for t in w.tolerations)
    return w.tier.name, w.type, tuple(sorted(w.node_selector.items())), extra, bool(w.rdma), w.mig_profile


@once_per_workload(_placement_key)
def reachable_pools(cluster: Cluster, w: Workload) -> tuple[Pool, ...]:
    """The pools the workload's pods may land on: of its tier and usage (or hybrid), carrying every label of its
    nodeSelector, with every NoSchedule and NoExecute taint tolerated."""
    tolerated = tolerations(cluster, w)
    return tuple(
        p
        for p in cluster.pools
        if p.tier == w.tier.name
        and p.usage in usages(w)
        and all(p.may_carry(k, v) for k, v in w.node_selector.items())
        and (not w.rdma or p.labels.get(RDMA_LABEL) == "true")
        and _offers(p, w.mig_profile)
        and find_untolerated_taint(tolerated, (t.to_dict() for t in p.taints), (NO_SCHEDULE, NO_EXECUTE)) is None
    )


# --- sizing -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class PodResources:
    """A pod's requests and limits (cpu, memory and the GPU resource), and where sized figures came from."""

    requests: Resources
    limits: Resources
    sized_from: Pool | None
    """The pool whose nodes sized a request the workload did not state (None: the workload stated them)."""
    unsized: tuple[str, ...] = ()
    """cpu or memory: neither stated nor sizeable (no pool it can use states its allocatable); left out."""


def _round_down(resource: str, value: Fraction) -> Quantity:
    """Whole CPUs (millicores below one) and whole GiB (MiB below one), never up: a sized request must fit."""
    if resource == "memory":
        unit = _GI if value >= _GI else _MI
        return Quantity.from_value(max(math.floor(value / unit), 1) * unit, BINARY_SI)
    if value >= 1:
        return Quantity.from_value(math.floor(value))
    return Quantity.from_value(Fraction(max(math.floor(value * 1000), 1), 1000))


def _node_part(pool: Pool, accelerator: str | None, gpus: int) -> Fraction | None:
    """The part of one node of `pool` that `gpus` devices of `accelerator` are: by count, or, among the devices of
    several MIG profiles a mixed layout makes of each card, by the compute slices they take (so that the parts of all
    the node's devices add up to one); None if its nodes have none."""
    per_node = devices_per_node(pool, accelerator)
    if not per_node:
        return None
    card = mig.card(pool.product) if pool.mig and pool.mig.strategy == "mixed" else None
    if card is not None and accelerator is not None:
        slices = {mig.resource(p): card.profiles[p][0] for p in pool.mig.per_node if p in card.profiles}  # type: ignore[union-attr]
        if accelerator in slices:
            total = sum(slices[r] * devices_per_node(pool, r) for r in slices)
            return Fraction(gpus * slices[accelerator], total)
    return Fraction(gpus, per_node)


def _smallest_share(
    pools: Iterable[Pool], resource: str, parts: dict[str, Fraction], reserve: Fraction
) -> tuple[Quantity, Pool] | tuple[None, None]:
    """A pod's part of one node by its GPUs (allocatable x `parts[pool name]`, less `reserve`) on the pool where it
    is smallest (by name among equals), rounded down; (None, None) if no pool states its allocatable. Each node
    shape is worked out once."""
    first: dict[tuple[Quantity, Fraction], Pool] = {}
    for p in pools:
        amount = p.allocatable.get(resource)
        if amount is not None and p.name in parts:
            shape = (amount, parts[p.name])
            if shape not in first or p.name < first[shape].name:
                first[shape] = p
    if not first:
        return None, None
    share, pool = min(
        ((amount.value * part * (1 - reserve), p) for (amount, part), p in first.items()),
        key=lambda s: (s[0], s[1].name),
    )
    return _round_down(resource, share), pool


def _within(amount: Quantity, resource: str, limit_range: LimitRange | None) -> Quantity:
    """A sized amount raised to the LimitRange's min and lowered to its max."""
    if limit_range is None:
        return amount
    low, high = limit_range.min.get(resource), limit_range.max.get(resource)
    if low is not None and amount < low:
        amount = low
    if high is not None and amount > high:
        amount = high
    return amount


@once_per_workload(lambda w: (_placement_key(w), w.gpus))
def _node_shares(cluster: Cluster, w: Workload) -> dict[tuple[str, bool], tuple[Quantity, Pool] | tuple[None, None]]:
    """(cpu or memory, less `NODE_AGENT_RESERVE`) -> the smallest share of a node a pod of the workload's gets by
    its GPUs (`_smallest_share`), among the pools it can reach with nodes of enough GPUs (all it can reach if none
    has): the same for workloads with the same placement and GPUs."""
    reachable = reachable_pools(cluster, w)
    gpu = accelerator(cluster, w)
    pools = [p for p in reachable if devices_per_node(p, gpu) >= w.gpus] or reachable  # none: reported by the checks
    parts = {p.name: part for p in pools if (part := _node_part(p, gpu, w.gpus)) is not None}
    return {
        (resource, reserved): _smallest_share(pools, resource, parts, NODE_AGENT_RESERVE if reserved else Fraction(0))
        for resource in ("cpu", "memory")
        for reserved in (True, False)
    }


@once_per_workload(lambda w: w.name)
def pod_resources(cluster: Cluster, w: Workload) -> PodResources:
    """Requests and limits of each of the workload's pods.

    Requests: the workload's `cpu` and `memory`; else its share of a node by GPUs (allocatable x the part of the node
    its GPUs are, `_node_part`), of the reachable pool with nodes of enough GPUs where that share is smallest, less
    `NODE_AGENT_RESERVE`, rounded down, within its tenant's LimitRange min and max. Limits: the workload's `limits`;
    else equal to the requests under `qos: Guaranteed`; else memory equal to its request (memory cannot be taken back
    without killing), and cpu the whole share of that node, at least the request and within the LimitRange max. GPUs
    (as `accelerator` names them): requests = limits. A request neither stated nor sizeable is left out and named in
    `unsized`.
    """
    gpu = accelerator(cluster, w)
    shares = _node_shares(cluster, w)
    tenant = cluster.tenants_by_name.get(w.tenant)
    limit_range = tenant.limit_range if tenant is not None else None
    requests: dict[str, Quantity] = {gpu: Quantity.from_value(w.gpus)} if gpu else {}
    limits: dict[str, Quantity] = dict(requests)
    rdma = rdma_resources(cluster, w)
    if w.rdma and len(rdma) == 1:  # none, or several: reported by the checks
        requests[rdma[0]] = limits[rdma[0]] = Quantity.from_value(w.rdma)
    sized_from, unsized = None, []
    for resource, stated in (("cpu", w.cpu), ("memory", w.memory)):
        if stated is None:
            share, pool = shares[resource, True]
            if share is None:
                unsized.append(resource)
                continue
            stated, sized_from = _within(share, resource, limit_range), pool
        requests[resource] = stated
        limit = w.limits.get(resource)
        # a CPU-only pod has no share of a node by GPUs: its cpu limit is its request
        if limit is None and (w.qos == "Guaranteed" or resource == "memory" or not w.gpus):
            limit = stated
        elif limit is None:
            whole, _ = shares[resource, False]
            limit = _within(max(whole, stated), resource, limit_range) if whole is not None else stated
            limit = max(limit, stated)
        limits[resource] = limit
    return PodResources(dict(sorted(requests.items())), dict(sorted(limits.items())), sized_from, tuple(unsized))


def rdma_resources(cluster: Cluster, w: Workload) -> list[str]:
    """The RDMA resources of the pools an RDMA workload can use (one, unless the policy is wrong)."""
    return sorted({p.rdma_resource for p in reachable_pools(cluster, w) if p.rdma_resource}) if w.rdma else []


def nccl_interfaces(cluster: Cluster, w: Workload) -> list[str]:
    """The network interfaces NCCL uses on the pools an RDMA workload can use, in pool order."""
    return list(dict.fromkeys(i for p in reachable_pools(cluster, w) for i in p.interfaces)) if w.rdma else []


def pods_per_node(pool: Pool, requests: Resources) -> int:
    """How many pods with `requests` one node of `pool` holds, by its GPUs and the allocatable it states."""
    return _pods_per_node(
        pool.gpus_per_node, tuple(sorted(pool.allocatable.items())), tuple(sorted(requests.items())), pool.resource
    )


@functools.lru_cache(maxsize=4096)
def _pods_per_node(
    gpus_per_node: int,
    allocatable: tuple[tuple[str, Quantity], ...],
    requests: tuple[tuple[str, Quantity], ...],
    gpu: str | None,
) -> int:
    capacity = {gpu: Quantity.from_value(gpus_per_node), **dict(allocatable)} if gpu else dict(allocatable)
    fits = [
        math.floor(capacity[r].value / amount.value) for r, amount in requests if r in capacity and not amount.is_zero()
    ]
    return min(fits, default=0)


def container_resources(pods: PodResources) -> dict:
    """The container's `resources`: limits and requests, without the GPUs of a DRA tier, which the pod claims
    (`policyc.gpu.dra`)."""
    claimed = dra.claimed(pods.requests)
    return {part: resource_list({r: q for r, q in amounts.items() if r not in claimed})
            for part, amounts in (("limits", pods.limits), ("requests", pods.requests))}  # fmt: skip


def contract_pod(w: Workload, pods: PodResources) -> dict:
    """A pod of the workload as its contract says it is (one container), for admission arithmetic; GPUs of a DRA
    tier are claimed, not requested (`dra.claimed`)."""
    spec: dict = {"containers": [{"name": w.name, "resources": container_resources(pods)}]}
    if w.priority_class:
        spec["priorityClassName"] = w.priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": w.name, "namespace": w.namespace}, "spec": spec}

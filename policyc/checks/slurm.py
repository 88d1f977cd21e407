"""Slurm partitions (`nodePools[].slurm`): one setting per partition and one default, NodeName lines that can be
written, GPUs Slurm can be told about, priority tiers in the classes' order, Slurm-only pools out of the workloads'
reach, and the quotas of a partition's priority class within its GPUs (`policyc.gpu.slurm`, `policyc.backends.slurm`).

A pool without `slurm` is Kubernetes-only; with `slurm.shared: true` Kubernetes workloads of its usage may use it
too; with `shared: false` (Slurm-only) its nodes carry `<domain>/slurm-only:NoSchedule`, and a workload whose
tolerations let it through is an error (PC464), as the placement proof would see it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from policyc.diagnostics import Diagnostic, diag, listing
from policyc.gpu import slurm
from policyc.ir import Cluster, Pool, SlurmPartition, Tenant, slurm_partitions
from policyc.k8s.quantity import Quantity
from policyc.k8s.scheduling import tolerates_taint
from policyc.pods import reachable_pools

SETTINGS = (("default", "default"), ("max_time", "maxTime"), ("priority_class", "priorityClass"))
"""PoolSlurm fields a partition has once, and their policy names."""


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    parts = slurm_partitions(cluster)
    if not parts or cluster.slurm is None:
        return
    yield from _conflicts(parts)
    yield from _defaults(parts)
    yield from _tiers(cluster, parts)
    pools = [p for part in parts for p in part.pools]
    yield from _unsized(pools)
    yield from _gres(cluster, pools)
    yield from _reachable(cluster)
    if cluster.complete:
        yield from _quotas(cluster, parts)
    if cluster.slurm.operator == "slinky":
        yield from _slinky(cluster, parts)
    else:
        yield from _shared(pools)


def _shown(field: str, value: Any) -> str:
    if field == "max_time":
        return slurm.time_text(value)
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else f"'{value}'"


def _conflicts(parts: list[SlurmPartition]) -> Iterator[Diagnostic]:
    for part in parts:
        first = part.pools[0]
        for p in part.pools[1:]:
            for field, name in SETTINGS:
                mine, theirs = getattr(p.slurm, field), getattr(part.settings, field)
                if mine != theirs:
                    yield diag(
                        "slurm-partition-conflict",
                        f"pool '{p.name}' gives Slurm partition '{part.name}' {name} {_shown(field, mine)}, but pool "
                        f"'{first.name}' gives it {_shown(field, theirs)}",
                        (*p.slurm.path, name),
                        hint=f"a partition has one {name}: write {_shown(field, theirs)} as pool '{first.name}' does, "
                        "or name another partition",
                    )


def _defaults(parts: list[SlurmPartition]) -> Iterator[Diagnostic]:
    defaults = sorted((part for part in parts if part.settings.default), key=lambda part: part.settings.path)
    for part in defaults[1:]:
        yield diag(
            "slurm-several-default-partitions",
            f"Slurm partitions '{defaults[0].name}' and '{part.name}' are both the default (jobs that name no "
            "partition run in the default one)",
            (*part.settings.path, "default"),
            hint=f"remove default: true here, or from partition '{defaults[0].name}'",
        )


def _tiers(cluster: Cluster, parts: list[SlurmPartition]) -> Iterator[Diagnostic]:
    """Partitions whose classes differ in value but not in PriorityTier (both clamped to one end)."""
    values = {c.name: c.value for c in cluster.priority_classes}
    seen: dict[int, tuple[SlurmPartition, int]] = {}
    for part in sorted(parts, key=lambda part: part.settings.path):
        cls = part.settings.priority_class
        if cls not in values:
            continue
        tier = slurm.priority_tier(values[cls])
        other, value = seen.setdefault(tier, (part, values[cls]))
        if value != values[cls]:
            yield diag(
                "slurm-priority-tiers-tie",
                f"Slurm partitions '{other.name}' (class '{other.settings.priority_class}', value {value:,}) and "
                f"'{part.name}' (class '{cls}', value {values[cls]:,}) both get PriorityTier {tier}, the end of "
                f"Slurm's 0..{slurm.MAX_PRIORITY_TIER}: Slurm would not order them as Kubernetes orders their classes",
                (*part.settings.path, "priorityClass"),
                hint=f"give the classes values within 0..{slurm.MAX_PRIORITY_TIER} (PriorityTier is the class's "
                "value), or the two partitions one class",
            )


def _unsized(pools: list[Pool]) -> Iterator[Diagnostic]:
    for p in pools:
        cpu, memory = p.allocatable.get("cpu"), p.allocatable.get("memory")
        missing = [
            what
            for what, ok in (
                ("cpu (at least 1, Slurm's CPUs)", cpu is not None and cpu >= Quantity.from_value(1)),
                ("memory (at least 1Mi, Slurm's RealMemory)", memory is not None and memory.value >= slurm.MEBIBYTE),
            )
            if not ok
        ]
        if missing:
            yield diag(
                "slurm-pool-unsized",
                f"pool '{p.name}' is in Slurm partition '{p.slurm.partition}' but does not state its nodes' "
                f"allocatable {' and '.join(missing)}: its NodeName line needs them",
                (*p.path, "allocatable") if p.allocatable else (*p.path, "name"),
                hint='state what Kubernetes reports as the nodes\' allocatable, e.g. allocatable: {cpu: "96", memory: '
                "1000Gi}; Slurm sets a node that registers with less than that DOWN",
            )


def _gres(cluster: Cluster, pools: list[Pool]) -> Iterator[Diagnostic]:
    slinky = cluster.slurm is not None and cluster.slurm.operator == "slinky"
    for p in pools:
        part = f"pool '{p.name}' of Slurm partition '{p.slurm.partition}'"
        if p.mig is not None:
            yield diag(
                "slurm-gres-unsupported",
                f"{part} partitions its cards with MIG: Slurm finds MIG devices only with NVML autodetection, and "
                "policyc describes whole cards to it",
                (*p.path, "gpu", "mig"),
                hint="remove gpu.mig from a Slurm pool, or slurm from a MIG pool",
            )
        elif p.resource and p.vendor != "nvidia":
            yield diag(
                "slurm-gres-unsupported",
                f"{part} has {p.vendor} accelerators: policyc describes NVIDIA's device files (/dev/nvidia<n>) to "
                "Slurm",
                (*p.path, "gpu", "vendor"),
                hint="remove slurm from the pool, and describe its devices in your own gres.conf",
            )
        elif slinky and p.device_class:
            yield diag(
                "slurm-gres-unsupported",
                f"{part} is of a DRA tier: Slinky's slurmd would claim the GPUs with a ResourceClaim, which policyc "
                "does not write",
                (*p.slurm.path, "partition"),
                hint=f"remove dra from tier '{p.tier}', or slurm from the pool",
            )


def _reachable(cluster: Cluster) -> Iterator[Diagnostic]:
    taint = {"key": cluster.keys.slurm_only, "effect": "NoSchedule"}
    for w in cluster.workloads:
        only = [p for p in reachable_pools(cluster, w) if p.slurm is not None and not p.slurm.shared]
        if not only:
            continue
        index = next((i for i, t in enumerate(w.tolerations) if tolerates_taint(t, taint)), None)
        names = listing([f"'{p.name}'" for p in only], 3)
        yield diag(
            "slurm-only-pool-tolerated",
            f"workload '{w.name}' tolerates {cluster.keys.slurm_only}, the taint of Slurm-only "
            f"pool{'s' * (len(only) > 1)} {names}: its pods could land there and take GPUs Slurm schedules",
            (*w.path, "tolerations") if index is None else (*w.path, "tolerations", index),
            hint=f"remove the toleration (and set slurm.shared: true on pool '{only[0].name}' if Kubernetes workloads "
            "may use its nodes)",
        )


def _shared(pools: list[Pool]) -> Iterator[Diagnostic]:
    for p in pools:
        if p.slurm is not None and p.slurm.shared and p.slurm.cards:
            yield diag(
                "slurm-shared-pool-without-operator",
                f"pool '{p.name}' is shared by Slurm and Kubernetes, and slurmd runs beside the kubelet (spec.slurm."
                "operator none): both hand out its GPUs, so a Slurm job and a pod can get the same card",
                (*p.slurm.path, "shared"),
                hint="set shared: false (Slurm-only nodes), or spec.slurm.operator: slinky (slurmd in pods that "
                "request the GPUs from Kubernetes)",
            )


def _gpu_capacity(cluster: Cluster, pools: list[Pool]) -> dict[str, Quantity]:
    """Each accelerator resource -> what `pools` have of it (what Kubernetes counts: shared cards count per share)."""
    zero = Quantity.from_value(0)
    return {r: sum((cluster.pool_capacity(p, r) or zero for p in pools), zero)
            for r in (*cluster.accelerators, *cluster.claimed_devices)}  # fmt: skip


def _quotas(cluster: Cluster, parts: list[SlurmPartition]) -> Iterator[Diagnostic]:
    """A tenant's quota for a partition's class above the GPUs of the partitions of that class."""
    by_class: dict[str, list[SlurmPartition]] = {}
    for part in parts:
        if part.settings.priority_class is not None:
            by_class.setdefault(part.settings.priority_class, []).append(part)
    for t in cluster.tenants:
        for cls, hard in (t.quota.per_class if t.quota else {}).items():
            if cls not in by_class:
                continue
            pools = [p for part in by_class[cls] for p in part.pools]
            capacity = _gpu_capacity(cluster, pools)
            for key, amount in hard.items():
                resource = key.removeprefix("requests.")
                if resource not in capacity or amount <= capacity[resource]:
                    continue
                shown = cluster.policy_key(resource)
                names = listing([f"'{part.name}'" for part in by_class[cls]], 3)
                yield diag(
                    "slurm-quota-above-partition",
                    f"tenant '{t.name}' may request {amount} {resource} with priority class '{cls}' in each of its "
                    f"namespaces, but the Slurm partition{'s' * (len(by_class[cls]) > 1)} of that class ({names}) "
                    f"{'have' if len(by_class[cls]) > 1 else 'has'} {capacity[resource]}",
                    (*t.path, "quota", "perPriorityClass", cls, shown),
                    hint=f"lower it to at most {capacity[resource]}, or add nodes to the partition",
                )


def _owner(cluster: Cluster, namespace: str) -> Tenant | None:
    return next((t for t in cluster.tenants if namespace in t.namespaces), None)


def _slinky(cluster: Cluster, parts: list[SlurmPartition]) -> Iterator[Diagnostic]:
    for part in parts:
        for p in part.pools[1:]:
            yield diag(
                "slinky-partition-of-several-pools",
                f"pools '{part.pools[0].name}' and '{p.name}' both name Slurm partition '{part.name}', and Slinky "
                "makes one partition of each NodeSet (a pool's), named after it",
                (*p.slurm.path, "partition"),
                hint=f"give pool '{p.name}' its own partition",
            )
    assert cluster.slurm is not None
    namespace = cluster.slurm.namespace
    tenant = _owner(cluster, namespace)
    if tenant is None:
        return
    yield from _slinky_classes(cluster, parts, tenant, namespace)
    if tenant.quota is not None and cluster.complete:
        yield from _slinky_quota(cluster, parts, tenant, namespace)


def _slinky_classes(
    cluster: Cluster, parts: list[SlurmPartition], tenant: Tenant, namespace: str
) -> Iterator[Diagnostic]:
    """The slurmd pods' priority class (the partition's, else the default class) must be one the tenant may use."""
    if tenant.allowed_priority_classes is None:
        return
    known = {c.name for c in cluster.priority_classes}
    default = next((c.name for c in cluster.priority_classes if c.global_default), None)
    for part in parts:
        cls = part.settings.priority_class or default
        if cls in tenant.allowed_priority_classes or (cls is not None and cls not in known):  # unknown: PC304
            continue
        named = f"priority class '{cls}'" if cls else "no priority class (and no class is globalDefault)"
        elsewhere = "or set spec.slurm.namespace to a namespace no tenant owns"
        yield diag(
            "slurm-nodeset-refused-by-quota",
            f"Slinky's slurmd pods of Slurm partition '{part.name}' run in namespace '{namespace}' of tenant "
            f"'{tenant.name}' with {named}, which the tenant may not use: its quota refuses them",
            (*part.settings.path, "priorityClass"),
            hint=f"add '{cls}' to tenant '{tenant.name}''s priorityClasses, {elsewhere}"
            if cls
            else f"give the partition a priorityClass tenant '{tenant.name}' may use, {elsewhere}",
        )


def _slinky_quota(
    cluster: Cluster, parts: list[SlurmPartition], tenant: Tenant, namespace: str
) -> Iterator[Diagnostic]:
    """The slurmd pods state no cpu or memory: a quota that counts them must have a LimitRange default them (else the
    API server refuses every pod); and all their GPUs (every GPU of every node of the partitions) must be within the
    quotas that count them."""
    assert tenant.quota is not None
    yield from _undefaulted(tenant, namespace)
    yield from _gpus_over_quota(cluster, parts, tenant, namespace)


def _undefaulted(tenant: Tenant, namespace: str) -> Iterator[Diagnostic]:
    """The cpu and memory the tenant's quota counts, which no LimitRange of it defaults for the slurmd pods."""
    assert tenant.quota is not None
    lr = tenant.limit_range
    for key in sorted(tenant.quota.hard):
        kind, _, resource = key.rpartition(".")
        if resource not in ("cpu", "memory") or kind not in ("", "requests", "limits"):
            continue
        if lr is None:
            defaulted = False
        elif kind == "limits":
            defaulted = resource in lr.default
        else:  # a request defaults to the default request, else to the default limit
            defaulted = resource in lr.default_request or resource in lr.default
        if not defaulted:
            yield diag(
                "slurm-nodeset-refused-by-quota",
                f"tenant '{tenant.name}''s quota counts {key} in namespace '{namespace}', and Slinky's slurmd pods "
                f"state no {resource} ({kind or 'requests'}), nor does a LimitRange of the tenant default it: the "
                "API server refuses every one",
                (*tenant.path, "quota"),
                hint=f"give tenant '{tenant.name}' a limitRange with "
                f"{'default' if kind == 'limits' else 'defaultRequest'}.{resource}, or set spec.slurm.namespace to a "
                "namespace no tenant owns",
            )


def _gpus_over_quota(
    cluster: Cluster, parts: list[SlurmPartition], tenant: Tenant, namespace: str
) -> Iterator[Diagnostic]:
    """The GPUs of the partitions' nodes beyond the quotas of the tenant that count them."""
    assert tenant.quota is not None
    limits: list[tuple[str, dict[str, Quantity], tuple, list[SlurmPartition]]] = [
        ("quota.requests", tenant.quota.hard, ("quota", "requests"), parts)
    ]
    for cls, hard in tenant.quota.per_class.items():
        mine = [part for part in parts if part.settings.priority_class == cls]
        if mine:
            limits.append((f"quota.perPriorityClass.{cls}", hard, ("quota", "perPriorityClass", cls), mine))
    for where, hard, at, counted in limits:
        need = _gpu_capacity(cluster, [p for part in counted for p in part.pools])
        for resource, amount in need.items():
            allowed = hard.get(f"requests.{resource}")
            if allowed is None or amount <= allowed:
                continue
            shown = cluster.policy_key(resource)
            yield diag(
                "slurm-nodeset-refused-by-quota",
                f"Slinky's slurmd pods in namespace '{namespace}' request {amount} {resource} (every GPU of the nodes "
                f"of {listing([repr(part.name) for part in counted], 3)}), but tenant '{tenant.name}' allows {allowed} "
                f"({where}.{shown}): the pods beyond are refused, and their nodes stay out of Slurm",
                (*tenant.path, *at, shown),
                hint=f"raise it to at least {amount}, or set spec.slurm.namespace to a namespace no tenant owns",
            )

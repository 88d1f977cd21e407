"""Totals against what the cluster has: queue guarantees (error) and namespace quotas (warning, with the
ratio), per resource. Only resources whose capacity the policy states are compared: GPUs always (count
times nodes), cpu and memory when every pool gives its allocatable."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster, Pool
from policyc.k8s.quantity import Quantity


def capacity(cluster: Cluster, pools: Sequence[Pool]) -> dict[str, Quantity]:
    """Resource name -> total over `pools`, for the resources every one of them states."""
    if not pools:
        return {}
    out = {cluster.gpu_resource: Quantity.from_value(sum(p.gpus for p in pools))}
    for resource in set.intersection(*(set(p.allocatable) for p in pools)) - {cluster.gpu_resource}:
        out[resource] = sum((p.allocatable[resource] * len(p.nodes) for p in pools), Quantity.from_value(0))
    return out


def _serving_pools(cluster: Cluster) -> dict[str, tuple[Pool, ...]]:
    """Tenant -> the pools that can run its workloads (their tiers); tenants without workloads are absent.
    Tenants with the same tiers share one tuple, so capacities are computed once per set of tiers."""
    tiers: dict[str, set[str]] = {}
    for w in cluster.workloads:
        tiers.setdefault(w.tenant, set()).add(w.tier.name)
    by_tiers: dict[frozenset[str], tuple[Pool, ...]] = {}
    for names in tiers.values():
        key = frozenset(names)
        if key not in by_tiers:
            by_tiers[key] = tuple(p for p in cluster.pools if p.tier in key)
    return {tenant: by_tiers[frozenset(names)] for tenant, names in tiers.items()}


def _breakdown(pools: Sequence[Pool], resource: str, cluster: Cluster) -> str:
    if resource == cluster.gpu_resource:
        parts = [f"{p.name} {p.gpus}" for p in pools]
    else:
        parts = [f"{p.name} {p.allocatable[resource] * len(p.nodes)}" for p in pools]
    return ", ".join(parts[:6]) + (f", and {len(parts) - 6} more" if len(parts) > 6 else "")


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # totals over a partly parsed policy would mislead
        return
    yield from _tiers_without_pools(cluster)
    total = capacity(cluster, cluster.pools)
    guaranteed = [t for t in cluster.tenants if t.queue.guarantee]
    for resource, available in total.items():
        amounts = [(t, t.queue.guarantee[resource]) for t in guaranteed if resource in t.queue.guarantee]
        if not amounts:
            continue
        asked = sum((a for _, a in amounts), Quantity.from_value(0))
        if asked > available:
            shares = ", ".join(f"{t.name} {a}" for t, a in amounts)
            yield diag(
                "guarantee-exceeds-capacity",
                f"queues guarantee {asked} {resource} in total ({shares}), but the cluster has {available} "
                f"({_breakdown(cluster.pools, resource, cluster)})",
                ("spec", "tenants"),
                hint="lower the guarantees or add nodes; Volcano cannot honour a guarantee it cannot reserve",
            )
    serving_pools = _serving_pools(cluster)
    distinct = {id(pools): pools for pools in serving_pools.values()}
    capacities = {key: capacity(cluster, pools) for key, pools in distinct.items()}
    for t in guaranteed:
        pools = serving_pools.get(t.name)
        if not pools:
            continue
        serving = capacities[id(pools)]
        for resource, amount in t.queue.guarantee.items():
            if resource == cluster.gpu_resource and resource in serving and amount > serving[resource]:
                tiers = sorted({p.tier for p in pools})
                yield diag(
                    "guarantee-exceeds-capacity",
                    f"tenant '{t.name}' is guaranteed {amount} {resource}, but the pools of its workloads' "
                    f"tier{'s' if len(tiers) > 1 else ''} ({', '.join(tiers)}) have {serving[resource]} "
                    f"({_breakdown(pools, resource, cluster)})",
                    (*t.path, "queue", "guarantee", cluster.policy_key(resource)),
                    hint="lower the guarantee, or add pools of those tiers",
                )
    yield from _overcommit(cluster, total)


def quota_totals(cluster: Cluster, total: dict[str, Quantity]) -> dict[str, tuple[Quantity, Quantity]]:
    """Resource -> (what the namespace quotas request in all, what the cluster has), for every resource with
    both a stated capacity and a quota (a tenant's quota counts once per namespace)."""
    out = {}
    for resource, available in total.items():
        key = f"requests.{resource}"
        quotas = [t.quota.hard[key] * len(t.namespaces) for t in cluster.tenants if t.quota and key in t.quota.hard]
        if quotas and not available.is_zero():
            out[resource] = (sum(quotas, Quantity.from_value(0)), available)
    return out


def _overcommit(cluster: Cluster, total: dict[str, Quantity]) -> Iterator[Diagnostic]:
    for resource, (allowed, available) in quota_totals(cluster, total).items():
        if allowed > available:
            ratio = float(allowed.value / available.value)
            yield diag(
                "quota-overcommit",
                f"namespace quotas allow {allowed} requests.{resource} in total, "
                f"{ratio:.2f}x the cluster's {available}",
                ("spec", "tenants"),
                hint="fine if intended (not every tenant peaks at once); queues, not quotas, then decide who waits",
            )


def _tiers_without_pools(cluster: Cluster) -> Iterator[Diagnostic]:
    served = {p.tier for p in cluster.pools}
    for tier in cluster.tiers:
        if tier.name not in served:
            yield diag(
                "tier-without-pools",
                f"GPU tier '{tier.name}' has no node pool",
                (*tier.path, "name"),
                hint=f"add a pool with one of its products ({', '.join(tier.products)}) or remove the tier",
            )

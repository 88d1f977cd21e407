"""Guarantees against what the pools that can serve them have (error), namespace quotas against the cluster
(warning, with the ratio), and GPU tiers without pools.

A tenant's guarantee can only be kept on the pools its workloads can reach (`policyc.pods`), and tenants that
reach the same pools share them (a hybrid pool serving training and inference counts once). All guarantees can
be kept together exactly when each can be routed to pools its tenant reaches without overfilling any pool; when
they cannot, a minimum cut of that flow names the tenants whose guarantees cannot all be met and the pools they
can use, with figures a reviewer can add up by hand. Queue trees count by their leaves: a parent adds only what
its guarantee holds beyond its children's, on the pools of its whole subtree. A tenant without workloads in its
subtree may use any pool. GPUs are counted always, cpu and memory where pools state their allocatable (a pool
that does not is taken as large enough).

A pool by size counts what can exist: its most nodes. Guarantees the pools keep only above their fewest nodes are a
warning: they wait for the pools to scale up (and the autoscaler to be asked, by pending pods).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from fractions import Fraction

from policyc.diagnostics import Diagnostic, diag, listing
from policyc.gpu import dra
from policyc.ir import Cluster, Tenant, once_per_build, queue_chain
from policyc.k8s.quantity import Quantity
from policyc.pods import reachable_pools

SHOWN = 6
"""Tenants or pools named in one message at most; the rest are counted."""


def own_guarantees(cluster: Cluster) -> list[tuple[Tenant, dict[str, Quantity]]]:
    """Each tenant with what its guarantee holds beyond its child queues' guarantees (all of it for a leaf)."""
    children: dict[str, list[Tenant]] = {}
    for t in cluster.tenants:
        if t.queue.parent:
            children.setdefault(t.queue.parent, []).append(t)
    zero = Quantity.from_value(0)
    out = []
    for t in cluster.tenants:
        own = dict(t.queue.guarantee)
        for child in children.get(t.name, ()):
            for resource, amount in child.queue.guarantee.items():
                if resource in own:
                    own[resource] = max(own[resource] - amount, zero)
        out.append((t, own))
    return out


def subtree_reach(cluster: Cluster) -> dict[str, frozenset[str]]:
    """Tenant -> names of the pools its queue subtree's workloads can reach (empty when none can land anywhere)."""
    tenants = {t.name: t for t in cluster.tenants}
    reach: dict[str, set[str]] = {name: set() for name in tenants}
    for w in cluster.workloads:
        if w.tenant in tenants:
            pools = {p.name for p in reachable_pools(cluster, w)}
            for t in queue_chain(tenants[w.tenant], tenants):
                reach[t.name] |= pools
    return {name: frozenset(pools) for name, pools in reach.items()}


def tenant_reach(cluster: Cluster) -> dict[str, frozenset[str]]:
    """Tenant -> the pools its guarantee can be kept on: those its subtree's workloads reach, or every pool when
    they reach none (workloads that land nowhere are the placement proof's to report, and confine nothing)."""
    everything = frozenset(p.name for p in cluster.kubernetes_pools)
    return {name: pools or everything for name, pools in subtree_reach(cluster).items()}


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # totals over a partly parsed policy would mislead
        return
    yield from _tiers_without_pools(cluster)
    yield from shortfalls(cluster)
    yield from _overcommit(cluster, cluster.capacity(cluster.kubernetes_pools))


def shortfalls(cluster: Cluster) -> list[Diagnostic]:
    """A diagnostic per resource whose queue guarantees the pools cannot all keep (`policyc audit` asks it of the pools
    as a running cluster has them)."""
    return [d for _, d in _shortfalls(cluster)]


def unkeepable(cluster: Cluster) -> set[str]:
    """The resources whose queue guarantees the pools cannot all keep (each reported once by `check`)."""
    return {resource for resource, _ in _shortfalls(cluster)}


@once_per_build
def _shortfalls(cluster: Cluster) -> list[tuple[str, Diagnostic]]:
    """(resource, its diagnostic) for each resource whose guarantees cannot all be kept (once per build: `check` and
    a backend's rules, through `unkeepable`, ask)."""
    guarantees = [(t, own) for t, own in own_guarantees(cluster) if own]
    if not guarantees:
        return []
    reach = tenant_reach(cluster)
    return [
        (resource, d)
        for resource in sorted({r for _, own in guarantees for r in own})
        for d in _unkeepable(
            cluster,
            resource,
            [(t, own[resource]) for t, own in guarantees if resource in own and not own[resource].is_zero()],
            reach,
        )
    ]


def _unkeepable(
    cluster: Cluster, resource: str, demands: list[tuple[Tenant, Quantity]], reach: dict[str, frozenset[str]]
) -> Iterator[Diagnostic]:
    """One diagnostic if the guarantees of `resource` cannot all be kept: the tenants on the source side of a
    minimum cut of the flow (their guarantees together exceed what the pools they reach have); else one warning if
    they cannot all be kept by the pools at their fewest nodes."""
    groups: dict[frozenset[str], Fraction] = {}
    for t, amount in demands:
        groups[reach[t.name]] = groups.get(reach[t.name], Fraction(0)) + amount.value
    for fewest in (False, True):
        limits = {p.name: cluster.pool_capacity(p, resource, fewest=fewest) for p in cluster.pools}
        cut = _short_groups(groups, {n: None if q is None else q.value for n, q in limits.items()})
        if cut:
            yield _shortfall(cluster, resource, [(t, a) for t, a in demands if reach[t.name] in cut], cut, limits,
                             fewest)  # fmt: skip
            return


def _shortfall(
    cluster: Cluster,
    resource: str,
    short: list[tuple[Tenant, Quantity]],
    cut: list[frozenset[str]],
    limits: dict[str, Quantity | None],
    fewest: bool,
) -> Diagnostic:
    """The tenants of `short` are guaranteed more than the pools of `cut` have (at their fewest nodes, `fewest`)."""
    pools = {p.name: p for p in cluster.pools}
    used = sorted(set().union(*cut))
    asked = sum((a for _, a in short), Quantity.from_value(0))
    have = sum((limits[n] for n in used), Quantity.from_value(0))
    listed = listing([f"{n} {limits[n]}" for n in used], SHOWN)
    if len(short) == 1:
        (t, a), they = short[0], "it"
        who = f"tenant '{t.name}' is guaranteed {a} {resource}"
    else:
        they = "they"
        shares = listing([f"{t.name!r} {a}" for t, a in short], SHOWN)
        who = f"tenants {shares} are guaranteed {asked} {resource} together"
    last = max((t for t, _ in short), key=lambda t: t.path)
    at = (*last.path, "queue", "guarantee", cluster.policy_key(resource))
    these = "these guarantees" if len(short) > 1 else "the guarantee"
    if not fewest:
        return diag(
            "guarantee-exceeds-capacity",
            f"{who}, but the pools {they} can use have {have} ({listed})",
            at,
            hint=f"lower {these} by {asked - have} in all, or add nodes to those pools; a guarantee the pools cannot "
            "hold is never kept",
        )
    sized = [pools[n] for n in used if pools[n].min_nodes < pools[n].max_nodes]
    sizes = listing([f"{p.name} {p.size}" for p in sized], SHOWN)
    return diag(
        "guarantee-waits-for-scale-up",
        f"{who}, but the pools {they} can use have {have} at their fewest nodes ({listed}; {sizes}): it is kept "
        "only once they scale up",
        at,
        hint=f"raise the minNodes of {listing([p.name for p in sized], SHOWN)} until they hold {asked} {resource} (now "
        f"{have}), if {these} must hold at once",
    )


def _short_groups(groups: dict[frozenset[str], Fraction], limits: dict[str, Fraction | None]) -> list[frozenset[str]]:
    """The demand groups on the source side of a minimum cut of source -> group (its demand) -> each pool it
    reaches (unbounded) -> sink (the pool's capacity; unbounded when unknown); empty when every demand flows."""
    order = sorted(groups, key=sorted)
    source, sink = ("source",), ("sink",)
    residual: dict[tuple, dict[tuple, Fraction | None]] = {source: {}, sink: {}}

    def edge(a: tuple, b: tuple, amount: Fraction | None) -> None:
        residual.setdefault(a, {})[b] = amount
        residual.setdefault(b, {}).setdefault(a, Fraction(0))

    for i, group in enumerate(order):
        edge(source, ("group", i), groups[group])
        for name in sorted(group):
            edge(("group", i), ("pool", name), None)
    for name, limit in sorted(limits.items()):
        edge(("pool", name), sink, limit)

    def room(a: tuple, b: tuple) -> bool:
        amount = residual[a][b]
        return amount is None or amount > 0

    while True:  # Edmonds-Karp: shortest augmenting paths
        came_from = {source: source}
        queue = deque([source])
        while queue and sink not in came_from:
            node = queue.popleft()
            for nxt in residual[node]:
                if nxt not in came_from and room(node, nxt):
                    came_from[nxt] = node
                    queue.append(nxt)
        if sink not in came_from:
            break
        path, node = [], sink
        while node != source:
            path.append((came_from[node], node))
            node = came_from[node]
        push = min(residual[a][b] for a, b in path if residual[a][b] is not None)  # source edges are bounded
        for a, b in path:
            if residual[a][b] is not None:
                residual[a][b] -= push
            if residual[b][a] is not None:
                residual[b][a] += push
    return [group for i, group in enumerate(order) if ("group", i) in came_from]


def quota_totals(cluster: Cluster, total: dict[str, Quantity]) -> dict[str, tuple[Quantity, Quantity]]:
    """Resource -> (what the namespace quotas request in all, what the cluster has), for every resource with
    both a stated capacity and a quota (a tenant's quota counts once per namespace)."""
    out = {}
    for resource, available in total.items():
        key = dra.quota_key(resource)
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
                f"namespace quotas allow {allowed} {dra.quota_key(resource)} in total, "
                f"{ratio:.2f}x the cluster's {available}",
                ("spec", "tenants"),
                hint="fine if intended (not every tenant peaks at once): queues, not quotas, then decide who waits; "
                f"if not, lower the tenants' quotas to {available} in all (a tenant's quota counts once per namespace)",
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

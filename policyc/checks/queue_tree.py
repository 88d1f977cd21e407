"""Hierarchical queues (when any tenant names a parent), as every scheduler backend's tree needs them: no cycles,
children's guarantees and deserved within their parent's, capabilities within every ancestor's. A backend whose
scheduler takes jobs only in leaf queues adds `leaf_queues_only` to its checks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster, Resources, Tenant
from policyc.k8s.quantity import Quantity


def _ancestors(tenant: Tenant, by_name: Mapping[str, Tenant]) -> list[Tenant] | None:
    """Parents of `tenant`, nearest first; None on a cycle."""
    out: list[Tenant] = []
    seen = {tenant.name}
    current = tenant
    while current.queue.parent and current.queue.parent in by_name:
        current = by_name[current.queue.parent]
        if current.name in seen:
            return None
        seen.add(current.name)
        out.append(current)
    return out


def _cycle(tenant: Tenant, by_name: Mapping[str, Tenant]) -> list[str]:
    """The names on the parent cycle that `tenant` leads into."""
    path, current = [], tenant
    while current.name not in path:
        path.append(current.name)
        current = by_name[current.queue.parent]
    return path[path.index(current.name) :]


def total(tenants: list[Tenant], field: str) -> Resources:
    """The sum of the tenants' queue `field` (guarantee, deserved ...), per resource any of them names."""
    out: dict[str, Quantity] = {}
    for tenant in tenants:
        for resource, amount in getattr(tenant.queue, field).items():
            out[resource] = out[resource] + amount if resource in out else amount
    return out


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    with_parent = [t for t in cluster.tenants if t.queue.parent]
    if not with_parent:
        return
    by_name = {t.name: t for t in cluster.tenants}
    cycles: set[frozenset[str]] = set()
    for t in with_parent:
        chain = _ancestors(t, by_name)
        if chain is None:
            cycle = _cycle(t, by_name)
            if frozenset(cycle) in cycles:
                continue
            cycles.add(frozenset(cycle))
            yield diag(
                "queue-cycle",
                f"queue parents form a cycle: {' -> '.join([*cycle, cycle[0]])}",
                (*t.path, "queue", "parent"),
                hint=f"queue parents must form a tree: remove the parent of one of {', '.join(sorted(cycle))}",
            )
            continue
        for resource, cap in t.queue.capability.items():
            bound = next((a for a in chain if resource in a.queue.capability), None)
            if bound is not None and cap > bound.queue.capability[resource]:
                yield diag(
                    "child-capability-above-ancestor",
                    f"queue '{t.name}' caps {resource} at {cap}, above its ancestor '{bound.name}' "
                    f"({bound.queue.capability[resource]})",
                    (*t.path, "queue", "capability", cluster.policy_key(resource)),
                    hint=f"lower it to at most {bound.queue.capability[resource]}",
                )
    yield from _children_within_parents(cluster, by_name)


def leaf_queues_only(cluster: Cluster, scheduler: str) -> Iterator[Diagnostic]:
    """Workloads submit to leaf queues only: `scheduler` (its name, for the message) refuses the others' jobs."""
    parents = {t.queue.parent for t in cluster.tenants if t.queue.parent}
    for w in cluster.workloads:
        if w.tenant in parents:
            yield diag(
                "workload-in-parent-queue",
                f"workload '{w.name}' submits to queue '{w.tenant}', which has child queues; {scheduler} accepts "
                "jobs only in leaf queues",
                (*w.path, "tenant"),
                hint=f"run it as a tenant whose queue is a child of '{w.tenant}'",
            )


def _children_within_parents(cluster: Cluster, by_name: Mapping[str, Tenant]) -> Iterator[Diagnostic]:
    children: dict[str, list[Tenant]] = {}
    for t in cluster.tenants:
        if t.queue.parent in by_name:
            children.setdefault(t.queue.parent, []).append(t)
    for parent_name, kids in sorted(children.items()):
        parent = by_name[parent_name]
        written = any(q.queue.deserved_given for q in (parent, *kids))
        # deserved defaults to the guarantee: compared only when written, or it repeats the guarantee's error
        for field in ("guarantee", "deserved") if written else ("guarantee",):
            own = getattr(parent.queue, field)
            for resource, summed in total(kids, field).items():
                limit = own.get(resource, Quantity.from_value(0))
                if summed > limit:
                    names = ", ".join(k.name for k in kids if resource in getattr(k.queue, field))
                    yield diag(
                        "children-exceed-parent",
                        f"child queues of '{parent.name}' ({names}) have {field} {summed} {resource} in total, "
                        f"more than its {field} of {limit}",
                        (*parent.path, "queue", field),
                        hint=f"raise '{parent.name}' {field} to at least {summed}, or lower the children's",
                    )

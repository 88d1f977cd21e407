"""Queue rules every backend's queues need: guarantee <= deserved <= capability (a share above the cap, or a
guarantee above the share, is refused by a scheduler's webhook or makes a negative borrowing limit)."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from policyc.diagnostics import Diagnostic, Path, diag, where
from policyc.ir import Cluster, Queue, Resources, Tenant

UNKNOWN_RESOURCE_HINT = "remove it, or quota it per namespace (tenants[].quota)"


def unknown_queue_resources(cluster: Cluster, known: Collection[str]) -> Iterator[tuple[Tenant, str, str, Path]]:
    """(tenant, field, resource, location) of each guarantee or capability resource outside `known`: those a
    backend's queues cannot hold."""
    for t in cluster.tenants:
        for field in ("guarantee", "capability"):
            for resource in getattr(t.queue, field):
                if resource not in known:
                    yield t, field, resource, (*t.path, "queue", field, cluster.policy_key(resource))


def deserved_apart(q: Queue) -> Resources:
    """What the queue's written deserved share sets other than its guarantee (resource -> amount): what a backend
    whose queues know only the guarantee cannot compile."""
    return {r: a for r, a in q.deserved_given.items() if q.guarantee.get(r) != a}


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    for t in cluster.tenants:
        q, base = t.queue, (*t.path, "queue")
        for resource, guarantee in q.guarantee.items():
            deserved, key = q.deserved[resource], cluster.policy_key(resource)
            if guarantee > deserved:
                path = (*base, "deserved", key)
                yield diag(
                    "guarantee-above-deserved",
                    f"{where(path)} is {deserved}, below the guarantee of {guarantee}",
                    path,
                    hint=f"raise deserved to at least {guarantee} or lower the guarantee",
                )
        for resource, deserved in q.deserved.items():
            cap, key = q.capability.get(resource), cluster.policy_key(resource)
            if cap is not None and deserved > cap:
                field = "guarantee" if q.guarantee.get(resource) == deserved else "deserved"
                path = (*base, field, key)
                yield diag(
                    "deserved-above-capability",
                    f"{where(path)} is {deserved}, above the capability of {cap}",
                    path,
                    hint=f"raise capability to at least {deserved} or lower {field}",
                )

"""Queue rules: guarantee <= deserved <= capability (Volcano's webhook; with Kueue, borrowingLimit = capability -
guarantee must not be negative); and, for Volcano only, no queue named like one Volcano manages itself."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag, where
from policyc.ir import Cluster

RESERVED_QUEUES = ("root", "default")


def volcano_names(cluster: Cluster) -> Iterator[Diagnostic]:
    for t in cluster.tenants:
        if t.name in RESERVED_QUEUES:
            yield diag(
                "reserved-queue-name",
                f"tenant '{t.name}' would own the queue '{t.name}', which Volcano creates and manages itself",
                (*t.path, "name"),
                hint="give the tenant another name",
            )


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

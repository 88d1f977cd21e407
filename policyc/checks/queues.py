"""Queue rules every backend's queues need: guarantee <= deserved <= capability (a share above the cap, or a
guarantee above the share, is refused by a scheduler's webhook or makes a negative borrowing limit)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag, where
from policyc.ir import Cluster


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

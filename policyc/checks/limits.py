"""Quantities that must be whole numbers, and LimitRange bounds that must nest (min <= request <= limit <= max)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal

from policyc.diagnostics import Diagnostic, Path, diag, where
from policyc.ir import Cluster, Resources
from policyc.k8s.objects import QUOTA_OBJECT_COUNTS
from policyc.k8s.quantity import Quantity


def _whole_only(resource: str) -> bool:
    """Extended resources (GPUs ...) and object counts come only in whole units."""
    return "/" in resource or resource in QUOTA_OBJECT_COUNTS or resource.startswith("count/")


def _decimal(q: Quantity) -> str:
    """A fractional quantity as people write it (0.5, not Kubernetes' canonical 500m)."""
    value = q.value
    return format(Decimal(value.numerator) / Decimal(value.denominator), "f")


def _not_whole(cluster: Cluster, resource: str, amount: Quantity, path: Path) -> Diagnostic:
    hint = f"use {math.ceil(amount.value)}"
    if resource == cluster.gpu_resource:
        hint += " (share GPUs with MIG or time-slicing, not with fractions)"
    return diag(
        "non-integer-quantity", f"{where(path)} is {_decimal(amount)}, but must be a whole number", path, hint=hint
    )


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    for t in cluster.tenants:
        q = t.queue
        for field, resources in (("guarantee", q.guarantee), ("capability", q.capability)):
            yield from _whole(cluster, resources, (*t.path, "queue", field))
        yield from _whole(cluster, q.deserved_given, (*t.path, "queue", "deserved"))
        if t.quota is not None:
            for key, amount in t.quota.hard.items():
                prefix, _, resource = key.partition(".") if key.startswith(("requests.", "limits.")) else ("", "", key)
                if _whole_only(resource) and not amount.is_integer():
                    path = (
                        (*t.path, "quota", prefix, cluster.policy_key(resource))
                        if prefix
                        else (*t.path, "quota", "objects", key)
                    )
                    yield _not_whole(cluster, resource, amount, path)
        if t.limit_range is not None:
            lr, base = t.limit_range, (*t.path, "limitRange")
            chain = (("min", lr.min), ("defaultRequest", lr.default_request), ("default", lr.default), ("max", lr.max))
            for field, resources in chain:
                yield from _whole(cluster, resources, (*base, field))
            for (low_name, low), (high_name, high) in _pairs(chain):
                for resource, amount in low.items():
                    if resource in high and amount > high[resource]:
                        path = (*base, low_name, cluster.policy_key(resource))
                        yield diag(
                            "limit-range-inconsistent",
                            f"{where(path)} is {amount}, above {high_name} ({high[resource]})",
                            path,
                            hint=f"Kubernetes requires {' <= '.join(name for name, _ in chain)}",
                        )


def _whole(cluster: Cluster, resources: Resources, base: Path) -> Iterator[Diagnostic]:
    for resource, amount in resources.items():
        if _whole_only(resource) and not amount.is_integer():
            yield _not_whole(cluster, resource, amount, (*base, cluster.policy_key(resource)))


def _pairs(chain: tuple) -> Iterator[tuple]:
    """Every ordered pair (lower, higher) of the chain, so that a gap (min vs max) is still compared."""
    for i, low in enumerate(chain):
        for high in chain[i + 1 :]:
            yield low, high

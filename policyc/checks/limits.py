"""Quantities that must be whole numbers (GPUs and other extended resources, object counts), byte amounts with a
fraction of a byte (a warning: `512m` of memory is half a byte, surely meant as 512Mi), memory in decimal units (a
warning: `32G` is 7 % less than the 32Gi surely meant), and LimitRange bounds that must nest (min <= request <=
limit <= max)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from decimal import Decimal

from policyc.checks.written import Written
from policyc.diagnostics import Diagnostic, Path, diag, where
from policyc.gpu import dra
from policyc.ir import Cluster, LimitRange, Resources, once_per_build
from policyc.k8s.objects import QUOTA_OBJECT_COUNTS
from policyc.k8s.quantity import Quantity

BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")


def _whole_only(resource: str) -> bool:
    """Extended resources (GPUs ...) and object counts come only in whole units."""
    return "/" in resource or resource in QUOTA_OBJECT_COUNTS or resource.startswith("count/")


def _in_bytes(resource: str) -> bool:
    return resource in BYTE_RESOURCES or resource.startswith("hugepages-")


def _decimal(q: Quantity) -> str:
    """A fractional quantity as people write it (0.5, not Kubernetes' canonical 500m)."""
    value = q.value
    return format(Decimal(value.numerator) / Decimal(value.denominator), "f")


def _not_whole(cluster: Cluster, resource: str, amount: Quantity, path: Path) -> Diagnostic:
    hint = f"use {math.ceil(amount.value)}"
    if resource in cluster.accelerators:
        hint += " (share GPUs with MIG or time-slicing, not with fractions)"
    return diag(
        "non-integer-quantity", f"{where(path)} is {_decimal(amount)}, but must be a whole number", path, hint=hint
    )


def _fractional_bytes(resource: str, amount: Quantity, path: Path) -> Diagnostic:
    return diag(
        "fractional-bytes",
        f"{where(path)} is {_decimal(amount)} bytes of {resource}, a fraction of a byte ('m' means milli, not mega)",
        path,
        hint=f"write {math.ceil(amount.value * 1000)}Mi for mebibytes or {math.ceil(amount.value * 1000)}M for "
        "megabytes"
        if amount.value < 1_000_000
        else f"write {math.ceil(amount.value)} bytes, or use Mi or Gi",
    )


@once_per_build
def amounts(cluster: Cluster) -> list[tuple[str, Quantity, Path]]:
    """(resource, amount, location) of every resource amount the policy states (two checks read them)."""
    return list(_amounts(cluster))


def _amounts(cluster: Cluster) -> Iterator[tuple[str, Quantity, Path]]:

    def each(resources: Resources, base: Path) -> Iterator[tuple[str, Quantity, Path]]:
        for resource, amount in resources.items():
            yield resource, amount, (*base, cluster.policy_key(resource))

    for p in cluster.pools:
        yield from each(p.allocatable, (*p.path, "allocatable"))
    for t in cluster.tenants:
        q = t.queue
        for field, resources in (
            ("guarantee", q.guarantee),
            ("capability", q.capability),
            ("deserved", q.deserved_given),
        ):
            yield from each(resources, (*t.path, "queue", field))
        if t.quota is not None:
            for key, amount in t.quota.hard.items():
                prefix, _, resource = key.partition(".") if key.startswith(("requests.", "limits.")) else ("", "", key)
                if dra.is_devices_key(key):  # a DRA tier's GPUs, from quota.requests
                    prefix, resource = "requests", key
                if prefix:
                    yield resource, amount, (*t.path, "quota", prefix, cluster.policy_key(resource))
                else:
                    yield key, amount, (*t.path, "quota", "objects", key)
            for cls, hard in t.quota.per_class.items():
                for key, amount in hard.items():
                    resource = key.removeprefix("requests.")
                    yield resource, amount, (*t.path, "quota", "perPriorityClass", cls, cluster.policy_key(resource))
        if t.limit_range is not None:
            for field, resources in _chain(t.limit_range):
                yield from each(resources, (*t.path, "limitRange", field))
    for w in cluster.workloads:
        if w.memory is not None:
            yield "memory", w.memory, (*w.path, "memory")
        yield from each(w.limits, (*w.path, "limits"))


_DECIMAL_MEMORY = re.compile(r"\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([MGTPE])")
_POWERS = "kMGTPE"
"""The SI prefixes by power: k is 10^3 (or 2^10 as Ki), M 10^6 (2^20) ..."""


def _memory_amounts(cluster: Cluster) -> Iterator[Path]:
    """Where the policy states an amount of memory: every `memory` of a resource map or a workload, the GPUs'
    memory, a workload's /dev/shm."""
    yield from (path for resource, _, path in amounts(cluster) if resource == "memory")
    yield from ((*p.path, "gpu", "memory") for p in cluster.pools if p.gpu_memory is not None)
    yield from ((*w.path, "shm") for w in cluster.workloads if w.shm is not None)


def decimal_memory(cluster: Cluster, written: Written) -> Iterator[Diagnostic]:
    """Memory written with a decimal suffix (M and up), where people almost always mean the binary one."""
    for path in _memory_amounts(cluster):
        text = written.get(path)
        match = _DECIMAL_MEMORY.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            continue
        number, prefix = match.groups()
        power = _POWERS.index(prefix) + 1
        decimal, binary = Decimal(number) * 1000**power, Decimal(number) * 1024**power
        less = round((1 - decimal / binary) * 100)
        yield diag(
            "decimal-memory-unit",
            f"{where(path)} is {text} = {_bytes(decimal)} bytes, {less} % less than {number}{prefix}i = "
            f"{_bytes(binary)} bytes ({prefix} counts in powers of 1000, {prefix}i in powers of 1024)",
            path,
            hint=f"write {number}{prefix}i if binary was meant; if {_bytes(decimal)} bytes was, write "
            f"{number}e{3 * power}",
        )


def _bytes(amount: Decimal) -> str:
    """A byte count with thousands separators (a fraction of a byte, which PC432 reports, rounded up)."""
    return f"{math.ceil(amount):,}"


def _chain(lr: LimitRange) -> tuple[tuple[str, Resources], ...]:
    return ("min", lr.min), ("defaultRequest", lr.default_request), ("default", lr.default), ("max", lr.max)


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    for resource, amount, path in amounts(cluster):
        if amount.is_integer():
            continue
        if _whole_only(resource):
            yield _not_whole(cluster, resource, amount, path)
        elif _in_bytes(resource):
            yield _fractional_bytes(resource, amount, path)
    for t in cluster.tenants:
        if t.limit_range is None:
            continue
        chain, base = _chain(t.limit_range), (*t.path, "limitRange")
        for (low_name, low), (high_name, high) in _pairs(chain):
            for resource, amount in low.items():
                if resource in high and amount > high[resource]:
                    path = (*base, low_name, cluster.policy_key(resource))
                    yield diag(
                        "limit-range-inconsistent",
                        f"{where(path)} is {amount}, above {high_name} ({high[resource]})",
                        path,
                        hint=f"Kubernetes requires {' <= '.join(name for name, _ in chain)}: lower it to at most "
                        f"{high[resource]}, or raise {high_name} to at least {amount}",
                    )


def _pairs(chain: tuple) -> Iterator[tuple]:
    """Every ordered pair (lower, higher) of the chain, so that a gap (min vs max) is still compared."""
    for i, low in enumerate(chain):
        for high in chain[i + 1 :]:
            yield low, high

"""KAI on a running cluster, read back for `policyc import`: a Queue per tenant (quota as the guarantee, limit as
the capability, over-quota weight as the weight; cpu in millicores and memory in megabytes turned back into the
policy's quantities), the parent Queue every top-level tenant sits under (named after the policy), and the
SchedulingShard's placement strategy."""

from __future__ import annotations

from fractions import Fraction

from policyc.backends.kai.backend import (
    BYTES_PER_MB,
    HELM_QUEUES,
    QUEUE_GROUP,
    SHARD_API_VERSION,
    SHARD_NAME,
    UNLIMITED,
)
from policyc.cluster.reading import ObjectRef, QueueRead, QueuesRead, bytes_text, cpu_text, number
from policyc.cluster.source import ClusterSource, Kind

QUEUE = Kind(QUEUE_GROUP, "Queue")
SHARD = Kind(SHARD_API_VERSION.rpartition("/")[0], "SchedulingShard")


def read_queues(source: ClusterSource, domain: str, gpu_resource: str) -> QueuesRead | None:
    queues = sorted(
        (q for q in source.objects(QUEUE) if q["metadata"].get("name") not in HELM_QUEUES),
        key=lambda q: q["metadata"]["name"],
    )
    if not queues:
        return None
    read = QueuesRead({"backend": "kai"})
    tenant_label = f"{domain}/tenant"
    roots = sorted(
        q["metadata"]["name"]
        for q in queues
        if tenant_label not in (q["metadata"].get("labels") or {}) and not (q.get("spec") or {}).get("parentQueue")
    )
    if len(roots) == 1:
        read.policy_name = roots[0]
    for obj in queues:
        read.expressed.add(ObjectRef.of(obj))
        if obj["metadata"]["name"] in roots:
            continue
        read.queues.append(_queue(obj, tenant_label, roots))
    for shard in source.objects(SHARD):
        if shard["metadata"].get("name") == SHARD_NAME:
            strategy = ((shard.get("spec") or {}).get("placementStrategy") or {}).get("gpu")
            if strategy in ("binpack", "spread"):
                read.scheduler["placement"] = strategy
                read.expressed.add(ObjectRef.of(shard))
    return read


def _queue(obj: dict, tenant_label: str, roots: list[str]) -> QueueRead:
    spec = obj.get("spec") or {}
    guarantee: dict = {}
    capability: dict = {}
    weights = set()
    for key, entry in sorted((spec.get("resources") or {}).items()):
        quota, limit = entry.get("quota", 0), entry.get("limit", UNLIMITED)
        if quota not in (0, None):
            guarantee[key] = _amount(key, quota)
        if limit not in (UNLIMITED, None):
            capability[key] = _amount(key, limit)
        weights.add(entry.get("overQuotaWeight", 1))
    settings: dict = {}
    guesses = {}
    weight = max(weights, default=1)
    if weight != 1:
        settings["weight"] = weight
    if len(weights) > 1:
        guesses["weight"] = "its resources have different over-quota weights; the largest"
    order = {"cpu": 0, "memory": 1, "gpu": 2}
    if guarantee:
        settings["guarantee"] = dict(sorted(guarantee.items(), key=lambda i: order.get(i[0], 3)))
    if capability:
        settings["capability"] = dict(sorted(capability.items(), key=lambda i: order.get(i[0], 3)))
    if spec.get("parentQueue") and spec["parentQueue"] not in roots:
        settings["parent"] = spec["parentQueue"]
    if spec.get("priority") is not None:
        settings["priority"] = spec["priority"]
    metadata = obj["metadata"]
    return QueueRead(
        metadata["name"], settings, tenant=(metadata.get("labels") or {}).get(tenant_label), guesses=guesses
    )


def _amount(key: str, value: object) -> object:
    """A KAI number as the policy writes it: cpu from millicores, memory from megabytes, GPUs as they are."""
    exact = Fraction(str(value))
    if key == "cpu":
        return cpu_text(exact)
    if key == "memory":
        return bytes_text(exact * BYTES_PER_MB)
    return number(value if exact.denominator != 1 else int(exact))

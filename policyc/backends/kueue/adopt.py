"""Kueue on a running cluster, read back for `policyc import`: a ClusterQueue per tenant (its nominal quotas summed
over its flavors as the guarantee, plus its borrowing limit as the capability, its fair-sharing weight), the
LocalQueues tying namespaces to it. ResourceFlavors and Cohorts follow from the pools and the queues: the policy
builds them again, and they are listed as carried over. The manager configuration's integrations tell which
workload kinds the classes run (their templates are never on the cluster)."""

from __future__ import annotations

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from policyc.backends.kueue.backend import (
    ALWAYS_INTEGRATED,
    FRAMEWORKS,
    GROUP,
    KUEUE_CONFIGMAP,
    KUEUE_KEY,
    KUEUE_NAMESPACE,
)
from policyc.backends.kueue.settings import DEFAULT_KINDS, GANG_KINDS
from policyc.cluster.reading import ObjectRef, QueueRead, QueuesRead, resources
from policyc.cluster.source import ClusterSource, Kind
from policyc.k8s.quantity import Quantity, QuantityError

CLUSTER_QUEUE = Kind(GROUP, "ClusterQueue")
LOCAL_QUEUE = Kind(GROUP, "LocalQueue")
ZERO = Quantity.from_value(0)
DERIVED = (Kind(GROUP, "ResourceFlavor"), Kind(GROUP, "Cohort"))
"""Kinds the policy builds from its pools and queues, not from a setting of its own."""


def read_queues(source: ClusterSource, domain: str, gpu_resource: str) -> QueuesRead | None:
    cluster_queues = sorted(source.objects(CLUSTER_QUEUE), key=lambda q: q["metadata"]["name"])
    if not cluster_queues:
        return None
    read = QueuesRead({"backend": "kueue"})
    namespaces: dict[str, list[str]] = {}
    for local in sorted(source.objects(LOCAL_QUEUE), key=lambda q: (q["metadata"].get("namespace", ""),)):
        target = (local.get("spec") or {}).get("clusterQueue")
        namespaces.setdefault(target, []).append(local["metadata"].get("namespace", ""))
        read.expressed.add(ObjectRef.of(local))
    unreclaimable = _unreclaimable(cluster_queues)
    for obj in cluster_queues:
        name = obj["metadata"]["name"]
        queue = _queue(obj, domain, gpu_resource)
        queue.namespaces = tuple(namespaces.get(name, ()))
        if name in unreclaimable:
            queue.settings["reclaimable"] = False
            if unreclaimable[name]:
                queue.guesses["reclaimable"] = unreclaimable[name]
        read.queues.append(queue)
        read.expressed.add(ObjectRef.of(obj))
    for kind in DERIVED:
        read.expressed.update(ObjectRef.of(obj) for obj in source.objects(kind))
    read.workload_kinds = _integrated_kinds(source)
    return read


def _integrated_kinds(source: ClusterSource) -> dict[str, str]:
    """The workload kinds the manager configuration's integrations show some class runs (policyc lists those the
    classes' kinds need, and `batch/job` always) -> the type of class that runs it."""
    for configmap in source.objects(Kind("", "ConfigMap")):
        metadata = configmap["metadata"]
        if (metadata.get("namespace"), metadata.get("name")) == (KUEUE_NAMESPACE, KUEUE_CONFIGMAP):
            try:
                conf = YAML(typ="safe").load((configmap.get("data") or {}).get(KUEUE_KEY) or "") or {}
                listed = set((conf.get("integrations") or {}).get("frameworks") or ())
            except (YAMLError, AttributeError):
                return {}  # not Kueue's configuration: the policy's build replaces it (listed as policyc's own)
            types = {kind: type_ for type_, kind in DEFAULT_KINDS.items()}
            return {
                kind: types.get(kind, "training" if kind in GANG_KINDS else "inference")
                for kind, needs in FRAMEWORKS.items()
                if set(needs) <= listed and not set(needs) <= set(ALWAYS_INTEGRATED)
            }
    return {}


def _queue(obj: dict, domain: str, gpu_resource: str) -> QueueRead:
    spec = obj.get("spec") or {}
    guesses: dict[str, str] = {}
    nominal, borrowing = _quotas(spec, guesses)
    guarantee = {r: q for r, q in nominal.items() if not q.is_zero()}
    capability = {r: nominal.get(r, ZERO) + extra for r, extra in borrowing.items()}
    settings: dict = {}
    weight = str((spec.get("fairSharing") or {}).get("weight", "1"))
    if weight != "1":
        settings["weight"] = int(weight) if weight.isdigit() else weight
    if guarantee:
        settings["guarantee"] = resources({r: str(q) for r, q in guarantee.items()}, gpu_resource)
    if capability:
        settings["capability"] = resources({r: str(q) for r, q in capability.items()}, gpu_resource)
    metadata = obj["metadata"]
    tenant = (metadata.get("labels") or {}).get(f"{domain}/tenant")
    return QueueRead(metadata["name"], settings, tenant=tenant, guesses=guesses)


def _quotas(spec: dict, guesses: dict[str, str]) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """(resource -> nominal quota summed over the queue's flavors, resource -> borrowing limit)."""
    nominal: dict[str, Quantity] = {}
    borrowing: dict[str, Quantity] = {}
    entries = [
        entry
        for group in spec.get("resourceGroups") or []
        for flavor in group.get("flavors") or []
        for entry in flavor.get("resources") or []
    ]
    for entry in entries:
        try:
            nominal[entry["name"]] = nominal.get(entry["name"], ZERO) + Quantity.from_json(entry.get("nominalQuota"))
            if "borrowingLimit" in entry:
                borrowing[entry["name"]] = Quantity.from_json(entry["borrowingLimit"])
        except (QuantityError, KeyError):
            guesses["guarantee"] = "a flavor's resource without a name or a readable quota was left out"
    return nominal, borrowing


def _unreclaimable(cluster_queues: list[dict]) -> dict[str, str]:
    """Queues whose borrowed workloads other queues may not reclaim -> '' where that is certain, else why it was
    guessed. Kueue cannot exempt one queue from reclaim: a cohort protects its other queues' workloads instead
    (`reclaimWithinCohort: LowerPriority` on every queue but the one not reclaimable; on all when two are)."""
    by_cohort: dict[str, list[tuple[str, str]]] = {}
    for obj in cluster_queues:
        spec = obj.get("spec") or {}
        reclaim = (spec.get("preemption") or {}).get("reclaimWithinCohort", "Never")
        by_cohort.setdefault(spec.get("cohortName", ""), []).append((obj["metadata"]["name"], reclaim))
    out: dict[str, str] = {}
    for members in by_cohort.values():
        protected = [name for name, reclaim in members if reclaim == "LowerPriority"]
        if len(members) > 1 and len(protected) == len(members) - 1:
            out.update({name: "" for name, reclaim in members if reclaim != "LowerPriority"})
        elif len(members) > 1 and len(protected) == len(members):
            why = "every queue of its cohort reclaims only lower priorities: taken as two or more not reclaimable"
            out.update(dict.fromkeys(protected, why))
    return out

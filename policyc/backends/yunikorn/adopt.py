"""YuniKorn on a running cluster, read back for `policyc import`: the queues of `queues.yaml` in the ConfigMap
yunikorn-configs (guaranteed and max resources, preemption and priority properties, nesting as parents) and the
partition's node sort policy as the placement. What only pods carry (the gang style, the classes YuniKorn must not
preempt) is not on the cluster's objects: the import says so."""

from __future__ import annotations

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from policyc.backends.yunikorn.backend import CONFIG_KEY, CONFIGMAP, NODE_SORT, RESOURCE_NAMES, ROOT
from policyc.cluster.reading import ObjectRef, QueueRead, QueuesRead, resources
from policyc.cluster.source import ClusterSource, Kind

PLACEMENTS = {sort: placement for placement, sort in NODE_SORT.items()}
POLICY_NAMES = {name: policy for policy, name in RESOURCE_NAMES.items()}
"""YuniKorn's resource name -> the policy's (vcore -> cpu)."""


def read_queues(source: ClusterSource, domain: str, gpu_resource: str) -> QueuesRead | None:
    configmap = next((c for c in source.objects(Kind("", "ConfigMap")) if c["metadata"].get("name") == CONFIGMAP), None)
    if configmap is None or CONFIG_KEY not in (configmap.get("data") or {}):
        return None
    read = QueuesRead({"backend": "yunikorn"})
    ref = ObjectRef.of(configmap)
    try:
        conf = YAML(typ="safe").load(configmap["data"][CONFIG_KEY])
        [partition, *others] = conf["partitions"]
        roots = [q for q in partition.get("queues") or [] if q.get("name") == ROOT]
    except (YAMLError, KeyError, TypeError, ValueError):
        read.unexpressed[ref] = f"{CONFIG_KEY} is not a YuniKorn queue configuration with one partition"
        return read
    if others:
        read.unexpressed[ref] = "more than one partition: the policy writes one; only the first is imported"
    sort = ((partition.get("nodesortpolicy") or {}).get("type")) or "fair"
    read.scheduler["placement"] = PLACEMENTS.get(sort, "binpack")
    if sort not in PLACEMENTS:
        read.guesses["placement"] = f"node sort policy {sort} has no equivalent: binpack"
    read.guesses["backend"] = "gangStyle and nonPreemptibleClasses are on pods, not on the cluster's objects: defaults"
    sorts = set()
    for root in roots:
        for queue in root.get("queues") or []:
            _walk(queue, None, read, gpu_resource, sorts)
    if sorts - {"fifo"}:
        read.scheduler["applicationSort"] = sorted(sorts - {"fifo"})[0]
    read.expressed.add(ref)
    return read


def _walk(queue: dict, parent: str | None, read: QueuesRead, gpu_resource: str, sorts: set[str]) -> None:
    """One queue of queues.yaml and, below it, its children (each a tenant whose parent it is)."""
    limits = queue.get("resources") or {}
    settings: dict = {}
    guarantee = resources(_named(limits.get("guaranteed")), gpu_resource)
    if guarantee:
        settings["guarantee"] = guarantee
    capability = resources(_named(limits.get("max")), gpu_resource)
    if capability:
        settings["capability"] = capability
    properties = queue.get("properties") or {}
    if properties.get("preemption.policy") == "disabled":
        settings["reclaimable"] = False
    if "priority.offset" in properties:
        settings["priority"] = int(properties["priority.offset"])
    if "application.sort.policy" in properties:
        sorts.add(str(properties["application.sort.policy"]))
    if parent:
        settings["parent"] = parent
    read.queues.append(QueueRead(str(queue.get("name")), settings))
    for child in queue.get("queues") or []:
        _walk(child, str(queue.get("name")), read, gpu_resource, sorts)


def _named(amounts: dict | None) -> dict:
    return {POLICY_NAMES.get(name, name): value for name, value in (amounts or {}).items()}

"""Volcano on a running cluster, read back for `policyc import`: its Queues as tenants' queues, and
volcano-scheduler.conf as `spec.scheduler` (the actions, the queue plugin, the placement plugin and any plugin's
own arguments)."""

from __future__ import annotations

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from policyc.backends.volcano.backend import CONFIG_KEY, CONFIGMAP_NAME, QUEUE_GROUP
from policyc.cluster.reading import ObjectRef, QueueRead, QueuesRead, resources
from policyc.cluster.source import ClusterSource, Kind

QUEUE = Kind(QUEUE_GROUP, "Queue")
BUILT_IN_QUEUES = ("root", "default")
"""Queues Volcano creates itself."""
SHIPPED_PLUGINS = ("priority", "gang", "conformance", "overcommit", "drf", "predicates", "nodeorder")
"""Plugins of Volcano's shipped tiers, which the policy's settings always write."""
PLACEMENT_PLUGINS = {"binpack": "binpack", "resource-strategy-fit": "spread"}
QUEUE_PLUGINS = ("proportion", "capacity")


def read_queues(source: ClusterSource, domain: str, gpu_resource: str) -> QueuesRead | None:
    queues = [q for q in source.objects(QUEUE) if q["metadata"].get("name") not in BUILT_IN_QUEUES]
    if not queues:
        return None
    read = QueuesRead({"backend": "volcano"})
    for obj in sorted(queues, key=lambda q: q["metadata"]["name"]):
        read.queues.append(_queue(obj, domain, gpu_resource))
        read.expressed.add(ObjectRef.of(obj))
    for configmap in source.objects(Kind("", "ConfigMap")):
        if configmap["metadata"].get("name") == CONFIGMAP_NAME and CONFIG_KEY in (configmap.get("data") or {}):
            _scheduler(configmap, read)
    return read


def _queue(obj: dict, domain: str, gpu_resource: str) -> QueueRead:
    spec = obj.get("spec") or {}
    settings: dict = {}
    if spec.get("weight", 1) != 1:
        settings["weight"] = spec["weight"]
    guarantee = resources((spec.get("guarantee") or {}).get("resource") or {}, gpu_resource)
    if guarantee:
        settings["guarantee"] = guarantee
    deserved = resources(spec.get("deserved") or {}, gpu_resource)
    if deserved and deserved != guarantee:
        settings["deserved"] = deserved
    capability = resources(spec.get("capability") or {}, gpu_resource)
    if capability:
        settings["capability"] = capability
    if spec.get("reclaimable") is False:
        settings["reclaimable"] = False
    if spec.get("parent") not in (None, "", "root"):
        settings["parent"] = spec["parent"]
    if spec.get("priority") is not None:
        settings["priority"] = spec["priority"]
    metadata = obj["metadata"]
    return QueueRead(metadata["name"], settings, tenant=(metadata.get("labels") or {}).get(f"{domain}/tenant"))


def _scheduler(configmap: dict, read: QueuesRead) -> None:
    """spec.scheduler from volcano-scheduler.conf; a conf that is not YAML is listed as not expressed."""
    ref = ObjectRef.of(configmap)
    try:
        conf = YAML(typ="safe").load(configmap["data"][CONFIG_KEY])
        plugins = [p for tier in conf.get("tiers") or [] for p in tier.get("plugins") or []]
    except (YAMLError, AttributeError, TypeError):
        read.unexpressed[ref] = f"{CONFIG_KEY} is not a Volcano scheduler configuration"
        return
    scheduler = read.scheduler
    if conf.get("actions"):
        scheduler["actions"] = [a.strip() for a in str(conf["actions"]).split(",") if a.strip()]
    names = [p.get("name") for p in plugins]
    scheduler["queuePlugin"] = next((n for n in names if n in QUEUE_PLUGINS), "proportion")
    placement = next((PLACEMENT_PLUGINS[n] for n in names if n in PLACEMENT_PLUGINS), None)
    if placement is None:
        read.guesses["placement"] = "no binpack or resource-strategy-fit plugin in the scheduler's conf: binpack"
        placement = "binpack"
    scheduler["placement"] = placement
    extra = [
        p
        for p in plugins
        if p.get("name") not in (*PLACEMENT_PLUGINS, *QUEUE_PLUGINS)
        and (p.get("name") not in SHIPPED_PLUGINS or set(p) - {"name", "enablePreemptable"})
    ]
    if extra:
        scheduler["plugins"] = extra
    read.expressed.add(ref)

"""The sized provisioner on a running cluster, for `policyc import`: a pool per `sized-<pool>` ConfigMap, its size
from the ConfigMap's `min` and `max`. Its nodes' labels and taints are in no object of its own: the pool is read with
the pool label alone (usage, GPUs and the rest guessed by the import)."""

from __future__ import annotations

from policyc.cluster.reading import ObjectRef, PoolsRead, SizedPoolRead, template_node
from policyc.cluster.source import ClusterSource, Kind
from policyc.ir import LabelKeys

UNSEEN = "the pools' labels, taints and GPUs (its ConfigMaps hold the size alone)"
PREFIX = "sized-"


def read_pools(source: ClusterSource, keys: LabelKeys) -> PoolsRead:
    read = PoolsRead()
    for obj in sorted(source.objects(Kind("", "ConfigMap")), key=lambda o: o["metadata"]["name"]):
        data = obj.get("data") or {}
        if not obj["metadata"]["name"].startswith(PREFIX) or not {"min", "max"} <= set(data):
            continue
        name = obj["metadata"]["name"].removeprefix(PREFIX)
        node = template_node(name, {keys.pool: name}, [], {})
        size = {"minNodes": int(data["min"]), "maxNodes": int(data["max"])}
        read.pools.append(SizedPoolRead(node, size, {}, {"gpu": UNSEEN}))
        read.expressed.add(ObjectRef.of(obj))
        if data.get("class", "default") != "default":
            read.settings["className"] = data["class"]
    return read

"""Karpenter on a running cluster, read back for `policyc import`: a pool per policyc NodePool. Its template gives
the pool's labels and taints (the product taint its GPU product), its limits the most nodes (`maxNodes`) and the
cards per node (the GPU limit over the nodes), its requirements the instances, capacity types and zones, its
nodeClassRef the node class, its disruption the time a node stays empty (`consolidateAfter`)."""

from __future__ import annotations

from collections import Counter

from policyc.cluster.reading import ObjectRef, PoolsRead, SizedPoolRead, template_node
from policyc.cluster.source import ClusterSource, Kind
from policyc.ir import LabelKeys
from policyc.k8s.objects import MANAGED_BY
from policyc.provisioners.karpenter.backend import API_VERSION, DEFAULT_NODE_CLASS, NODEPOOL_PREFIX
from policyc.provisioners.karpenter.label_rules import CAPACITY_TYPE, GPU_COUNT, GPU_NAME, INSTANCE_TYPE, ZONE
from policyc.provisioners.karpenter.settings import KarpenterPoolSettings, KarpenterSettings

NODE_POOL = Kind(API_VERSION.partition("/")[0], "NodePool")
UNSEEN = "the nodes' allocatable cpu and memory (Karpenter counts an instance's capacity) and Karpenter's version"
_OWN_KEYS = {INSTANCE_TYPE: "instanceTypes", CAPACITY_TYPE: "capacityTypes", ZONE: "zones"}
"""Requirements policyc writes from a field of the pool's block (`In`): the key -> the field."""


def read_pools(source: ClusterSource, keys: LabelKeys) -> PoolsRead:
    read = PoolsRead()
    classes: dict[str, tuple[str, str, str]] = {}
    waits: list[str] = []
    for obj in sorted(source.objects(NODE_POOL), key=lambda o: o["metadata"]["name"]):
        if (obj["metadata"].get("labels") or {}).get(MANAGED_BY) != "policyc":
            continue  # not policyc's: listed as not expressed
        spec = obj.get("spec") or {}
        pool = _pool(obj["metadata"]["name"], spec, keys)
        ref = ((spec.get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
        classes[pool.node["metadata"]["name"]] = (ref.get("group", ""), ref.get("kind", ""), ref.get("name", ""))
        waits.append(str((spec.get("disruption") or {}).get("consolidateAfter", "")))
        read.pools.append(pool)
        read.expressed.add(ObjectRef.of(obj))
    _node_classes(read, classes)
    after = Counter(w for w in waits if w).most_common(1)
    if after and after[0][0] != KarpenterSettings.model_fields["consolidate_after"].default:
        read.settings["consolidateAfter"] = after[0][0]
    return read


def _pool(name: str, spec: dict, keys: LabelKeys) -> SizedPoolRead:
    """One NodePool's pool: the node its template makes (the cards per node: its GPU limit over its nodes)."""
    template = spec.get("template") or {}
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    pool_name = labels.setdefault(keys.pool, name.removeprefix(NODEPOOL_PREFIX))
    limits = dict(spec.get("limits") or {})
    limit = str(limits.pop("nodes", ""))
    nodes = int(limit) if limit.isdigit() else 0
    cards = {r: str(int(str(n)) // nodes) for r, n in limits.items() if "/" in r and nodes and str(n).isdigit()}
    template_spec = template.get("spec") or {}
    node = template_node(pool_name, labels, list(template_spec.get("taints") or []), cards)
    pool = SizedPoolRead(node, {"maxNodes": nodes or 1}, _pool_settings(spec, template_spec))
    if not nodes:
        pool.guesses["maxNodes"] = "its NodePool limits no number of nodes: how many it may make is not on the cluster"
    if not cards:
        pool.guesses["gpu"] = "its NodePool limits no GPUs: the GPUs per node are not on the cluster"
    return pool


def _pool_settings(spec: dict, template_spec: dict) -> dict:
    """The pool's block `karpenter`: its requirements (those of policyc's fields, then the others as written), its
    weight."""
    out: dict = {}
    further = []
    for requirement in template_spec.get("requirements") or []:
        key, values = requirement.get("key"), list(requirement.get("values") or ())
        if requirement.get("operator") == "In" and key in _OWN_KEYS and _OWN_KEYS[key] not in out:
            out[_OWN_KEYS[key]] = values
        elif requirement.get("operator") == "In" and key == GPU_NAME and len(values) == 1:
            out["gpuName"] = values[0]
        elif not (requirement.get("operator") == "In" and key == GPU_COUNT):  # follows from the GPUs per node
            written = {"key": key, "operator": requirement.get("operator")}
            written.update({k: requirement[k] for k in ("values", "minValues") if k in requirement})
            further.append(written)
    if out.get("capacityTypes") == KarpenterPoolSettings.model_fields["capacity_types"].default:
        del out["capacityTypes"]
    if further:
        out["requirements"] = further
    if spec.get("weight") is not None:
        out["weight"] = spec["weight"]
    return out


def _node_classes(read: PoolsRead, classes: dict[str, tuple[str, str, str]]) -> None:
    """The node class most pools name is the cluster's (unless it is the default); a pool naming another its own."""
    if not classes:
        return
    common = Counter(classes.values()).most_common(1)[0][0]
    if common != DEFAULT_NODE_CLASS:
        read.settings["nodeClass"] = _ref(common)
    for pool in read.pools:
        own = classes[pool.node["metadata"]["name"]]
        if own != common:
            pool.settings["nodeClass"] = _ref(own)


def _ref(ref: tuple[str, str, str]) -> dict:
    group, kind, name = ref
    out: dict = {"name": name}
    if (group, kind) != DEFAULT_NODE_CLASS[:2]:
        out.update(group=group, kind=kind)
    return out

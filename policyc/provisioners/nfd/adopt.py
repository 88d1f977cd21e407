"""Node Feature Discovery on a running cluster, read back for `policyc import`: a pool per policyc NodeFeatureRule
that matches hardware (a `pci.device` term; a rule matching node names is a pool of named nodes, read from its
nodes). The rule gives the pool's labels and taints (the product taint its GPU product) and its hardware: the PCI
vendor, devices and classes (where they are not those of the GPU vendor) and the further terms. How many nodes the
pool has and how many GPUs each are not in the rule: guessed (one node of one GPU) and said so."""

from __future__ import annotations

from policyc.cluster.reading import ObjectRef, PoolsRead, SizedPoolRead, template_node
from policyc.cluster.source import ClusterSource, Kind
from policyc.gpu.accelerators import VENDORS
from policyc.ir import LabelKeys
from policyc.k8s.nfd import NFD_API_VERSION, NODE_FEATURE_RULE
from policyc.k8s.objects import MANAGED_BY
from policyc.provisioners.nfd.backend import PCI_CLASSES, PCI_DEVICE, PCI_VENDORS
from policyc.provisioners.node_features import RULE_PREFIX

RULE = Kind(NFD_API_VERSION.partition("/")[0], NODE_FEATURE_RULE)
UNSEEN = "how many nodes a pool has and how many GPUs each (a rule matches hardware, whatever the count)"


def read_pools(source: ClusterSource, keys: LabelKeys) -> PoolsRead:
    read = PoolsRead()
    for obj in sorted(source.objects(RULE), key=lambda o: o["metadata"]["name"]):
        rules = (obj.get("spec") or {}).get("rules") or []
        if (obj["metadata"].get("labels") or {}).get(MANAGED_BY) != "policyc" or len(rules) != 1:
            continue
        [rule] = rules
        terms = rule.get("matchFeatures") or []
        pci = [t for t in terms if t.get("feature") == PCI_DEVICE]
        if len(pci) != 1:
            continue  # a pool of named nodes (policyc.provisioners.node_features.named), or not policyc's making
        labels = dict(rule.get("labels") or {})
        name = labels.setdefault(keys.pool, obj["metadata"]["name"].removeprefix(RULE_PREFIX))
        node = template_node(name, labels, list(rule.get("taints") or []), {})
        settings = _hardware(pci[0].get("matchExpressions") or {}, _vendor(node))
        further = [t for t in terms if t.get("feature") != PCI_DEVICE]
        if further:
            settings["features"] = further
        guesses = {"count": f"not on the cluster: {UNSEEN}", "gpu": "count not on the cluster: write the GPUs per node"}
        read.pools.append(SizedPoolRead(node, {"count": 1}, settings, guesses))
        read.expressed.add(ObjectRef.of(obj))
    return read


def _vendor(node: dict) -> str | None:
    """The GPU vendor whose product label the node carries (from its product taint)."""
    labels = node["metadata"]["labels"]
    return next((v.name for v in VENDORS.values() if v.product_label in labels), None)


def _hardware(expressions: dict, vendor: str | None) -> dict:
    """The block `nfd` from the `pci.device` term: what differs from the GPU vendor's PCI vendor and classes."""
    values = {attribute: list(e.get("value") or []) for attribute, e in expressions.items() if e.get("op") == "In"}
    out: dict = {}
    pci_vendor = values.get("vendor", [None])[0]
    if pci_vendor != PCI_VENDORS.get(vendor or ""):
        out["vendor"] = pci_vendor
    if values.get("device"):
        out["devices"] = values["device"]
    if values.get("class", []) != list(PCI_CLASSES.get(pci_vendor or "", ())):
        out["classes"] = values.get("class", [])
    return out

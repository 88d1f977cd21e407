"""The nfd provisioner's objects: a NodeFeatureRule per pool (`nfd/pools.yaml`), matching the pool's hardware.

A pool's match is its `Hardware`: a `pci.device` term (the PCI vendor, device IDs and class of its accelerators, all
of one device) and the further terms it states, all ANDed. The rule's object is named as a static pool's is
(`node_features.rule_name`), so a pool moved from static to nfd keeps its object: Argo CD updates its match in place.
"""

from __future__ import annotations

from dataclasses import dataclass

from policyc.artifacts import Artifact
from policyc.ir import Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.provisioners import chooses_no_labels, node_features
from policyc.provisioners.nfd.settings import FeatureTerm, NfdPoolSettings

NAME = "nfd"
REFERENCES: tuple[Reference, ...] = ()
PATH = "nfd/pools.yaml"
PCI_DEVICE = "pci.device"
"""NFD's feature of the node's PCI devices, one instance per device (attributes vendor, device, class, ...)."""
PCI_VENDORS = {"nvidia": "10de", "amd": "1002", "intel-gaudi": "1da3"}
"""A GPU vendor (`accelerators.VENDORS`) -> its PCI vendor ID as NFD reports it: NVIDIA's from NFD's docs, AMD's from
the node selector of ROCm/k8s-device-plugin's chart (`pci-0300_1002`), Intel Gaudi's (Habana) from Intel's NFD rule
(`pci-1da3`). Huawei's Ascend is not known here: its pools state `nfd.vendor`."""
PCI_CLASSES = {"10de": ("0300", "0302")}
"""A PCI vendor ID -> the PCI classes of its accelerators where known: NVIDIA's display and 3D controllers (NFD's
docs), so that no other of its devices matches."""


@dataclass(frozen=True, slots=True)
class Hardware:
    """What NFD recognises a pool's nodes by."""

    vendor: str | None
    """PCI vendor ID (None: no PCI term, only `features`)."""
    devices: tuple[str, ...]
    """PCI device IDs, any of them (empty: any device of the vendor)."""
    classes: tuple[str, ...]
    """PCI classes, any of them (empty: any class)."""
    features: tuple[FeatureTerm, ...]
    """Further terms, each the node must match too."""


def settings_of(pool: Pool) -> NfdPoolSettings:
    """The pool's block `nfd`, or its defaults when it states none."""
    return pool.provisioning_settings or NfdPoolSettings.model_construct()


def hardware(pool: Pool) -> Hardware:
    """The pool's hardware: what it states, else what policyc knows of its GPU vendor."""
    s = settings_of(pool)
    vendor = s.vendor if s.vendor is not None else PCI_VENDORS.get(pool.vendor or "")
    classes = s.classes if s.classes is not None else PCI_CLASSES.get(vendor or "", ())
    return Hardware(vendor, tuple(s.devices), tuple(classes), tuple(s.features))


def match_features(hw: Hardware) -> list[dict]:
    """The rule's matchFeatures: the `pci.device` term (vendor, then device and class where stated), then the further
    terms in order."""
    terms = []
    if hw.vendor is not None:
        expressions = {"vendor": {"op": "In", "value": [hw.vendor]}}
        if hw.devices:
            expressions["device"] = {"op": "In", "value": list(hw.devices)}
        if hw.classes:
            expressions["class"] = {"op": "In", "value": list(hw.classes)}
        terms.append({"feature": PCI_DEVICE, "matchExpressions": expressions})
    terms.extend(t.model_dump(by_alias=True, exclude_defaults=True) for t in hw.features)
    return terms


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    manifests = tuple(node_features.node_feature_rule(cluster, p, match_features(hardware(p))) for p in pools)
    return [Artifact(PATH, manifests, synced=True)]


def describe(cluster: Cluster, pool: Pool) -> str:
    return f"NodeFeatureRule {node_features.rule_name(pool)} by {matched(hardware(pool))}"


def matched(hw: Hardware) -> str:
    """The hardware in a few words: PCI vendor:device (or vendor:any), and the further terms' features."""
    words = []
    if hw.vendor is not None:
        words.append(f"PCI {hw.vendor}:{','.join(hw.devices) or 'any'}")
    words.extend(t.feature for t in hw.features)
    return " + ".join(words) or "nothing"


chosen_labels = chooses_no_labels

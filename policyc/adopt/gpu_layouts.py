"""How a cluster splits its GPUs, read back from the NVIDIA GPU Operator's configuration: the MIG manager's layouts
(`mig-configs`, in mig-parted's format, chosen per node by `nvidia.com/mig.config`) and the device plugin's sharing
configurations (`sharing.timeSlicing` or `sharing.mps`, chosen per node by `nvidia.com/device-plugin.config`), from
any ConfigMap that holds them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from policyc.cluster.reading import ObjectRef
from policyc.cluster.source import ClusterSource, Kind

SHARING = {"timeSlicing": "time-slicing", "mps": "mps"}
"""The device plugin's sharing block -> the policy's `gpu.sharing.strategy`."""


@dataclass
class Layouts:
    mig: dict[str, dict[str, int] | None] = field(default_factory=dict)
    """Layout name -> MIG devices on every card (None: a layout per group of cards, which is not read back)."""
    sharing: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Device plugin configuration name -> (strategy, replicas)."""
    read: set[ObjectRef] = field(default_factory=set)


def read_layouts(source: ClusterSource) -> Layouts:
    out = Layouts()
    for configmap in source.objects(Kind("", "ConfigMap")):
        for key, text in sorted((configmap.get("data") or {}).items()):
            try:
                document = YAML(typ="safe").load(str(text))
            except YAMLError:
                continue
            if not isinstance(document, dict):
                continue
            if _mig(document, out) or _sharing(key, document, out):
                out.read.add(ObjectRef.of(configmap))
    return out


def _mig(document: dict, out: Layouts) -> bool:
    configs = document.get("mig-configs")
    if not isinstance(configs, dict):
        return False
    for name, entries in configs.items():
        whole = isinstance(entries, list) and len(entries) == 1 and isinstance(entries[0], dict)
        devices = entries[0].get("mig-devices") if whole else None
        every_card = whole and entries[0].get("devices") == "all" and entries[0].get("mig-enabled")
        out.mig[str(name)] = dict(devices) if every_card and isinstance(devices, dict) and devices else None
    return True


def _sharing(name: str, document: dict, out: Layouts) -> bool:
    sharing = document.get("sharing")
    if not isinstance(sharing, dict):
        return False
    for block, strategy in SHARING.items():
        resources = (sharing.get(block) or {}).get("resources") or []
        replicas = {r.get("replicas") for r in resources if isinstance(r, dict)}
        if len(replicas) == 1 and isinstance(next(iter(replicas)), int):
            out.sharing[name] = (strategy, next(iter(replicas)))
            return True
    return False

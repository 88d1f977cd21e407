"""The GPU Operator's configuration for shared and partitioned cards, as ConfigMaps in its namespace
(`gpu-operator/`) and the Helm values that name them (`helm_values`, into `nodes/gpu-operator-values.yaml`).

- Sharing (time-slicing, MPS): the device plugin's configuration per layout (`version: v1`,
  `sharing.timeSlicing|mps.resources[{name, replicas}]`), selected per node by `nvidia.com/device-plugin.config`.
  The GPU resource keeps its name, so GPU Feature Discovery labels the product `<product>-SHARED`.
- MIG: the MIG manager's configuration (`version: v1`, `mig-configs`), a layout per pool selected by
  `nvidia.com/mig.config`, and the cluster's MIG strategy (`mig.strategy`).
"""

from __future__ import annotations

from policyc.artifacts import Artifact, Manifest
from policyc.gpu.accelerators import GPU_OPERATOR_NAMESPACE as NAMESPACE
from policyc.ir import DEVICE_PLUGIN_CONFIG, MIG_CONFIG, Cluster
from policyc.k8s.objects import metadata
from policyc.output import yaml_emitter

DEVICE_PLUGIN_CONFIG_MAP = "policyc-device-plugin-config"
MIG_CONFIG_MAP = "policyc-mig-parted-config"
MIG_CONFIG_KEY = "config.yaml"
SECTIONS = {"time-slicing": "timeSlicing", "mps": "mps"}
"""A sharing strategy's section in the device plugin's configuration."""


def sharing_configurations(cluster: Cluster) -> dict[str, dict]:
    """Layout name (the node label's value) -> the device plugin's configuration, for every shared pool."""
    out = {}
    for p in cluster.pools:
        if p.sharing is not None:
            strategy, replicas = p.sharing
            resources = [{"name": p.resource, "replicas": replicas}]
            out[p.labels[DEVICE_PLUGIN_CONFIG]] = {
                "version": "v1",
                "sharing": {SECTIONS[strategy]: {"resources": resources}},
            }
    return dict(sorted(out.items()))


def mig_configuration(cluster: Cluster) -> dict | None:
    """The MIG manager's configuration: a layout per partitioned pool, or None. A layout is one entry for all the
    cards, or one per group of cards, by their indices."""
    layouts = {}
    for p in cluster.pools:
        if p.mig is None:
            continue
        entries, first = [], 0
        for count, devices in p.mig.cards:
            cards: str | list[int] = "all" if len(p.mig.cards) == 1 else list(range(first, first + count))
            entries.append({"devices": cards, "mig-enabled": True, "mig-devices": dict(devices)})
            first += count
        layouts[p.labels[MIG_CONFIG]] = entries
    return {"version": "v1", "mig-configs": dict(sorted(layouts.items()))} if layouts else None


def helm_values(cluster: Cluster) -> dict:
    """The GPU Operator chart's values that make it read these ConfigMaps."""
    out: dict = {}
    if sharing_configurations(cluster):
        out["devicePlugin"] = {"config": {"name": DEVICE_PLUGIN_CONFIG_MAP}}
    if (strategy := cluster.mig_strategy) is not None:
        out["mig"] = {"strategy": strategy}
        out["migManager"] = {"config": {"name": MIG_CONFIG_MAP}}
    return out


def emit(cluster: Cluster) -> list[Artifact]:
    out = []
    if configs := sharing_configurations(cluster):
        data = {name: yaml_emitter.dump(config) for name, config in configs.items()}
        sources = tuple((*p.path, "gpu", "sharing") for p in cluster.pools if p.sharing is not None)
        out.append(
            _config_map(cluster, "gpu-operator/device-plugin-config.yaml", DEVICE_PLUGIN_CONFIG_MAP, data, sources)
        )
    if (config := mig_configuration(cluster)) is not None:
        data = {MIG_CONFIG_KEY: yaml_emitter.dump(config)}
        sources = tuple((*p.path, "gpu", "mig") for p in cluster.pools if p.mig is not None)
        out.append(_config_map(cluster, "gpu-operator/mig-parted-config.yaml", MIG_CONFIG_MAP, data, sources))
    return out


def _config_map(cluster: Cluster, path: str, name: str, data: dict[str, str], sources: tuple) -> Artifact:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(name, cluster.name, namespace=NAMESPACE),
           "data": data}  # fmt: skip
    return Artifact(path, (Manifest(obj, sources),), synced=True)

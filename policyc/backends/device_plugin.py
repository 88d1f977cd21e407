"""The NVIDIA device plugin's sharing configurations: each pool whose cards are shared (time-slicing or MPS)
selects, by the node label `nvidia.com/device-plugin.config`, a configuration of the ConfigMap policyc writes for
the GPU Operator (`gpu-operator/device-plugin-config.yaml`; its Helm values name it, `nodes/gpu-operator-values.yaml`).

Each configuration is the device plugin's file format (`version: v1`): the GPU resource, advertised `replicas`
times per card under its own name, so that GPU Feature Discovery labels the product `<product>-SHARED`.
"""

from __future__ import annotations

from policyc import yaml_emitter
from policyc.artifacts import Artifact, Manifest
from policyc.ir import DEVICE_PLUGIN_CONFIG, Cluster
from policyc.k8s.objects import metadata

CONFIG_MAP = "policyc-device-plugin-config"
NAMESPACE = "gpu-operator"
"""The GPU Operator's namespace, where its Helm chart is installed by its documented command."""
SECTIONS = {"time-slicing": "timeSlicing", "mps": "mps"}
"""A sharing strategy's section in the configuration file."""


def configurations(cluster: Cluster) -> dict[str, dict]:
    """Configuration name (the node label's value) -> the device plugin's configuration, for every shared pool."""
    out = {}
    for p in cluster.pools:
        if p.sharing is not None:
            strategy, replicas = p.sharing
            resources = [{"name": cluster.gpu_resource, "replicas": replicas}]
            out[p.labels[DEVICE_PLUGIN_CONFIG]] = {
                "version": "v1",
                "sharing": {SECTIONS[strategy]: {"resources": resources}},
            }
    return dict(sorted(out.items()))


def emit(cluster: Cluster) -> list[Artifact]:
    configs = configurations(cluster)
    if not configs:
        return []
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(CONFIG_MAP, cluster.name, namespace=NAMESPACE),
        "data": {name: yaml_emitter.dump(config) for name, config in configs.items()},
    }
    sources = tuple((*p.path, "gpu", "sharing") for p in cluster.pools if p.sharing is not None)
    return [Artifact("gpu-operator/device-plugin-config.yaml", (Manifest(obj, sources),), synced=True)]

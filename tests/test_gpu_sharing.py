"""GPU sharing (time-slicing, MPS): the device plugin's configuration per shared pool, the node label selecting it,
the GPU Operator's Helm value naming the ConfigMap, and capacity counted in shares."""

from __future__ import annotations

import json

from ruamel.yaml import YAML

import policyc

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: dev}
spec:
  kubernetesVersion: "1.36"
  domain: gpu.example.org
  gpuTiers:
    - {name: l4, products: [NVIDIA-L4]}
  nodePools:
    - name: l4-dev
      usage: inference
      nodes: ["l4-[1-4]"]
      gpu: {product: NVIDIA-L4, count: 2, sharing: {strategy: time-slicing, replicas: 4}}
      allocatable: {cpu: "64", memory: 256Gi}
    - name: l4-mps
      usage: inference
      nodes: ["l4m-[1-2]"]
      gpu: {product: NVIDIA-L4, count: 2, sharing: {strategy: mps, replicas: 2}}
      allocatable: {cpu: "64", memory: 256Gi}
    - name: l4-whole
      usage: inference
      nodes: ["l4w-[1-2]"]
      gpu: {product: NVIDIA-L4, count: 2}
      allocatable: {cpu: "64", memory: 256Gi}
  tenants:
    - name: dev
      namespaces: [dev]
      queue: {guarantee: {gpu: 40}}
  workloads:
    - {name: notebook, type: inference, tenant: dev, gpuTier: l4, gpus: 1, replicas: 44}
"""


def _compile(text: str = POLICY):
    return policyc.compile(text, name="dev.yaml")


def _yaml(data: bytes | str):
    return YAML(typ="safe").load(data)


def test_each_shared_pool_selects_its_device_plugin_configuration() -> None:
    comp = _compile()
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    config_map = _yaml(comp.files["gpu-operator/device-plugin-config.yaml"].data)
    assert (config_map["kind"], config_map["metadata"]["namespace"]) == ("ConfigMap", "gpu-operator")
    configs = {key: _yaml(text) for key, text in config_map["data"].items()}
    # The device plugin's own format (api/config/v1): version v1, one sharing section, replicas >= 2.
    assert configs == {
        "mps-2": {"version": "v1", "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}}},
        "time-slicing-4": {
            "version": "v1",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
        },
    }
    plan = json.loads(comp.files["nodes/plan.json"].data)
    selected = {p["name"]: p["labels"].get("nvidia.com/device-plugin.config") for p in plan["pools"]}
    assert selected == {"l4-dev": "time-slicing-4", "l4-mps": "mps-2", "l4-whole": None}
    values = _yaml(comp.files["nodes/gpu-operator-values.yaml"].data)
    assert values["devicePlugin"] == {"config": {"name": "policyc-device-plugin-config"}}


def test_capacity_counts_the_shares() -> None:
    # 4 nodes x 2 cards x 4 + 2 x 2 x 2 + 2 x 2 = 44 GPU devices: 44 one-GPU pods fit, 45 do not.
    assert _compile().ok
    errors = _compile(POLICY.replace("replicas: 44}", "replicas: 45}")).report.errors
    assert [(d.code, d.path) for d in errors] == [("PC426", ("spec", "workloads", 0, "replicas"))]
    assert "hold at most 44 such pods" in errors[0].message


def test_no_configuration_without_sharing() -> None:
    text = POLICY.replace(", sharing: {strategy: time-slicing, replicas: 4}", "").replace(
        ", sharing: {strategy: mps, replicas: 2}", ""
    )
    comp = _compile(
        text.replace("replicas: 44}", "replicas: 12}").replace("guarantee: {gpu: 40}", "guarantee: {gpu: 12}")
    )
    assert comp.ok and "gpu-operator/device-plugin-config.yaml" not in comp.files
    assert "devicePlugin" not in _yaml(comp.files["nodes/gpu-operator-values.yaml"].data)


def test_several_gpus_per_pod_on_shared_cards_is_a_warning() -> None:
    comp = _compile(POLICY.replace("gpus: 1, replicas: 44}", "gpus: 2, replicas: 8}"))
    warnings = [(d.code, d.path) for d in comp.report.diagnostics]
    assert warnings == [("PC443", ("spec", "workloads", 0, "gpus"))]
    assert (
        "pools l4-dev (time-slicing, 4 ways), l4-mps (mps, 2 ways) share each card"
        in comp.report.diagnostics[0].message
    )


def test_sharing_needs_two_replicas_at_least() -> None:
    codes = [(d.code, d.path) for d in _compile(POLICY.replace("replicas: 4}}", "replicas: 1}}")).report.errors]
    assert codes == [("PC104", ("spec", "nodePools", 0, "gpu", "sharing", "replicas"))]


def test_the_device_plugin_label_is_policycs() -> None:
    text = POLICY.replace(
        '      allocatable: {cpu: "64", memory: 256Gi}\n    - name: l4-mps',
        '      allocatable: {cpu: "64", memory: 256Gi}\n'
        "      labels: {nvidia.com/device-plugin.config: x}\n"
        "    - name: l4-mps",
    )
    errors = _compile(text).report.errors
    assert [(d.code, d.path) for d in errors] == [
        ("PC207", ("spec", "nodePools", 0, "labels", "nvidia.com/device-plugin.config"))
    ]

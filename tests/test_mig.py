"""MIG: the MIG manager's layouts per pool, the node label selecting them, the GPU Operator's strategy, capacity in
MIG devices, workloads asking for a profile, and layouts checked against NVIDIA's profiles of each card."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

import policyc
from policyc import mig
from policyc.proof.placement import placement_of, workload_templates

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: serving}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-80GB]}
  nodePools:
    - name: a100-mig
      usage: inference
      nodes: ["a100m-[1-4]"]
      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8, mig: {devices: {1g.10gb: 7}}}
      allocatable: {cpu: "128", memory: 1000Gi}
    - name: a100-whole
      usage: inference
      nodes: ["a100w-[1-2]"]
      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8}
      allocatable: {cpu: "128", memory: 1000Gi}
  tenants:
    - name: serve
      namespaces: [serve]
      queue: {guarantee: {gpu: 16}}
  workloads:
    - {name: small-model, type: inference, tenant: serve, gpuTier: a100, gpus: 1, replicas: 200, migProfile: 1g.10gb}
    - {name: big-model, type: inference, tenant: serve, gpuTier: a100, gpus: 8, replicas: 2}
"""


def _compile(text: str = POLICY):
    return policyc.compile(text, name="serving.yaml")


def _errors(text: str) -> list[tuple[str, tuple]]:
    return [(d.code, d.path) for d in _compile(text).report.errors]


def test_the_mig_manager_gets_each_pools_layout_and_the_cluster_strategy() -> None:
    comp = _compile()
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    config_map = YAML(typ="safe").load(comp.files["gpu-operator/mig-parted-config.yaml"].data)
    config = YAML(typ="safe").load(config_map["data"]["config.yaml"])
    # mig-parted's format (api/spec/v1): version v1, mig-configs: name -> [{devices, mig-enabled, mig-devices}].
    assert config == {
        "version": "v1",
        "mig-configs": {"policyc-1g.10gbx7": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]},
    }
    pools = {p["name"]: p["labels"] for p in json.loads(comp.files["nodes/plan.json"].data)["pools"]}
    assert pools["a100-mig"]["nvidia.com/mig.config"] == "policyc-1g.10gbx7"
    assert "nvidia.com/mig.config" not in pools["a100-whole"]
    values = YAML(typ="safe").load(comp.files["nodes/gpu-operator-values.yaml"].data)
    assert values["mig"] == {"strategy": "single"}
    assert values["migManager"] == {"config": {"name": "policyc-mig-parted-config"}}


def test_mig_workloads_land_on_the_layouts_with_their_profile_and_whole_card_ones_never() -> None:
    comp = _compile()
    landed = {}
    for name, obj in workload_templates(comp.artifacts).items():
        spec = obj["spec"]["template"]["spec"]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "serve"}, "spec": spec}
        landed[name] = {t for t, admitted, _ in placement_of(comp.cluster, pod) if admitted}
    assert landed == {"small-model": {"a100-mig"}, "big-model": {"a100-whole"}}


def test_capacity_counts_mig_devices() -> None:
    # 4 nodes x 8 cards x 7 devices = 224 one-GPU pods on the MIG pool.
    assert _compile(POLICY.replace("replicas: 200,", "replicas: 224,")).ok
    assert _errors(POLICY.replace("replicas: 200,", "replicas: 225,")) == [
        ("PC426", ("spec", "workloads", 0, "replicas"))
    ]


@pytest.mark.parametrize(
    ("devices", "says"),
    [
        ("{1g.10gb: 8}", "holds at most 7 1g.10gb, not 8"),
        ("{1g.5gb: 7}", "has no profile 1g.5gb"),
        ("{3g.40gb: 2, 2g.20gb: 1}", "they take 8 compute slices of the A100 80GB's 7"),
        ("{4g.40gb: 1, 3g.40gb: 1, 1g.10gb: 1}", "they take 8 compute slices"),
    ],
)
def test_a_layout_impossible_on_its_card_is_located(devices: str, says: str) -> None:
    text = POLICY.replace("mig: {devices: {1g.10gb: 7}}", f"mig: {{strategy: mixed, devices: {devices}}}")
    comp = _compile(text)
    found = [d for d in comp.report.errors if d.code == "PC444"]
    assert found and {d.path for d in found} == {("spec", "nodePools", 0, "gpu", "mig", "devices")}
    assert any(says in d.message for d in found), [d.message for d in found]


def test_the_single_strategy_takes_one_profile_and_the_cluster_one_strategy() -> None:
    text = POLICY.replace("mig: {devices: {1g.10gb: 7}}", "mig: {devices: {3g.40gb: 1, 4g.40gb: 1}}")
    assert ("PC444", ("spec", "nodePools", 0, "gpu", "mig", "devices")) in _errors(text)
    text = POLICY.replace(
        "      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8}\n",
        "      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8, mig: {strategy: mixed, devices: {7g.80gb: 1}}}\n",
    )
    assert ("PC445", ("spec", "nodePools", 1, "gpu", "mig", "strategy")) in _errors(text)


def test_unknown_cards_and_profiles_no_pool_offers_are_located() -> None:
    text = POLICY.replace("NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S")
    assert ("PC444", ("spec", "nodePools", 0, "gpu", "mig", "devices")) in _errors(text)
    text = POLICY.replace("migProfile: 1g.10gb", "migProfile: 2g.20gb")
    assert _errors(text) == [("PC446", ("spec", "workloads", 0, "migProfile"))]


def test_the_profile_table_knows_the_cards_of_the_examples() -> None:
    # NVIDIA's MIG user guide: an A100 80GB and an H100 80GB offer 7 x 1g.10gb, an A100 40GB 7 x 1g.5gb, an A30
    # 4 x 1g.6gb.
    assert mig.card("NVIDIA-A100-SXM4-80GB").profiles["1g.10gb"] == (1, 1, 7)
    assert mig.card("NVIDIA-H100-80GB").profiles["7g.80gb"] == (7, 8, 1)
    assert mig.card("NVIDIA-A100-SXM4-40GB").profiles["1g.5gb"] == (1, 1, 7)
    assert mig.card("NVIDIA-A30").compute == 4
    assert mig.card("NVIDIA-H20").name == "H20 96GB" and mig.card("NVIDIA-H200").name == "H200 141GB"
    assert mig.card("Tesla-T4") is None
    assert mig.problems(mig.card("NVIDIA-H100-80GB"), {"4g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1}) == []

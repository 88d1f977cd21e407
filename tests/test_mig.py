"""MIG: the MIG manager's layouts per pool, the node label selecting them, the GPU Operator's strategy, capacity in
MIG devices, workloads asking for a profile, and layouts checked against NVIDIA's profiles of each card."""

from __future__ import annotations

import json
import re

import pytest
from ruamel.yaml import YAML

import policyc
from policyc.gpu import mig
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


def test_pools_of_two_strategies_are_told_the_one_that_serves_every_layout() -> None:
    # a100-whole cut into 3g.40gb + 4g.40gb cards: two profiles a card, which only mixed advertises apart; so the
    # single pool (a100-mig, the default strategy) is the one told to change, and the rest is checked as under
    # mixed: the tenant's guarantee must then count small-model's 1g.10gb devices (PC453), as after the fix
    mixed = "mig: {strategy: mixed, devices: {3g.40gb: 1, 4g.40gb: 1}}"
    text = POLICY.replace(
        "      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8}\n",
        f"      gpu: {{product: NVIDIA-A100-SXM4-80GB, count: 8, {mixed}}}\n",
    )
    errors = _compile(text).report.errors
    assert [(d.code, d.path) for d in errors] == [
        ("PC445", ("spec", "nodePools", 0, "gpu", "mig", "strategy")),
        ("PC453", ("spec", "tenants", 0, "queue", "guarantee")),
    ]
    assert errors[0].hint == "use strategy: mixed (pool 'a100-whole' has several profiles)"


def test_unknown_cards_and_profiles_no_pool_offers_are_located() -> None:
    text = POLICY.replace("NVIDIA-A100-SXM4-80GB", "NVIDIA-B200")  # MIG, with profiles policyc's table lacks
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


# --- the mixed strategy: each profile its own resource ------------------------------------------------------

MIXED_DEVICES = "nvidia.com/mig-1g.10gb: 64, nvidia.com/mig-3g.40gb: 4"
MIXED = (
    POLICY.replace(
        "mig: {devices: {1g.10gb: 7}}", "mig: {strategy: mixed, devices: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}"
    )
    .replace("queue: {guarantee: {gpu: 16}}", f"queue: {{guarantee: {{gpu: 16, {MIXED_DEVICES}}}}}")
    .replace("replicas: 200, migProfile: 1g.10gb}", "replicas: 64, migProfile: 1g.10gb}")
    + "    - {name: mid-model, type: inference, tenant: serve, gpuTier: a100, gpus: 1, replicas: 4, "
    "migProfile: 3g.40gb}\n"
)
"""A100 80GB cards each cut into one 3g.40gb, one 2g.20gb and two 1g.10gb (7 compute slices, 8 memory slices)."""


def _container(comp, workload: str) -> dict:
    return workload_templates(comp.artifacts)[workload]["spec"]["template"]["spec"]["containers"][0]


def test_under_mixed_a_mig_workload_requests_its_profiles_device_and_sizes_by_compute_slices() -> None:
    comp = _compile(MIXED)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    values = YAML(typ="safe").load(comp.files["nodes/gpu-operator-values.yaml"].data)
    assert values["mig"] == {"strategy": "mixed"}
    # A node: 8 cards x 7 compute slices = 56; a 1g.10gb device is 1 of them, a 3g.40gb 3. Less the 10 % left to
    # node agents, rounded down: 128 cpu x 1/56 x 0.9 = 2.06 -> 2, 1000Gi x 1/56 x 0.9 = 16.07Gi -> 16Gi;
    # 128 x 3/56 x 0.9 = 6.17 -> 6, 1000Gi x 3/56 x 0.9 = 48.2Gi -> 48Gi.
    small = _container(comp, "small-model")["resources"]
    assert small["requests"] == {"cpu": "2", "memory": "16Gi", "nvidia.com/mig-1g.10gb": "1"}
    assert small["limits"]["nvidia.com/mig-1g.10gb"] == "1" and "nvidia.com/gpu" not in small["limits"]
    mid = _container(comp, "mid-model")["resources"]
    assert mid["requests"] == {"cpu": "6", "memory": "48Gi", "nvidia.com/mig-3g.40gb": "1"}
    big = _container(comp, "big-model")["resources"]
    assert big["requests"]["nvidia.com/gpu"] == "8"


def test_under_mixed_mig_workloads_land_on_their_layouts_and_whole_card_ones_never() -> None:
    comp = _compile(MIXED)
    landed = {}
    for name, obj in workload_templates(comp.artifacts).items():
        spec = obj["spec"]["template"]["spec"]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "serve"}, "spec": spec}
        landed[name] = {t for t, admitted, _ in placement_of(comp.cluster, pod) if admitted}
    assert landed == {"small-model": {"a100-mig"}, "mid-model": {"a100-mig"}, "big-model": {"a100-whole"}}


def test_under_mixed_capacity_counts_each_profiles_devices() -> None:
    # 4 nodes x 8 cards x 2 = 64 1g.10gb devices; x 1 = 32 3g.40gb devices.
    assert _compile(MIXED.replace("replicas: 4, migProfile: 3g.40gb", "replicas: 32, migProfile: 3g.40gb")).ok
    assert _errors(MIXED.replace("replicas: 4, migProfile: 3g.40gb", "replicas: 33, migProfile: 3g.40gb")) == [
        ("PC426", ("spec", "workloads", 2, "replicas"))
    ]
    too_many = _compile(MIXED.replace("gpus: 1, replicas: 4, migProfile", "gpus: 9, replicas: 4, migProfile"))
    found = [d for d in too_many.report.errors if d.path == ("spec", "workloads", 2, "gpus")]
    assert [d.code for d in found] == ["PC413"] and "have at most 8 (a100-mig 8)" in found[0].message


def test_under_mixed_kueue_covers_the_mig_devices_with_the_tenants_guarantee() -> None:
    text = MIXED.replace("  domain: ai.example.com\n", "  domain: ai.example.com\n  scheduler: {backend: kueue}\n")
    comp = _compile(text)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    (queue,) = [m.obj for a in comp.artifacts for m in a.manifests if m.obj["kind"] == "ClusterQueue"]
    (group,) = queue["spec"]["resourceGroups"]
    assert {"nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb", "nvidia.com/mig-2g.20gb"} <= set(
        group["coveredResources"]
    )
    nominal = {
        r["name"]: r["nominalQuota"] for f in group["flavors"] for r in f["resources"] if r["nominalQuota"] != "0"
    }
    assert nominal["nvidia.com/mig-1g.10gb"] == "64"


@pytest.mark.parametrize(
    ("counted", "where"),
    [
        ("queue: {guarantee: {gpu: 16}}", ("queue", "guarantee")),
        ("queue: {guarantee: {gpu: 16}, capability: {gpu: 24}}", ("queue", "guarantee")),
        ("queue: {guarantee: {cpu: '8'}}\n      quota: {requests: {gpu: 16}}", ("quota", "requests")),
    ],
)
def test_under_mixed_a_tenant_counting_gpus_must_count_its_mig_devices(counted: str, where: tuple) -> None:
    text = MIXED.replace(f"queue: {{guarantee: {{gpu: 16, {MIXED_DEVICES}}}}}", counted)
    found = [d for d in _compile(text).report.errors if d.code == "PC453"]
    assert {d.path for d in found} >= {("spec", "tenants", 0, *where)}, [str(d) for d in found]
    first = next(d for d in found if d.path == ("spec", "tenants", 0, *where))
    assert "runs 64 nvidia.com/mig-1g.10gb" in first.message
    assert first.hint == f"add nvidia.com/mig-1g.10gb: 64 to tenant 'serve' {'.'.join(where)}"


def test_under_mixed_following_the_hint_counts_the_mig_devices() -> None:
    text = MIXED.replace(
        f"queue: {{guarantee: {{gpu: 16, {MIXED_DEVICES}}}}}",
        "queue: {guarantee: {gpu: 16, nvidia.com/mig-1g.10gb: 64}}\n      quota: {requests: {gpu: 16}}",
    )
    hints = [d.hint for d in _compile(text).report.errors]
    assert hints == [
        "add nvidia.com/mig-1g.10gb: 64 to tenant 'serve' quota.requests",
        "add nvidia.com/mig-3g.40gb: 4 to tenant 'serve' quota.requests",
        "add nvidia.com/mig-3g.40gb: 4 to tenant 'serve' queue.guarantee",
    ]
    text = MIXED.replace(
        f"queue: {{guarantee: {{gpu: 16, {MIXED_DEVICES}}}}}",
        f"queue: {{guarantee: {{gpu: 16, {MIXED_DEVICES}}}}}\n      quota: {{requests: {{gpu: 16, {MIXED_DEVICES}}}}}",
    )
    comp = _compile(text)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    (quota,) = [m.obj for a in comp.artifacts for m in a.manifests if m.obj["kind"] == "ResourceQuota"
                and "requests.nvidia.com/gpu" in m.obj["spec"]["hard"]]  # fmt: skip
    assert quota["spec"]["hard"]["requests.nvidia.com/mig-1g.10gb"] == "64"


# --- a layout per group of cards ----------------------------------------------------------------------------

PER_CARD = MIXED.replace(
    "mig: {strategy: mixed, devices: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}",
    "mig: {strategy: mixed, cards: [{count: 4, devices: {3g.40gb: 2}}, {count: 4, devices: {1g.10gb: 7}}]}",
).replace(f"{{gpu: 16, {MIXED_DEVICES}}}", "{gpu: 16, nvidia.com/mig-1g.10gb: 64, nvidia.com/mig-3g.40gb: 4}")
"""A100 80GB nodes whose cards 0-3 each hold two 3g.40gb and cards 4-7 seven 1g.10gb."""


def test_a_layout_per_group_of_cards_numbers_the_cards_for_the_mig_manager() -> None:
    comp = _compile(PER_CARD)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    config_map = YAML(typ="safe").load(comp.files["gpu-operator/mig-parted-config.yaml"].data)
    config = YAML(typ="safe").load(config_map["data"]["config.yaml"])
    assert config == {
        "version": "v1",
        "mig-configs": {
            "policyc-4c-3g.40gbx2-4c-1g.10gbx7": [
                {"devices": [0, 1, 2, 3], "mig-enabled": True, "mig-devices": {"3g.40gb": 2}},
                {"devices": [4, 5, 6, 7], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
            ]
        },
    }
    pools = {p["name"]: p["labels"] for p in json.loads(comp.files["nodes/plan.json"].data)["pools"]}
    assert pools["a100-mig"]["nvidia.com/mig.config"] == "policyc-4c-3g.40gbx2-4c-1g.10gbx7"


def test_a_layout_per_group_of_cards_sizes_pods_and_capacity_by_its_devices() -> None:
    comp = _compile(PER_CARD)
    # A node: 4 cards x 6 compute slices (two 3g) + 4 cards x 7 (seven 1g) = 52 slices. A 1g.10gb pod gets
    # 128 cpu x 1/52 x 0.9 = 2.2 -> 2 and 1000Gi x 1/52 x 0.9 = 17.3Gi -> 17Gi; a 3g.40gb pod 6.6 -> 6 and
    # 51.9Gi -> 51Gi.
    assert _container(comp, "small-model")["resources"]["requests"] == {
        "cpu": "2", "memory": "17Gi", "nvidia.com/mig-1g.10gb": "1"
    }  # fmt: skip
    assert _container(comp, "mid-model")["resources"]["requests"] == {
        "cpu": "6", "memory": "51Gi", "nvidia.com/mig-3g.40gb": "1"
    }  # fmt: skip
    # 4 nodes x 4 cards x 2 = 32 3g.40gb devices; 4 nodes x 4 cards x 7 = 112 1g.10gb devices.
    assert _compile(PER_CARD.replace("replicas: 4, migProfile: 3g.40gb", "replicas: 32, migProfile: 3g.40gb")).ok
    assert _errors(PER_CARD.replace("replicas: 4, migProfile: 3g.40gb", "replicas: 33, migProfile: 3g.40gb")) == [
        ("PC426", ("spec", "workloads", 2, "replicas"))
    ]


def test_card_groups_must_take_every_card_and_each_fit_its_card() -> None:
    at = ("spec", "nodePools", 0, "gpu", "mig", "cards")
    assert _errors(PER_CARD.replace("{count: 4, devices: {1g.10gb: 7}}", "{count: 3, devices: {1g.10gb: 7}}")) == [
        ("PC444", at)
    ]
    found = _compile(PER_CARD.replace("{count: 4, devices: {1g.10gb: 7}}", "{count: 4, devices: {1g.10gb: 8}}"))
    assert [(d.code, d.path) for d in found.report.errors] == [("PC444", (*at, 1, "devices"))]
    assert "holds at most 7 1g.10gb, not 8" in found.report.errors[0].message


@pytest.mark.parametrize(
    "layout",
    ["{strategy: mixed}", "{strategy: mixed, devices: {1g.10gb: 7}, cards: [{count: 8, devices: {1g.10gb: 7}}]}"],
)
def test_a_layout_is_devices_or_cards(layout: str) -> None:
    text = PER_CARD.replace(
        "{strategy: mixed, cards: [{count: 4, devices: {3g.40gb: 2}}, {count: 4, devices: {1g.10gb: 7}}]}", layout
    )
    errors = _compile(text).report.errors
    assert [d.path for d in errors] == [("spec", "nodePools", 0, "gpu", "mig")]
    assert "exactly one" in errors[0].message and errors[0].hint


def test_a_long_layout_name_is_a_valid_label_value() -> None:
    groups = ", ".join(f"{{count: 1, devices: {{{profile}}}}}" for profile in
                       ["1g.10gb: 7", "2g.20gb: 3", "3g.40gb: 2", "4g.40gb: 1", "7g.80gb: 1", "1g.20gb: 4",
                        "1g.10gb: 6", "2g.20gb: 2"])  # fmt: skip
    text = (
        PER_CARD.replace(
            "cards: [{count: 4, devices: {3g.40gb: 2}}, {count: 4, devices: {1g.10gb: 7}}]", f"cards: [{groups}]"
        )
        .replace("mig-1g.10gb: 64", "mig-1g.10gb: 52")
        .replace("replicas: 64, migProfile", "replicas: 52, migProfile")
    )
    comp = _compile(text)  # 4 nodes x (7 + 6) 1g.10gb devices = 52
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    pools = {p["name"]: p["labels"] for p in json.loads(comp.files["nodes/plan.json"].data)["pools"]}
    name = pools["a100-mig"]["nvidia.com/mig.config"]
    assert len(name) <= 63 and re.fullmatch(r"policyc-[0-9a-f]{16}", name), name


def test_under_mixed_kai_warns_that_its_queues_do_not_count_mig_devices() -> None:
    text = MIXED.replace("  domain: ai.example.com\n", "  domain: ai.example.com\n  scheduler: {backend: kai}\n")
    comp = _compile(text.replace(f"{{gpu: 16, {MIXED_DEVICES}}}", "{gpu: 16}"))
    warned = {(d.code, d.path) for d in comp.report.warnings}
    assert ("PC805", ("spec", "nodePools", 0, "gpu", "mig")) in warned
    errors = [(d.code, d.path[-1]) for d in _compile(text).report.errors]
    assert ("PC801", "nvidia.com/mig-1g.10gb") in errors  # a KAI queue cannot hold MIG devices

"""GPU tiers allocated with DRA (`gpuTiers[].dra`, policyc.gpu.dra): the DeviceClass and its selector, the claims of the
templates, the per-model quota and what counts it, and PC451/PC452. The selector is evaluated with a CEL
implementation on devices as NVIDIA's DRA driver publishes them (driver, type, NVML's productName)."""

from __future__ import annotations

import cel
import pytest

import policyc
from policyc.gpu import dra
from policyc.k8s.validation import validate_resource_quota
from policyc.proof.placement import claim_templates, placement_of, workload_templates
from tests.conftest import REPO

EXAMPLE = (REPO / "policies" / "ai-dra.yaml").read_text()
H100 = "h100.ai.example.com.deviceclass.resource.k8s.io/devices"
A100 = "a100.ai.example.com.deviceclass.resource.k8s.io/devices"

SMALL = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: dra}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: h100, products: [NVIDIA-H100-80GB-HBM3], dra: true}
  nodePools:
    - name: h100
      usage: training
      nodes: ["h100-[01-04]"]
      gpu: {product: NVIDIA-H100-80GB-HBM3, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
  tenants:
    - name: llm
      namespaces: [llm]
      queue: {guarantee: {cpu: "96", memory: 900Gi}}
      quota: {requests: {gpu: 16}}
  workloads:
    - {name: train, type: training, tenant: llm, gpuTier: h100, gpus: 8, replicas: 2}
"""


def _build(text: str) -> policyc.Compilation:
    return policyc.compile(text, name="policy.yaml")


def _errors(result: policyc.Compilation) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.column, f"{d.message}; {d.hint}") for d in result.report.diagnostics
            if d.severity == "error"]  # fmt: skip


def _objects(result: policyc.Compilation, kind: str) -> list[dict]:
    return [m.obj for a in result.artifacts for m in a.manifests if m.obj["kind"] == kind]


@pytest.fixture(scope="module")
def example() -> policyc.Compilation:
    result = _build(EXAMPLE)
    assert result.ok, _errors(result)
    return result


def _device(driver: str, kind: str, product: str) -> dict:
    return {"driver": driver, "attributes": {driver: {"type": kind, "productName": product}}}


@pytest.mark.parametrize(
    ("device", "h100", "a100"),
    [
        (_device("gpu.nvidia.com", "gpu", "NVIDIA H100 80GB HBM3"), True, False),  # NVML's name, with spaces
        (_device("gpu.nvidia.com", "gpu", "NVIDIA A100-SXM4-80GB"), False, True),  # NVML's name, with hyphens
        (_device("gpu.nvidia.com", "mig", "NVIDIA A100-SXM4-80GB"), False, False),  # a MIG device, not a card
        (_device("gpu.nvidia.com", "gpu", "NVIDIA H100 PCIe"), False, False),  # another model
        (_device("gpu.example.com", "gpu", "NVIDIA H100 80GB HBM3"), False, False),  # another driver
    ],
)
def test_each_device_class_selects_only_its_tiers_cards(example, device: dict, h100: bool, a100: bool) -> None:
    classes = {c["metadata"]["name"]: c for c in _objects(example, "DeviceClass")}
    assert sorted(classes) == ["a100.ai.example.com", "h100.ai.example.com"]
    for name, expected in (("h100.ai.example.com", h100), ("a100.ai.example.com", a100)):
        (selector,) = classes[name]["spec"]["selectors"]
        assert cel.evaluate(selector["cel"]["expression"], {"device": device}) is expected, (name, device)


def test_product_names_are_every_spelling_gfd_sanitises_to_the_product() -> None:
    names = dra.product_names("NVIDIA-H100-80GB-HBM3")
    assert len(names) == 8 and len(set(names)) == 8
    assert "NVIDIA H100 80GB HBM3" in names and "NVIDIA-H100-80GB-HBM3" in names
    assert all(n.replace(" ", "-") == "NVIDIA-H100-80GB-HBM3" for n in names)
    assert dra.product_names("NVIDIA-L4") == ["NVIDIA L4", "NVIDIA-L4"]


def test_pods_claim_their_gpus_from_a_template_in_their_namespace(example) -> None:
    templates = workload_templates(example.artifacts)
    claims = claim_templates(example.artifacts)
    expected = {"pretrain": (H100, 8), "ablation": (H100, 8), "eval-server": (A100, 2), "chat": (A100, 2)}
    for name, (key, count) in expected.items():
        template = templates[name]
        pod = template["spec"]["template"]
        container = pod["spec"]["containers"][0]
        assert not any("gpu" in r for part in ("limits", "requests") for r in container["resources"][part]), name
        assert container["resources"]["claims"] == [{"name": "gpus"}]
        assert pod["spec"]["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": f"{name}-gpus"}]
        assert claims[(template["metadata"]["namespace"], f"{name}-gpus")] == {key: count}
    # The L4 tier stays on the device plugin.
    notebook = templates["notebook"]["spec"]["template"]["spec"]
    assert "resourceClaims" not in notebook
    assert notebook["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_quotas_bound_each_model_apart_and_the_api_server_takes_them(example) -> None:
    quotas = {(q["metadata"]["namespace"], q["metadata"]["name"]): q for q in _objects(example, "ResourceQuota")}
    assert quotas[("llm", "tenant-quota")]["spec"]["hard"] == {H100: "32"}
    assert quotas[("research", "tenant-quota")]["spec"]["hard"] == {A100: "8", H100: "16"}
    assert quotas[("dev", "tenant-quota")]["spec"]["hard"] == {"requests.nvidia.com/gpu": "8"}
    for quota in quotas.values():
        assert validate_resource_quota(quota) == [], quota["metadata"]


def test_queues_hold_no_claimed_gpus(example) -> None:
    queues = {q["metadata"]["name"]: q["spec"] for q in _objects(example, "Queue")}
    assert queues and all("deviceclass" not in key for spec in queues.values() for key in str(spec).split("'"))
    assert queues["dev"]["guarantee"]["resource"]["nvidia.com/gpu"] == "4"


def test_placement_keeps_claims_on_their_tiers_pools_and_a_missing_template_lands_nowhere(example) -> None:
    cluster = example.cluster
    claims = claim_templates(example.artifacts)
    template = workload_templates(example.artifacts)["chat"]
    pod = {**template["spec"]["template"], "metadata": {"namespace": "serving"}}
    landed = {target for target, admitted, _ in placement_of(cluster, pod, claims) if admitted}
    assert landed == {"a100"}
    nowhere = placement_of(cluster, pod, {})
    assert not any(admitted for _, admitted, _ in nowhere)
    assert "ResourceClaimTemplate chat-gpus does not exist" in dict((t, why) for t, _, why in nowhere)["a100"]


def test_claims_beyond_the_model_quota_fail_and_the_hint_works() -> None:
    over = _build(SMALL.replace("quota: {requests: {gpu: 16}}", "quota: {requests: {gpu: 8}}"))
    (error,) = _errors(over)
    assert error[:3] == ("PC507", 21, 84)
    assert f"takes 16 {H100}" in error[3] and "the resource claim of pod 2 of 2 is refused" in error[3]
    assert "raise tenant 'llm' quota.requests.gpu to at least 16" in error[3]
    assert _build(SMALL).ok  # the hint followed


@pytest.mark.parametrize(
    ("old", "new", "where", "counter"),
    [
        ('guarantee: {cpu: "96"', 'guarantee: {gpu: 8, cpu: "96"', (20, 27), "the scheduler's queue"),
        ("quota: {requests: {gpu: 16}}", "quota: {requests: {gpu: 16}}\n      limitRange: {max: {gpu: 8}}",
         (22, 26), "a LimitRange"),
        ("quota: {requests: {gpu: 16}}", "quota: {requests: {gpu: 16}, perPriorityClass: {high: {gpu: 8}}}",
         (21, 62), "a quota scoped to a priority class"),
    ],
)  # fmt: skip
def test_claimed_gpus_where_only_container_requests_count_are_refused(old, new, where, counter) -> None:
    text = SMALL.replace(old, new).replace(
        "  tenants:", "  priorityClasses:\n    - {name: high, value: 10}\n  tenants:"
    )
    (error,) = _errors(_build(text))
    assert error[:3] == ("PC452", *where), error
    assert f"'gpu' here is {H100}" in error[3] and f"{counter} counts only what containers request" in error[3]
    assert "remove them here" in error[3]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"1.36"', '"1.33"', "tier 'h100' uses DRA, which Kubernetes 1.33 does not serve"),
        ("count: 8}", "count: 8, mig: {devices: {1g.10gb: 7}}}", "partitions its cards with MIG"),
        ("count: 8}", "count: 8, sharing: {strategy: time-slicing, replicas: 2}}", "shares its cards"),
        ("count: 8}", "count: 8, resource: example.com/gpu}", "names a resource"),
    ],
)
def test_what_the_dra_driver_cannot_serve_is_refused(old: str, new: str, message: str) -> None:
    errors = _errors(_build(SMALL.replace(old, new, 1)))
    assert errors and all(e[0] == "PC451" for e in errors), errors
    assert any(message in e[3] for e in errors), errors


def test_a_selector_above_the_api_servers_length_is_refused() -> None:
    products = [f"NVIDIA-X{i}-A-B-C-D-E-F" for i in range(10)]  # 64 spellings each
    text = SMALL.replace(
        "products: [NVIDIA-H100-80GB-HBM3]", f"products: [NVIDIA-H100-80GB-HBM3, {', '.join(products)}]"
    )
    (error,) = _errors(_build(text))
    assert error[0] == "PC451" and "above the API server's 10240" in error[3]

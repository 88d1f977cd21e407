"""The placement proof: templates land only where their usage and tier allow, and somewhere."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from policyc.artifacts import Manifest
from policyc.backends.workloads import pod_templates
from policyc.compiler import compile_file
from policyc.proof.placement import CONTROL_PLANE, matrix, prove, workload_templates
from tests.conftest import REPO

BASE = """
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: placement}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  controlPlane: {nodes: [cp-1]}
  gpuTiers:
    - {name: big, products: [NVIDIA-H100-80GB, NVIDIA-H20]}
    - {name: small, products: [NVIDIA-L4]}
  nodePools:
    - {name: h100-train, usage: training, nodes: ["h100-[1-2]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
    - {name: h20-hybrid, usage: hybrid, nodes: [h20-1], gpu: {product: NVIDIA-H20, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
    - {name: h20-serve, usage: inference, nodes: [h20-2], gpu: {product: NVIDIA-H20, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
    - name: l4-serve
      usage: inference
      nodes: ["l4-[1-2]"]
      gpu: {product: NVIDIA-L4, count: 4}
      allocatable: {cpu: "48", memory: 192Gi}
      taints: [{key: example.com/dedicated, value: vip, effect: NoExecute}]
  tenants:
    - {name: ml, namespaces: [ml]}
  workloads:
"""


def compile_with(compile_text, workloads: str):
    return compile_text(BASE + workloads)


def admitted(result) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for cell in matrix(result.cluster, result.backend.KINDS, workload_templates(result.artifacts)):
        if cell.admitted:
            out.setdefault(cell.workload, set()).add(cell.target)
    return out


def test_examples_place_every_template_only_where_allowed() -> None:
    result = compile_file(REPO / "policies" / "ai-prod.yaml")
    assert result.ok
    assert admitted(result) == {
        "llm-pretraining": {"h100-train", "a100-train", "h20-hybrid"},
        "llm-finetune": {"h100-train", "a100-train", "h20-hybrid"},
        "vision-dev": {"a40-dev"},
        "chat-serving": {"l4-serve", "t4-serve"},
        "canary-serving": {"l4-serve", "t4-serve"},
    }


def test_strict_templates_pass(compile_text) -> None:
    result = compile_with(
        compile_text,
        """
    - {name: train, type: training, tenant: ml, gpuTier: big, gpus: 8}
    - name: serve
      type: inference
      tenant: ml
      gpuTier: small
      gpus: 1
      tolerations: [{key: example.com/dedicated, value: vip, effect: NoExecute}]
""",
    )
    assert result.ok, [d.message for d in result.report.diagnostics]
    assert admitted(result) == {"train": {"h100-train", "h20-hybrid"}, "serve": {"l4-serve"}}


def tolerating(result, workload: str, *tolerations: dict) -> list:
    """The build's artifacts with extra tolerations in `workload`'s pod templates: what the checks refuse in a policy
    (PC509), put into the emitted output to exercise the proof on its own."""
    artifacts = []
    for a in result.artifacts:
        if a.path == f"templates/{workload}.yaml":
            obj = copy.deepcopy(a.manifests[0].obj)
            for _, _, template in pod_templates(result.backend.KINDS, obj):
                template["spec"]["tolerations"] += tolerations
            a = replace(a, manifests=(Manifest(obj),))
        artifacts.append(a)
    return artifacts


PREFERRED_TRAINING = "    - {name: burst, type: training, tenant: ml, gpuTier: big, gpus: 8, placement: preferred}\n"
PREFERRED_SERVING = (
    "    - {name: greedy, type: inference, tenant: ml, gpuTier: small, gpus: 1, placement: preferred,\n"
    "       tolerations: [{key: example.com/dedicated, value: vip, effect: NoExecute}]}\n"
)


def test_training_template_reaching_an_inference_pool_fails_naming_pool_template_and_taint(compile_text) -> None:
    result = compile_with(compile_text, PREFERRED_TRAINING)
    assert result.ok
    tampered = tolerating(result, "burst", {"key": "ai.example.com/node.usage", "operator": "Exists"})
    errors = prove(result.cluster, tampered, result.backend.KINDS)
    assert [d.code for d in errors] == ["PC501"]
    message = errors[0].message
    assert "training template 'burst'" in message and "inference pool 'h20-serve'" in message
    assert "no required node affinity excludes it" in message
    assert "tolerates its taint ai.example.com/node.usage=inference:NoSchedule" in message
    assert "placement: strict" in errors[0].hint


def test_a_policy_whose_toleration_would_reach_the_other_usage_fails_before_any_output(compile_text) -> None:
    result = compile_with(
        compile_text,
        PREFERRED_TRAINING.replace("}\n", ", tolerations: [{key: ai.example.com/node.usage, operator: Exists}]}\n"),
    )
    assert [d.code for d in result.report.errors] == ["PC509"]
    assert "the taint of pools 'h20-serve', 'l4-serve'" in result.report.errors[0].message
    assert not result.files, "nothing is written"


def test_other_tier_and_control_plane(compile_text) -> None:
    result = compile_with(compile_text, PREFERRED_SERVING)
    assert result.ok
    tampered = tolerating(
        result,
        "greedy",
        {"key": "nvidia.com/gpu.product", "operator": "Exists"},
        {"key": "ai.example.com/control-plane", "operator": "Exists"},
    )
    errors = prove(result.cluster, tampered, result.backend.KINDS)
    assert sorted(d.code for d in errors) == ["PC502", "PC503"]
    [tier] = [d for d in errors if d.code == "PC502"]
    assert "pools 'h20-hybrid', 'h20-serve' of GPU tier 'big'" in tier.message


def test_nowhere_lists_the_reasons_per_pool(compile_text) -> None:
    result = compile_with(
        compile_text,
        """
    - {name: serve, type: inference, tenant: ml, gpuTier: small, gpus: 1}
    - {name: zoned, type: training, tenant: ml, gpuTier: big, gpus: 8, nodeSelector: {topology.kubernetes.io/zone: z}}
""",
    )
    found = {d.message.split("'")[1]: d for d in result.report.errors}
    assert set(found) == {"serve", "zoned"}
    assert "taint example.com/dedicated=vip:NoExecute is not tolerated" in found["serve"].message
    assert "pools 'h100-train', 'h20-hybrid': nodeSelector topology.kubernetes.io/zone=z" in found["zoned"].message


def test_tier_without_suitable_pool(compile_text) -> None:
    text = BASE.replace("usage: training, nodes", "usage: inference, nodes").replace(
        "usage: hybrid", "usage: inference"
    )
    result = compile_text(text + "    - {name: t, type: training, tenant: ml, gpuTier: big, gpus: 8}\n")
    [d] = result.report.errors
    assert d.code == "PC504" and "no pool of GPU tier 'big' has usage training or hybrid" in d.message


def test_prefers_hybrid_is_a_warning(compile_text) -> None:
    result = compile_with(compile_text, "    - {name: train, type: training, tenant: ml, gpuTier: big, gpus: 8}\n")
    assert result.ok
    artifacts = []
    for a in result.artifacts:
        if a.path == "templates/train.yaml":
            obj = copy.deepcopy(a.manifests[0].obj)
            terms = obj["spec"]["tasks"][0]["template"]["spec"]["affinity"]["nodeAffinity"]
            terms["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]["matchExpressions"][0][
                "values"] = ["hybrid"]  # fmt: skip
            a = replace(a, manifests=(Manifest(obj),))
        artifacts.append(a)
    [d] = prove(result.cluster, artifacts, result.backend.KINDS)
    assert (d.code, d.severity) == ("PC505", "warning")
    assert "prefers hybrid pool 'h20-hybrid'" in d.message


@pytest.mark.parametrize("kind", ["VolcanoJob", "PyTorchJob", "Deployment"])
def test_every_pod_template_of_every_kind_is_evaluated(compile_text, kind) -> None:
    result = compile_with(
        compile_text,
        f"    - {{name: w, type: training, tenant: ml, gpuTier: big, gpus: 8, replicas: 3, kind: {kind}}}\n",
    )
    cells = matrix(result.cluster, result.backend.KINDS, workload_templates(result.artifacts))
    roles = {c.role for c in cells}
    assert roles == {"VolcanoJob": {"worker"}, "PyTorchJob": {"Master", "Worker"}, "Deployment": {"pod"}}[kind]
    assert {c.target for c in cells} >= {CONTROL_PLANE, "h100-train"}

"""Guarantees against the pools that can keep them (PC414): one row per rule, figures worked out by hand.

Every policy below has the same pools unless a row adds its own:
  h100-train  training   high   4 nodes x 8 GPUs = 32 GPUs, 96 cpu per node  = 384 cpu
  h20-hybrid  hybrid     high   2 nodes x 8 GPUs = 16 GPUs, 192 cpu per node = 384 cpu
  l4-serve    inference  high   8 nodes x 8 GPUs = 64 GPUs  (no allocatable stated)
so the high tier has 112 GPUs, training workloads reach 48 of them and inference workloads 80.
"""

from __future__ import annotations

import pytest

BASE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: capacity}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  gpuTiers: [{name: high, products: [NVIDIA-H100-80GB, NVIDIA-H20, NVIDIA-L4]}]
  nodePools:
    - {name: h100-train, usage: training, nodes: ["t-[1-4]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
    - {name: h20-hybrid, usage: hybrid, nodes: ["h-[1-2]"], gpu: {product: NVIDIA-H20, count: 8},
       allocatable: {cpu: "192", memory: 2000Gi}}
    - {name: l4-serve, usage: inference, nodes: ["i-[1-8]"], gpu: {product: NVIDIA-L4, count: 8}}
  scheduler: {queuePlugin: capacity}
  tenants:
"""


def tenant(name: str, queue: str = "", workload: str | None = None) -> tuple[str, str]:
    text = f"    - {{name: {name}, namespaces: [{name}], queue: {{{queue}}}}}\n"
    return text, (
        f"    - {{name: {name}-w, type: {workload}, tenant: {name}, gpuTier: high, gpus: 1, cpu: '1', memory: 1Gi}}\n"
        if workload
        else ""
    )


def policy(*tenants: tuple[str, str]) -> str:
    workloads = "".join(w for _, w in tenants)
    return BASE + "".join(t for t, _ in tenants) + (f"  workloads:\n{workloads}" if workloads else "")


CASES = [
    # Two training tenants share the 48 GPUs training reaches: 24 + 24 fits, 24 + 25 does not.
    pytest.param(
        policy(tenant("a", "guarantee: {gpu: 24}", "training"), tenant("b", "guarantee: {gpu: 24}", "training")),
        None,
        id="two-tenants-fill-their-pools-exactly",
    ),
    pytest.param(
        policy(tenant("a", "guarantee: {gpu: 24}", "training"), tenant("b", "guarantee: {gpu: 25}", "training")),
        (
            "tenants 'a' 24, 'b' 25 are guaranteed 49 nvidia.com/gpu together",
            "have 48",
            "h100-train 32, h20-hybrid 16",
            "by 1 in all",
        ),
        id="two-tenants-one-gpu-too-many",
    ),
    # A training tenant cannot use the 64 inference GPUs of its tier: 49 > 48, though the tier has 112.
    pytest.param(
        policy(tenant("a", "guarantee: {gpu: 49}", "training")),
        ("tenant 'a' is guaranteed 49 nvidia.com/gpu", "have 48 (h100-train 32, h20-hybrid 16)"),
        id="pools-the-workloads-cannot-reach-do-not-count",
    ),
    # Training 40 and inference 70: 110 <= 112, and the hybrid pool is shared by both (counted once):
    # training needs 40 - 32 = 8 of it, inference 70 - 64 = 6 of it, 14 <= 16.
    pytest.param(
        policy(tenant("a", "guarantee: {gpu: 40}", "training"), tenant("b", "guarantee: {gpu: 70}", "inference")),
        None,
        id="hybrid-pool-shared-and-enough",
    ),
    # Training 44 and inference 70: each fits alone (44 <= 48, 70 <= 80) but both need the hybrid pool:
    # 12 + 6 = 18 > 16, so 114 GPUs are asked of the 112 they reach together.
    pytest.param(
        policy(tenant("a", "guarantee: {gpu: 44}", "training"), tenant("b", "guarantee: {gpu: 70}", "inference")),
        (
            "tenants 'a' 44, 'b' 70 are guaranteed 114 nvidia.com/gpu together",
            "have 112",
            "h100-train 32, h20-hybrid 16, l4-serve 64",
        ),
        id="hybrid-pool-counted-once",
    ),
    # A tenant without workloads may use any pool: 112 fits the tier exactly, 113 does not.
    pytest.param(policy(tenant("a", "guarantee: {gpu: 112}")), None, id="no-workloads-any-pool"),
    pytest.param(
        policy(tenant("a", "guarantee: {gpu: 113}")),
        ("tenant 'a' is guaranteed 113", "have 112"),
        id="no-workloads-whole-cluster",
    ),
    # A queue tree counts its leaves: parent 48 holding children 24 + 24 is 48 GPUs, not 96.
    pytest.param(
        policy(
            tenant("org", "guarantee: {gpu: 48}"),
            tenant("a", "parent: org, guarantee: {gpu: 24}", "training"),
            tenant("b", "parent: org, guarantee: {gpu: 24}", "training"),
            tenant("c", "guarantee: {gpu: 64}", "inference"),
        ),
        None,
        id="hierarchy-counted-by-leaves",
    ),
    # ...and what a parent holds beyond its children is served by its subtree's pools: 24 + 8 + 20 = 52 > 48.
    pytest.param(
        policy(
            tenant("org", "guarantee: {gpu: 52}"),
            tenant("a", "parent: org, guarantee: {gpu: 24}", "training"),
            tenant("b", "parent: org, guarantee: {gpu: 8}", "training"),
        ),
        ("'org' 20", "'a' 24", "'b' 8", "guaranteed 52 nvidia.com/gpu together", "have 48"),
        id="parent-beyond-children-on-subtree-pools",
    ),
    # cpu: training reaches 4 x 96 + 2 x 192 = 768 cpu; l4-serve states none, so inference is unbounded.
    pytest.param(policy(tenant("a", "guarantee: {cpu: '768'}", "training")), None, id="cpu-exactly"),
    pytest.param(
        policy(tenant("a", "guarantee: {cpu: 768500m}", "training")),
        ("guaranteed 768500m cpu", "have 768 (h100-train 384, h20-hybrid 384)"),
        id="cpu-half-a-core-over",
    ),
    pytest.param(
        policy(tenant("a", "guarantee: {cpu: '5000'}", "inference")), None, id="unstated-allocatable-unbounded"
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_guarantees_against_reachable_pools(compile_text, text: str, expected: tuple[str, ...] | None) -> None:
    result = compile_text(text)
    assert not [d for d in result.report.errors if d.code != "PC414"], [d.message for d in result.report.errors]
    found = [d for d in result.report.diagnostics if d.code == "PC414"]
    if expected is None:
        assert not found, [d.message for d in found]
        return
    [d] = found
    for fragment in expected:
        assert fragment in d.message or fragment in (d.hint or ""), d.message

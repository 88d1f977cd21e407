"""policies/ai-hetero.yaml, the heterogeneous example: RDMA training on H100, MIG inference on A100, time-sliced L4
for development, AMD MI300X, Huawei Ascend, CPU-only nodes, Slurm's reserved share, for every scheduler backend."""

from __future__ import annotations

import json

import pytest
import yaml

import policyc
from policyc.commands.explain import placement_rows
from policyc.registry import SCHEDULERS
from tests.conftest import REPO

TEXT = (REPO / "policies" / "ai-hetero.yaml").read_text()


def _compile(backend: str):
    text = TEXT.replace("\n  tenants:", f"\n  scheduler: {{backend: {backend}}}\n  tenants:", 1)
    return policyc.compile(text, name="ai-hetero.yaml")


@pytest.mark.parametrize("backend", list(SCHEDULERS))
def test_it_builds_for_every_backend_and_each_class_lands_on_its_hardware(backend: str) -> None:
    comp = _compile(backend)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    landed: dict[str, set[str]] = {}
    for row in placement_rows(comp):
        if row.verdict != "rejected":
            landed.setdefault(row.workload, set()).add(row.pool)
    assert landed == {
        "llama-70b": {"h100-ib"},
        "slurm-burst": {"h100-ib"},
        "small-model": {"a100-mig"},
        "notebook": {"l4-dev"},
        "mi300x-finetune": {"mi300x"},
        "search-ranker": {"ascend"},
        "data-prep": {"cpu"},
    }
    for path in ("gpu-operator/mig-parted-config.yaml", "gpu-operator/device-plugin-config.yaml"):
        assert path in comp.files
    quotas = {
        m.obj["metadata"]["name"] for a in comp.artifacts for m in a.manifests if m.obj["kind"] == "ResourceQuota"
    }
    assert "tenant-priority-slurm-high-priority" in quotas


def _requests(comp, workload: str) -> dict:
    """The requests of the (last) container of the workload's template, whatever its kind."""
    found: list[dict] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if "containers" in node:
                found.append(node["containers"][0]["resources"]["requests"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load(comp.files[f"templates/{workload}.yaml"].data))
    return found[-1]


@pytest.mark.parametrize("backend", list(SCHEDULERS))
def test_each_vendor_is_asked_for_by_its_own_resource_and_quota(backend: str) -> None:
    comp = _compile(backend)
    assert _requests(comp, "mi300x-finetune")["amd.com/gpu"] == "8"
    assert _requests(comp, "search-ranker")["huawei.com/Ascend910B3"] == "1"
    assert _requests(comp, "llama-70b")["nvidia.com/gpu"] == "8"
    assert set(_requests(comp, "data-prep")) == {"cpu", "memory"}
    hard = {
        (m.obj["metadata"]["namespace"], m.obj["metadata"]["name"]): m.obj["spec"]["hard"]
        for a in comp.artifacts
        for m in a.manifests
        if m.obj["kind"] == "ResourceQuota"
    }
    assert hard[("research", "tenant-quota")] == {"requests.amd.com/gpu": "32"}
    assert hard[("search", "tenant-quota")] == {"requests.huawei.com/Ascend910B3": "16"}


def test_nodes_are_labelled_and_tainted_by_their_vendor_product_key() -> None:
    plan = json.loads(_compile("volcano").files["nodes/plan.json"].data)
    pools = {p["name"]: p for p in plan["pools"]}
    assert pools["mi300x"]["taints"] == [
        {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"},
        {"key": "amd.com/gpu.product-name", "value": "AMD-Instinct-MI300X", "effect": "NoSchedule"},
    ]
    assert (pools["mi300x"]["gpuVendor"], pools["mi300x"]["gpuResource"]) == ("amd", "amd.com/gpu")
    assert (pools["ascend"]["gpuFeatureDiscovery"], pools["cpu"]["gpuResource"]) == (False, None)
    # No feature discovery labels Ascend nodes with their product: policyc does, under its domain.
    assert pools["ascend"]["labels"]["ai.example.com/gpu.product"] == "Ascend910B3"
    assert "ai.example.com/gpu.product" not in pools["mi300x"]["labels"]
    assert pools["cpu"]["labels"]["ai.example.com/gpu.tier"] == "cpu"
    # CPU nodes are tainted by their tier, which only CPU-only workloads tolerate, as GPU nodes by their product.
    assert pools["cpu"]["taints"] == [
        {"key": "ai.example.com/gpu.tier", "value": "cpu", "effect": "NoSchedule"},
        {"key": "ai.example.com/node.usage", "value": "hybrid", "effect": "NoSchedule"},
    ]


def test_kai_warns_that_its_queues_do_not_hold_other_vendors_accelerators() -> None:
    comp = _compile("kai")
    warned = sorted((d.code, d.line) for d in comp.report.diagnostics)
    lines = TEXT.splitlines()
    mi300x = next(i for i, line in enumerate(lines, 1) if "vendor: amd" in line)
    ascend = next(i for i, line in enumerate(lines, 1) if "vendor: huawei-ascend" in line)
    assert warned == [("PC805", mi300x), ("PC805", ascend)]

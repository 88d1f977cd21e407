"""nodes/apply.sh: valid bash, clean under shellcheck, and correct against a fake kubectl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from policyc.compiler import Compilation

POLICY = """
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: nodes-test}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  controlPlane: {nodes: [cp-1]}
  gpuTiers:
    - {name: big, products: [NVIDIA-H100-80GB, NVIDIA-H20]}
    - {name: small, products: [NVIDIA-L4]}
  nodePools:
    - {name: train, usage: training, nodes: ["h100-[1-2]"], gpu: {product: NVIDIA-H100-80GB, count: 8}, rdma: true}
    - {name: mixed, usage: hybrid, nodes: [h20-1], gpu: {product: NVIDIA-H20, count: 8}}
    - name: serve
      usage: inference
      nodes: ["l4-[01-02]"]
      gpu: {product: NVIDIA-L4, count: 4, memory: 24Gi}
      gpuFeatureDiscovery: false
      labels: {topology.kubernetes.io/zone: a}
      taints: [{key: example.com/dedicated, value: serving, effect: NoExecute}]
"""

GFD = {"h100-1": "NVIDIA-H100-80GB", "h100-2": "NVIDIA-H100-80GB-SHARED", "h20-1": "NVIDIA-H20-MIG-1g.12gb"}


@pytest.fixture
def build(compile_text, tmp_path) -> Compilation:
    result = compile_text(POLICY)
    assert result.ok, [d.message for d in result.report.diagnostics]
    script = tmp_path / "apply.sh"
    script.write_bytes(result.files["nodes/apply.sh"].data)
    script.chmod(0o755)
    return result


class FakeCluster:
    def __init__(self, tmp_path: Path, nodes: dict):
        self.state, self.log = tmp_path / "state.json", tmp_path / "calls.jsonl"
        self.state.write_text(json.dumps(nodes))
        self.log.write_text("")
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        shim = self.bin / "kubectl"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).with_name("fake_kubectl.py")}" "$@"\n')
        shim.chmod(0o755)
        self.script = tmp_path / "apply.sh"

    def run(self, *args: str) -> subprocess.CompletedProcess:
        self.log.write_text("")
        env = {
            **os.environ,
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "FAKE_KUBECTL_STATE": str(self.state),
            "FAKE_KUBECTL_LOG": str(self.log),
        }
        env.pop("KUBECTL", None)
        return subprocess.run(["bash", str(self.script), *args], env=env, capture_output=True, text=True, timeout=60)

    @property
    def nodes(self) -> dict:
        return json.loads(self.state.read_text())

    @property
    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def _fresh_nodes(extra: dict | None = None) -> dict:
    names = ["cp-1", "h100-1", "h100-2", "h20-1", "l4-01", "l4-02", *(extra or {})]
    nodes = {n: {"labels": {"kubernetes.io/hostname": n}, "taints": []} for n in names}
    for n, product in GFD.items():
        nodes[n]["labels"]["nvidia.com/gpu.product"] = product
    return nodes


def _expected(result: Compilation) -> dict[str, tuple[dict, set]]:
    plan = json.loads(result.files["nodes/plan.json"].data)
    out = {}
    for pool in plan["pools"]:
        for node in pool["nodes"]:
            out[node] = (pool["labels"], {(t["key"], t.get("value", ""), t["effect"]) for t in pool["taints"]})
    for node in plan["controlPlane"]["nodes"]:
        out[node] = ({}, {(t["key"], t.get("value", ""), t["effect"]) for t in plan["controlPlane"]["taints"]})
    return out


def test_script_is_valid_bash(build) -> None:
    subprocess.run(["bash", "-n", "-c", build.files["nodes/apply.sh"].data.decode()], check=True)


def test_script_passes_shellcheck(build, tmp_path) -> None:
    if shutil.which("shellcheck") is None:
        if os.environ.get("CI"):
            pytest.fail("shellcheck is not installed (.ci/run installs it)")
        pytest.skip("shellcheck is not installed")
    subprocess.run(["shellcheck", "--severity=style", str(tmp_path / "apply.sh")], check=True)


def test_applies_the_plan_once_per_node_and_is_idempotent(build, tmp_path) -> None:
    cluster = FakeCluster(tmp_path, _fresh_nodes())
    first = cluster.run()
    assert first.returncode == 0, first.stderr
    expected = _expected(build)
    for name, (labels, taints) in expected.items():
        node = cluster.nodes[name]
        assert labels.items() <= node["labels"].items(), name
        assert {(t["key"], t["value"], t["effect"]) for t in node["taints"]} == taints, name
    assert cluster.nodes["h100-1"]["labels"]["kubernetes.io/hostname"] == "h100-1"  # not policyc's: untouched
    assert cluster.nodes["l4-01"]["labels"]["nvidia.com/gpu.memory"] == "24576"  # no GFD: policyc sets it
    mutating = [c for c in cluster.calls if c[0] in ("label", "taint")]
    assert sorted(c[:3] for c in mutating if c[0] == "taint") == sorted(["taint", "node", n] for n in expected)
    assert sorted(c[:3] for c in mutating if c[0] == "label") == sorted(
        ["label", "node", n] for n in expected if n != "cp-1"
    )
    state_after_first = cluster.nodes
    second = cluster.run()
    assert second.returncode == 0, second.stderr
    assert cluster.nodes == state_after_first
    assert not any(arg.endswith("-") for c in cluster.calls for arg in c[4:]), "a second run removes nothing"


def test_removes_stale_policyc_labels_and_taints_only(build, tmp_path) -> None:
    nodes = _fresh_nodes()
    nodes["h100-1"]["labels"].update({"ai.example.com/old-team": "x", "example.com/keep": "y"})
    nodes["h100-1"]["taints"] = [
        {"key": "ai.example.com/maintenance", "value": "", "effect": "NoExecute"},
        {"key": "example.com/other", "value": "z", "effect": "NoSchedule"},
    ]
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run()
    assert result.returncode == 0, result.stderr
    node = cluster.nodes["h100-1"]
    assert "ai.example.com/old-team" not in node["labels"]
    assert node["labels"]["example.com/keep"] == "y"
    keys = {t["key"] for t in node["taints"]}
    assert "ai.example.com/maintenance" not in keys and "example.com/other" in keys


def test_gpu_mismatch_changes_nothing(build, tmp_path) -> None:
    nodes = _fresh_nodes()
    nodes["h100-2"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run()
    assert result.returncode == 1
    assert "h100-2" in result.stderr and "NVIDIA-A100-SXM4-80GB" in result.stderr
    assert [c[0] for c in cluster.calls] == ["get"]
    assert cluster.nodes == nodes


def test_missing_nodes_are_skipped_with_a_warning(build, tmp_path) -> None:
    nodes = _fresh_nodes()
    del nodes["l4-02"]
    nodes["old-node"] = {"labels": {"ai.example.com/node.pool": "gone"}, "taints": []}
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run()
    assert result.returncode == 0, result.stderr
    assert "l4-02" in result.stderr and "old-node" in result.stderr
    assert cluster.nodes["old-node"]["labels"] == {"ai.example.com/node.pool": "gone"}


def test_dry_run_changes_nothing(build, tmp_path) -> None:
    nodes = _fresh_nodes()
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run("--dry-run")
    assert result.returncode == 0, result.stderr
    assert [c[0] for c in cluster.calls] == ["get"]
    assert cluster.nodes == nodes
    assert "label node h100-1 --overwrite" in result.stdout


def test_usage_error(build, tmp_path) -> None:
    assert FakeCluster(tmp_path, {}).run("--bogus").returncode == 2

"""nodes/apply.sh: valid bash, clean under shellcheck, and correct against a fake kubectl."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from policyc.compiler import Compilation
from tests.conftest import require_tool

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

FAKE_KUBECTL = Path(__file__).with_name("fake_kubectl.py")
GFD = {"h100-1": "NVIDIA-H100-80GB", "h100-2": "NVIDIA-H100-80GB-SHARED", "h20-1": "NVIDIA-H20-MIG-1g.12gb"}
LABELS_RECORD, TAINTS_RECORD = "ai.example.com/policyc.managed-labels", "ai.example.com/policyc.managed-taints"

# The next version of POLICY: h100-2 leaves pool train to become a control-plane node, so it no longer wants
# the domain labels of train, nor its ai.example.com/node.usage taint.
POLICY_V2 = POLICY.replace("nodes: [cp-1]", "nodes: [cp-1, h100-2]").replace('"h100-[1-2]"', "h100-1")


def compile_script(compile_text, tmp_path: Path, text: str, name: str = "apply.sh") -> Compilation:
    result = compile_text(text)
    assert result.ok, [d.message for d in result.report.diagnostics]
    script = tmp_path / name
    script.write_bytes(result.files["nodes/apply.sh"].data)
    script.chmod(0o755)
    return result


@pytest.fixture
def build(compile_text, tmp_path) -> Compilation:
    return compile_script(compile_text, tmp_path, POLICY)


class FakeCluster:
    def __init__(self, tmp_path: Path, nodes: dict):
        self.state, self.log = tmp_path / "state.json", tmp_path / "calls.jsonl"
        self.state.write_text(json.dumps(nodes))
        self.log.write_text("")
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        shim = self.bin / "kubectl"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_KUBECTL}" "$@"\n')
        shim.chmod(0o755)
        self.script = tmp_path / "apply.sh"

    def run(self, *args: str, script: Path | None = None) -> subprocess.CompletedProcess:
        self.log.write_text("")
        env = {
            **os.environ,
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "FAKE_KUBECTL_STATE": str(self.state),
            "FAKE_KUBECTL_LOG": str(self.log),
        }
        env.pop("KUBECTL", None)
        return subprocess.run(
            ["bash", str(script or self.script), *args], env=env, capture_output=True, text=True, timeout=60
        )

    @property
    def nodes(self) -> dict:
        return json.loads(self.state.read_text())

    @property
    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def patches(self, node: str) -> list[dict]:
        """The merge patches sent for `node`, parsed."""
        return [json.loads(c[6]) for c in self.calls if c[:3] == ["patch", "node", node]]


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


def require(tool: str) -> None:
    require_tool(tool, f"apt-get install {tool}")


def test_script_passes_shellcheck(build, tmp_path) -> None:
    require("shellcheck")
    subprocess.run(["shellcheck", "--severity=style", str(tmp_path / "apply.sh")], check=True)


def _record(node: dict) -> tuple[str, str]:
    annotations = node.get("annotations", {})
    return annotations.get(LABELS_RECORD), annotations.get(TAINTS_RECORD)


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
    assert sorted(c[:3] for c in cluster.calls if c[0] != "get") == sorted(
        [verb, "node", n] for n in expected for verb in ("patch", "taint")
    )
    state_after_first = cluster.nodes
    second = cluster.run()
    assert second.returncode == 0, second.stderr
    assert cluster.nodes == state_after_first
    assert not any(arg.endswith("-") for c in cluster.calls if c[0] == "taint" for arg in c[4:]), "nothing removed"
    assert not any(None in p["metadata"]["labels"].values() for n in expected for p in cluster.patches(n))


def test_first_run_writes_the_record_and_removes_nothing(build, tmp_path) -> None:
    """A node without a record: keys under the domain that policyc does not set now stay (perhaps an older
    policyc set them, perhaps another team); the run records what policyc sets."""
    nodes = _fresh_nodes()
    nodes["h100-1"]["labels"].update({"ai.example.com/old-label": "x", "example.com/keep": "y"})
    nodes["h100-1"]["taints"] = [
        {"key": "ai.example.com/maintenance", "value": "", "effect": "NoExecute"},
        {"key": "example.com/other", "value": "z", "effect": "NoSchedule"},
    ]
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run()
    assert result.returncode == 0, result.stderr
    node = cluster.nodes["h100-1"]
    assert node["labels"]["ai.example.com/old-label"] == "x" and node["labels"]["example.com/keep"] == "y"
    assert {"ai.example.com/maintenance", "example.com/other"} <= {t["key"] for t in node["taints"]}
    assert _record(node) == (
        "ai.example.com/gpu.tier,ai.example.com/node.pool,ai.example.com/node.usage",
        "ai.example.com/node.usage:NoSchedule",  # not nvidia.com/gpu.product: outside the domain
    )
    assert _record(cluster.nodes["cp-1"]) == ("", "ai.example.com/control-plane:NoSchedule")
    assert not [c for c in cluster.calls if c[0] == "taint" and any(a.endswith("-") for a in c[4:])]


def test_removes_what_it_set_and_no_longer_wants_and_nothing_else(compile_text, build, tmp_path) -> None:
    compile_script(compile_text, tmp_path, POLICY_V2, "apply-v2.sh")
    cluster = FakeCluster(tmp_path, _fresh_nodes())
    assert cluster.run().returncode == 0
    assert "ai.example.com/node.pool" in cluster.nodes["h100-2"]["labels"]
    state = cluster.nodes  # another team adds its own label and taint under the same domain
    state["h100-2"]["labels"]["ai.example.com/team-owner"] = "x"
    state["h100-2"]["taints"].append({"key": "ai.example.com/team-owner", "value": "x", "effect": "NoSchedule"})
    cluster.state.write_text(json.dumps(state))

    result = cluster.run(script=tmp_path / "apply-v2.sh")
    assert result.returncode == 0, result.stderr
    node = cluster.nodes["h100-2"]
    domain_labels = {k: v for k, v in node["labels"].items() if k.startswith("ai.example.com/")}
    assert domain_labels == {"ai.example.com/team-owner": "x"}
    assert {(t["key"], t["effect"]) for t in node["taints"]} == {
        ("ai.example.com/control-plane", "NoSchedule"),
        ("ai.example.com/team-owner", "NoSchedule"),
        ("nvidia.com/gpu.product", "NoSchedule"),  # set by v1 but outside the domain: never removed
    }
    assert node["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-SHARED"
    assert _record(node) == ("", "ai.example.com/control-plane:NoSchedule")
    assert cluster.nodes["h100-1"] == state["h100-1"], "h100-1 wants what it has"

    again = cluster.run(script=tmp_path / "apply-v2.sh")
    assert again.returncode == 0, again.stderr
    assert cluster.nodes == {**state, "h100-2": node}


def test_a_recorded_key_already_gone_is_not_removed_again(compile_text, build, tmp_path) -> None:
    compile_script(compile_text, tmp_path, POLICY_V2, "apply-v2.sh")
    cluster = FakeCluster(tmp_path, _fresh_nodes())
    assert cluster.run().returncode == 0
    state = cluster.nodes  # someone removed them by hand
    del state["h100-2"]["labels"]["ai.example.com/node.pool"]
    state["h100-2"]["taints"] = [t for t in state["h100-2"]["taints"] if t["key"] != "ai.example.com/node.usage"]
    cluster.state.write_text(json.dumps(state))
    result = cluster.run(script=tmp_path / "apply-v2.sh")
    assert result.returncode == 0, result.stderr  # the fake kubectl fails on removing a taint that is not there
    [patch] = cluster.patches("h100-2")
    assert patch["metadata"]["labels"] == {"ai.example.com/gpu.tier": None, "ai.example.com/node.usage": None}


def test_labels_and_record_are_written_in_one_call(compile_text, build, tmp_path) -> None:
    compile_script(compile_text, tmp_path, POLICY_V2, "apply-v2.sh")
    cluster = FakeCluster(tmp_path, _fresh_nodes())
    assert cluster.run().returncode == 0
    result = cluster.run(script=tmp_path / "apply-v2.sh")
    assert result.returncode == 0, result.stderr
    assert {c[0] for c in cluster.calls} == {"get", "taint", "patch"}, "labels are set by the patch only"
    [patch] = cluster.patches("h100-2")
    assert patch == {
        "metadata": {
            "labels": {
                "ai.example.com/gpu.tier": None,
                "ai.example.com/node.pool": None,
                "ai.example.com/node.usage": None,
            },
            "annotations": {LABELS_RECORD: "", TAINTS_RECORD: "ai.example.com/control-plane:NoSchedule"},
        }
    }
    [patch] = cluster.patches("h100-1")
    assert patch["metadata"]["labels"]["ai.example.com/node.pool"] == "train"
    assert patch["metadata"]["annotations"][LABELS_RECORD].split(",") == [
        "ai.example.com/gpu.tier",
        "ai.example.com/node.pool",
        "ai.example.com/node.usage",
    ]
    [taint] = [c for c in cluster.calls if c[:3] == ["taint", "node", "h100-2"]]
    assert "ai.example.com/node.usage:NoSchedule-" in taint


def test_a_recorded_key_is_escaped_in_the_json(build, tmp_path) -> None:
    """The API server allows no '"' or '\\' in a label key, but the script escapes them anyway."""
    odd = 'ai.example.com/a"b\\c'
    cluster = FakeCluster(tmp_path, _fresh_nodes())
    assert cluster.run().returncode == 0
    state = cluster.nodes
    state["h100-1"]["labels"][odd] = "x"
    state["h100-1"]["annotations"][LABELS_RECORD] += "," + odd
    cluster.state.write_text(json.dumps(state))
    result = cluster.run()
    assert result.returncode == 0, result.stderr
    assert odd not in cluster.nodes["h100-1"]["labels"]
    assert cluster.nodes["h100-1"]["labels"]["ai.example.com/node.pool"] == "train"


def kubectl_local(name: str, node: dict, patch: str, output: str) -> str:
    """What the real kubectl prints for `node` merge-patched with `patch`, offline (`patch --local`)."""
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node["labels"], "annotations": node.get("annotations", {})},
        "spec": {"taints": node["taints"]},
    }
    cmd = ["kubectl", "patch", "--local", "-f", "-", "--type", "merge", "-p", patch, "-o", output]
    env = {**os.environ, "KUBECONFIG": os.devnull}
    return subprocess.run(cmd, input=json.dumps(obj), env=env, capture_output=True, text=True, check=True).stdout


def test_fake_kubectl_answers_like_kubectl(compile_text, build, tmp_path) -> None:
    """The fake's answer to the script's go-template, and its merge patch, are the real kubectl's."""
    require("kubectl")
    v2 = compile_script(compile_text, tmp_path, POLICY_V2, "apply-v2.sh")
    cluster = FakeCluster(tmp_path, _fresh_nodes())
    assert cluster.run().returncode == 0
    before = cluster.nodes
    before["h100-2"]["labels"]["ai.example.com/team-owner"] = "x"
    before["h100-2"]["annotations"]["example.com/note"] = "not a record"
    cluster.state.write_text(json.dumps(before))

    template = re.search(r"^TEMPLATE='(.*)'$", v2.files["nodes/apply.sh"].data.decode(), re.MULTILINE).group(1)
    env = {**os.environ, "FAKE_KUBECTL_STATE": str(cluster.state), "FAKE_KUBECTL_LOG": str(cluster.log)}
    fake = subprocess.run(
        [sys.executable, str(FAKE_KUBECTL), "get", "nodes", "-o", f"go-template={template}"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    per_node = template.removeprefix("{{range .items}}").removesuffix("{{end}}")
    real = "".join(kubectl_local(n, node, "{}", f"go-template={per_node}") for n, node in before.items())
    assert fake == real
    assert "\tlabels\t" in fake and "\ttaints\t" in fake

    assert cluster.run(script=tmp_path / "apply-v2.sh").returncode == 0
    for name, node in before.items():
        [patch] = [c[6] for c in cluster.calls if c[:3] == ["patch", "node", name]]
        metadata = json.loads(kubectl_local(name, node, patch, "json"))["metadata"]
        after = cluster.nodes[name]
        assert metadata["labels"] == after["labels"], name
        assert metadata.get("annotations", {}) == after.get("annotations", {}), name


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
    nodes["old-node"] = {
        "labels": {"ai.example.com/node.pool": "gone"},
        "taints": [],
        "annotations": {LABELS_RECORD: "ai.example.com/node.pool"},
    }
    nodes["other-team"] = {"labels": {"ai.example.com/team-owner": "x"}, "taints": []}  # no record: not policyc's
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run()
    assert result.returncode == 0, result.stderr
    assert "l4-02" in result.stderr and "old-node" in result.stderr and "other-team" not in result.stderr
    assert cluster.nodes["old-node"] == nodes["old-node"]
    assert cluster.nodes["other-team"] == nodes["other-team"]


def test_dry_run_changes_nothing(build, tmp_path) -> None:
    nodes = _fresh_nodes()
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run("--dry-run")
    assert result.returncode == 0, result.stderr
    assert [c[0] for c in cluster.calls] == ["get"]
    assert cluster.nodes == nodes
    assert "kubectl taint node h100-1 --overwrite" in result.stdout
    assert "kubectl patch node h100-1 --type merge -p" in result.stdout


def test_usage_error(build, tmp_path) -> None:
    assert FakeCluster(tmp_path, {}).run("--bogus").returncode == 2


# The h20 pool partitioned by MIG: setting its nodes' layout label makes the MIG manager repartition their cards.
MIG_POLICY = POLICY.replace(
    "gpu: {product: NVIDIA-H20, count: 8}}", "gpu: {product: NVIDIA-H20, count: 8, mig: {devices: {1g.12gb: 7}}}}"
)


def test_a_node_is_repartitioned_only_when_asked(compile_text, tmp_path) -> None:
    compile_script(compile_text, tmp_path, MIG_POLICY)
    for live in (None, "all-disabled"):  # not partitioned by a label yet, or by the GPU Operator's default layout
        nodes = _fresh_nodes()
        if live:
            nodes["h20-1"]["labels"]["nvidia.com/mig.config"] = live
        here = tmp_path / (live or "unlabelled")
        here.mkdir()
        cluster = FakeCluster(here, nodes)
        cluster.script = tmp_path / "apply.sh"
        result = cluster.run()
        assert result.returncode == 1, result.stderr
        assert f"node h20-1 of pool mixed has MIG layout {live or '(none)'}" in result.stderr
        assert "--repartition-mig" in result.stderr
        assert [c[0] for c in cluster.calls] == ["get"] and cluster.nodes == nodes  # nothing changed
        result = cluster.run("--repartition-mig")
        assert result.returncode == 0, result.stderr
        assert cluster.nodes["h20-1"]["labels"]["nvidia.com/mig.config"] == "policyc-1g.12gbx7"
        # Once the layout is the policy's, later runs need no flag.
        assert cluster.run().returncode == 0


def test_repartitioning_combines_with_a_dry_run(compile_text, tmp_path) -> None:
    compile_script(compile_text, tmp_path, MIG_POLICY)
    nodes = _fresh_nodes()
    cluster = FakeCluster(tmp_path, nodes)
    result = cluster.run("--dry-run", "--repartition-mig")
    assert result.returncode == 0, result.stderr
    assert cluster.nodes == nodes
    patch = next(line for line in result.stdout.splitlines() if line.startswith("kubectl patch node h20-1"))
    assert "nvidia.com/mig.config" in patch and "policyc-1g.12gbx7" in patch

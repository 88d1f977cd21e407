"""Node agents (the GPU Operator's DaemonSets, and any the policy names) survive policyc's taints.

The tolerations policyc emits for them are checked here as a DaemonSet's pods would meet the nodes: read back from
the written files, against every node of the node plan with kube-scheduler's taint filter."""

from __future__ import annotations

import io
import json

import kubernetes_validate
import pytest
from ruamel.yaml import YAML

from policyc.compiler import compile_file
from policyc.k8s.scheduling import taint_filter
from tests.conftest import example_policies

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: agents}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  gpuTiers: [{name: big, products: [NVIDIA-H100-80GB]}]
  nodePools:
    - {name: train, usage: training, nodes: ["t-[1-3]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
    - {name: vip, usage: inference, nodes: ["v-[1-2]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi},
       taints: [{key: example.com/dedicated, value: vip, effect: NoExecute}]}
  tenants: [{name: ml, namespaces: [ml]}]
"""


def _files(compile_text, text: str) -> dict[str, bytes]:
    result = compile_text(text)
    assert result.ok, [d.message for d in result.report.diagnostics]
    return {path: f.data for path, f in result.files.items()}


def _plan_nodes(files: dict[str, bytes]) -> list[dict]:
    """Every node of the plan; a pool by size (no names) as one node named after it."""
    plan = json.loads(files["nodes/plan.json"])
    return [
        {"metadata": {"name": node}, "spec": {"taints": pool["taints"]}}
        for pool in plan["pools"]
        for node in pool.get("nodes", [pool["name"]])
    ]


def _daemonset_pod(tolerations: list[dict]) -> dict:
    return {"spec": {"containers": [{"name": "agent", "image": "x"}], "tolerations": tolerations}}


@pytest.mark.parametrize("policy", example_policies(), ids=lambda p: p.stem)
def test_gpu_operator_daemonsets_with_the_emitted_tolerations_run_on_every_gpu_node(policy) -> None:
    result = compile_file(policy, policy.name)
    files = {path: f.data for path, f in result.files.items()}
    values = YAML(typ="safe").load(io.BytesIO(files["nodes/gpu-operator-values.yaml"]))
    nodes = _plan_nodes(files)
    assert nodes
    for tolerations in (values["daemonsets"]["tolerations"], values["node-feature-discovery"]["worker"]["tolerations"]):
        refused = [n["metadata"]["name"] for n in nodes if not taint_filter(_daemonset_pod(tolerations), n).admit]
        assert refused == []
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "gpu-operator"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                **_daemonset_pod(values["daemonsets"]["tolerations"]),
            },
        },
    }
    kubernetes_validate.validate(daemonset, result.cluster.kubernetes_version, strict=True)
    # The chart's default alone (nvidia.com/gpu Exists) is refused by every GPU node: what the file fixes.
    default = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert all(not taint_filter(_daemonset_pod(default), n).admit for n in nodes)


def test_agent_tolerations_cover_a_pools_own_taints(compile_text) -> None:
    files = _files(compile_text, POLICY)
    tolerations = YAML(typ="safe").load(io.BytesIO(files["nodes/agent-tolerations.yaml"]))
    assert {"key": "example.com/dedicated", "operator": "Equal", "value": "vip", "effect": "NoExecute"} in tolerations
    vip = [n for n in _plan_nodes(files) if n["metadata"]["name"].startswith("v-")]
    assert vip and all(taint_filter(_daemonset_pod(tolerations), n).admit for n in vip)
    without = [t for t in tolerations if t["key"] != "example.com/dedicated"]
    assert not any(taint_filter(_daemonset_pod(without), n).admit for n in vip)


def test_an_agent_whose_tolerations_miss_a_taint_is_reported(compile_text) -> None:
    text = POLICY + (
        "  nodeAgents:\n"
        "    - name: rdma-shared-dp-ds\n"
        "      namespace: network-operator\n"
        "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule},\n"
        "                    {key: ai.example.com/node.usage, operator: Exists}]\n"
    )
    result = compile_text(text)
    [d] = result.report.errors
    assert (
        d.code == "PC508"
        and d.line
        == text.splitlines().index("      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule},")
        + 1
    )
    assert "node agent 'network-operator/rdma-shared-dp-ds' cannot run on pool 'train' (and 'vip')" in d.message
    assert "nvidia.com/gpu.product=NVIDIA-H100-80GB:NoSchedule is not tolerated" in d.message
    labelled = text.replace(
        "{key: ai.example.com/node.usage, operator: Exists}]",
        "{key: ai.example.com/node.usage, operator: Exists},\n                    "
        "{key: nvidia.com/gpu.product, operator: Exists}, {key: example.com/dedicated, operator: Exists}]",
    )
    # Every taint of the labelled nodes tolerated, the agent still misses the nodes as they register: it must set
    # them up before nodes/release.sh releases them.
    [d] = compile_text(labelled).report.errors
    assert d.code == "PC508" and "on pool 'train' (and 'vip'): as they register, taint " in d.message
    assert "ai.example.com/node.registering:NoSchedule is not tolerated" in d.message
    fixed = labelled.replace(
        "{key: example.com/dedicated, operator: Exists}]",
        "{key: example.com/dedicated, operator: Exists},\n                    "
        "{key: ai.example.com/node.registering, operator: Exists}]",
    )
    assert compile_text(fixed).ok


def test_an_agent_limited_to_some_pools_is_proved_only_there(compile_text) -> None:
    text = POLICY + (
        "  nodeAgents:\n"
        "    - {name: dcgm, namespace: monitoring, pools: [train],\n"
        "       tolerations: [{key: ai.example.com/node.usage, operator: Exists},\n"
        "                     {key: nvidia.com/gpu.product, operator: Exists},\n"
        "                     {key: ai.example.com/node.registering, operator: Exists}]}\n"
    )
    assert compile_text(text).ok
    unknown = compile_text(text.replace("pools: [train]", "pools: [trian]"))
    assert [(d.code, d.hint) for d in unknown.report.errors] == [("PC312", "did you mean 'train'?")]


def test_a_tenant_may_not_own_a_node_agents_namespace(compile_text) -> None:
    text = POLICY.replace("namespaces: [ml]", "namespaces: [monitoring]") + (
        "  nodeAgents: [{name: dcgm, namespace: monitoring}]\n"
    )
    [d] = compile_text(text).report.errors
    assert d.code == "PC430" and "where node agent 'dcgm' runs" in d.message

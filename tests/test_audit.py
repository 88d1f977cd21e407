"""`policyc audit` on dumps recorded from a real API server (`$POLICYC_SHARED/testdata/cluster-dumps`): exactly the
drift each describes, nothing on the clean ones but what the recording accounts for; and on dumps made from them for
the rules the recordings lack."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from policyc.codes import Severity
from tests.audit_helpers import DUMPS, built_of, compiled, items_of, keys, named, policy_of, recorded, run, write_dump
from tests.conftest import REPO, missing_shared_data

EXPECTS = sorted(DUMPS.glob("*/*.expect.json"))
"""Every recorded dump with its description; held-back variants added later are picked up."""

CAPACITY_KEY = ("capacity-short", None, None, None)
CAPACITY = {
    # team-b is guaranteed 48 nvidia.com/gpu and can use l4-serve (4 GPUs a node) and t4-serve (2 a node). The
    # recording created the first 5 nodes of each pool: 5 * 4 + 5 * 2 = 30 < 48 (with every node: 40 * 4 + 11 * 2).
    "ai-prod": "tenant 'team-b' is guaranteed 48 nvidia.com/gpu, but the pools it can use have 30 (l4-serve 20, "
    "t4-serve 10)",
    # The first 6 nodes of each pool: 6 * 4 + 6 * 2 = 36 < 48.
    "ai-prod-kueue": "tenant 'team-b' is guaranteed 48 nvidia.com/gpu, but the pools it can use have 36 (l4-serve 24, "
    "t4-serve 12)",
    "ai-prod-kai": "tenant 'team-b' is guaranteed 48 nvidia.com/gpu, but the pools it can use have 36 (l4-serve 24, "
    "t4-serve 12)",
    # minimal and ai-hetero: every node of the plan was created, so the policy's own check (which passed) holds.
}
"""Per policy, the one guarantee the nodes the recording created cannot hold (the others' pools have enough)."""


def expected_keys(expect: dict, stem: str) -> set[tuple]:
    """What the description says the audit must find: the drift, and what the recording accounts for."""
    drift = {(expect["category"], o["kind"], o["namespace"], o["name"]) for o in expect["objects"]}
    missing_nodes = {("node-missing", "Node", None, name) for name in expect["nodes_not_created"]}
    refused = {("object-missing", o["kind"], o["namespace"], o["name"]) for o in expect["refused_on_apply"]}
    return drift | missing_nodes | refused | ({CAPACITY_KEY} if stem in CAPACITY else set())


@pytest.mark.parametrize("expect_path", EXPECTS or [None], ids=lambda p: f"{p.parent.name}/{p.stem}" if p else "none")
def test_a_recorded_dump_gives_exactly_its_drift(expect_path: Path | None) -> None:
    if expect_path is None:
        missing_shared_data(DUMPS)
    stem = expect_path.parent.name
    expect = json.loads(expect_path.read_text(encoding="utf-8"))
    assert expect["category"] == "none" or expect["objects"], "a drift names its objects"
    report = run(policy_of(stem), expect_path.with_name(expect_path.name.replace(".expect", "")), built=built_of(stem))
    assert keys(report) == expected_keys(expect, stem)
    capacity = [d for d in report.diagnostics if d.rule.name == "capacity-short"]
    assert [d.message for d in capacity] == ([f"with the nodes the cluster has now, {CAPACITY[stem]}"]
                                             if stem in CAPACITY else [])  # fmt: skip
    for d in report.diagnostics:
        assert d.line is not None and d.hint, d
        assert d.severity is (Severity.WARNING if d.rule.name in ("node-missing", "capacity-short") else Severity.ERROR)


def test_every_recorded_policy_is_vendored() -> None:
    stems = {p.parent.name for p in EXPECTS} or missing_shared_data(DUMPS)
    for stem in stems:
        assert policy_of(stem).is_file() and (built_of(stem) / "kustomization.yaml").is_file(), stem


# Today's build against the clean recordings: what changed in policyc since b0c04fe, by hand.
NFD_POOLS = {
    # nfd/static-pools.yaml came after the recording: a NodeFeatureRule per static pool, absent from the cluster
    "minimal": ["train"],
    "ai-prod": ["h100-train", "a100-train", "h20-hybrid", "a40-dev", "l4-serve", "t4-serve", "h100-slurm"],
    "ai-prod-kueue": ["h100-train", "a100-train", "h20-hybrid", "a40-dev", "l4-serve", "t4-serve"],
    "ai-prod-kai": ["h100-train", "a100-train", "h20-hybrid", "a40-dev", "l4-serve", "t4-serve"],
    "ai-hetero": ["h100-ib", "a100-mig", "l4-dev", "mi300x", "ascend", "cpu"],
}
TENANTS = {
    # each tenant's ValidatingAdmissionPolicy was rewritten since (its variables and validations): the cluster holds
    # the recorded build's, as its last kubectl apply left it
    "minimal": ["ml"],
    "ai-prod": ["team-a", "team-b", "research"],
    "ai-prod-kueue": ["team-a", "team-b", "research"],
    "ai-prod-kai": ["team-a", "team-b", "research"],
    "ai-hetero": ["llm", "serving", "dev", "research", "search"],
}


@pytest.mark.parametrize("stem", sorted(NFD_POOLS))
def test_todays_build_on_a_clean_recording(stem: str) -> None:
    dump = DUMPS / stem / "clean.json"
    if not dump.is_file():
        missing_shared_data(dump)
    recorded_build = keys(run(policy_of(stem), dump, built=built_of(stem)))
    today = keys(run(policy_of(stem), dump))
    added = {("object-missing", "NodeFeatureRule", None, f"policyc-pool-{p}") for p in NFD_POOLS[stem]}
    added |= {("object-outdated", "ValidatingAdmissionPolicy", None, f"policyc-tenant-{t}") for t in TENANTS[stem]}
    assert today - recorded_build == added
    # the MutatingAdmissionPolicies the server refused at the recording are still in today's build (still missing)
    assert recorded_build - today == set()


# --- the rules the recordings lack, on dumps made from them ----------------------------------------------------


def test_a_pod_its_contract_refuses_for_another_reason(tmp_path: Path) -> None:
    items = items_of("minimal")
    pod = named(items, "Pod", "train-job-worker-0")
    pod["spec"]["schedulerName"] = "default-scheduler"  # not Volcano, which the tenant's queue needs
    pod["status"]["conditions"] = []  # no scheduler bound it: its creator set spec.nodeName
    report = run(policy_of("minimal"), write_dump(tmp_path, items), built=built_of("minimal"))
    assert keys(report) == {("pod-contract", "Pod", "ml", "train-job-worker-0")}
    (finding,) = report.diagnostics
    assert "rule scheduler-name" in finding.message and "rule node-name" in finding.message
    assert finding.hint.endswith("`kubectl delete pod -n ml train-job-worker-0`")


def test_a_pod_bound_by_the_scheduler_keeps_the_node_name_rule() -> None:
    dump = DUMPS / "minimal" / "clean.json"
    if not dump.is_file():
        missing_shared_data(dump)
    # the recorded pod has spec.nodeName (set by the scheduler's binding) and no finding
    assert named(recorded(dump)["items"], "Pod", "train-job-worker-0")["spec"]["nodeName"] == "gpu-1"
    assert keys(run(policy_of("minimal"), dump, built=built_of("minimal"))) == set()


def test_an_object_as_its_last_apply_left_it_is_outdated(tmp_path: Path) -> None:
    items = items_of("minimal")
    quota = named(items, "ResourceQuota", "tenant-forbidden-priority-classes")
    quota["spec"]["hard"]["pods"] = "2"
    annotations = quota["metadata"]["annotations"]
    applied = json.loads(annotations["kubectl.kubernetes.io/last-applied-configuration"])
    applied["spec"]["hard"]["pods"] = "2"  # another build applied it so
    annotations["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(applied)
    report = run(policy_of("minimal"), write_dump(tmp_path, items), built=built_of("minimal"))
    assert keys(report) == {("object-outdated", "ResourceQuota", "ml", "tenant-forbidden-priority-classes")}
    (finding,) = report.diagnostics
    assert finding.severity is Severity.WARNING
    assert "spec.hard.pods is 2, the build says 0" in finding.message


def test_quantities_compare_as_quantities(tmp_path: Path) -> None:
    items = items_of("minimal")
    named(items, "Queue", "ml")["spec"]["guarantee"]["resource"]["nvidia.com/gpu"] = "8000m"  # 8, written otherwise
    assert keys(run(policy_of("minimal"), write_dump(tmp_path, items), built=built_of("minimal"))) == set()


def test_argocd_bookkeeping_is_not_a_difference(tmp_path: Path) -> None:
    items = items_of("minimal")
    named(items, "Queue", "ml")["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] = "7"
    assert keys(run(policy_of("minimal"), write_dump(tmp_path, items), built=built_of("minimal"))) == set()


def test_a_missing_node_is_an_error_with_strict(tmp_path: Path) -> None:
    items = [i for i in items_of("minimal") if i["metadata"]["name"] != "gpu-4"]
    dump = write_dump(tmp_path, items)
    (warning,) = run(policy_of("minimal"), dump, built=built_of("minimal")).diagnostics
    (error,) = run(policy_of("minimal"), dump, built=built_of("minimal"), strict=True).diagnostics
    assert (warning.rule.name, warning.severity) == ("node-missing", Severity.WARNING)
    assert (error.rule.name, error.severity) == ("node-missing", Severity.ERROR)
    assert error.subject is not None and error.subject.name == "gpu-4"


EKS = REPO / "policies" / "ai-eks.yaml"


def _sized_node(name: str, pool: str) -> dict:
    """A node Karpenter made for a pool of ai-eks, as the pool's provisioning labels and taints it."""
    cluster = compiled(EKS).cluster
    assert cluster is not None
    p = next(p for p in cluster.pools if p.name == pool)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(p.labels)},
        "spec": {"taints": [t.to_dict() for t in p.taints]},
        "status": {"capacity": {p.resource: str(p.gpus_per_node)}, "allocatable": {p.resource: str(p.gpus_per_node)}},
    }


def test_a_node_of_a_pool_by_size_is_known_by_its_pool_label(tmp_path: Path) -> None:
    kept, tainted = _sized_node("ip-10-0-1-1", "h100-train"), _sized_node("ip-10-0-1-2", "h100-train")
    dropped = tainted["spec"]["taints"].pop(0)
    report = run(EKS, write_dump(tmp_path, [kept, tainted]))
    nodes = {k for k in keys(report) if k[1] == "Node"}
    assert nodes == {("node-taints", "Node", None, "ip-10-0-1-2")}, "no node-missing: a pool by size names none"
    (finding,) = [d for d in report.diagnostics if d.rule.name == "node-taints"]
    assert f"lacks taint {dropped['key']}={dropped['value']}:{dropped['effect']}" in finding.message
    cluster = compiled(EKS).cluster
    assert cluster is not None and finding.path == next(p.path for p in cluster.pools if p.name == "h100-train")


def test_a_gpu_node_of_no_pool_by_its_capacity_alone(tmp_path: Path) -> None:
    items = items_of("minimal")
    items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "stray", "labels": {}},
                  "spec": {}, "status": {"capacity": {"nvidia.com/gpu": "2"}}})  # fmt: skip
    items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-only", "labels": {}},
                  "spec": {}, "status": {"capacity": {"cpu": "8"}}})  # fmt: skip
    report = run(policy_of("minimal"), write_dump(tmp_path, items), built=built_of("minimal"))
    assert keys(report) == {("unmanaged-node", "Node", None, "stray")}


# --- a hint followed --------------------------------------------------------------------------------------------


def _label_command(hint: str) -> tuple[str, dict[str, str | None]]:
    """The node and the labels of the quoted `kubectl label node NAME k=v k- ...` of a hint (None: remove)."""
    (command,) = re.findall(r"`(kubectl label node [^`]+)`", hint)
    words = [w for w in shlex.split(command) if w != "--overwrite"]
    node, changes = words[3], {}
    for word in words[4:]:
        key, _, value = word.partition("=")
        changes[key.removesuffix("-") if not value else key] = value or None
    return node, changes


@pytest.mark.parametrize("stem, drift", [("ai-prod", "drift-01-node-label-removed"),
                                         ("ai-prod", "drift-03-node-label-extra"),
                                         ("minimal", "drift-02-node-label-wrong-value")])  # fmt: skip
def test_the_label_hint_followed_clears_the_finding(stem: str, drift: str, tmp_path: Path) -> None:
    dump = DUMPS / stem / f"{drift}.json"
    if not dump.is_file():
        missing_shared_data(dump)
    (finding,) = [
        d for d in run(policy_of(stem), dump, built=built_of(stem)).diagnostics if d.rule.name == "node-labels"
    ]
    node, changes = _label_command(finding.hint or "")
    items = items_of(stem, drift)
    labels = named(items, "Node", node)["metadata"]["labels"]
    for key, value in changes.items():  # what kubectl label does
        if value is None:
            del labels[key]
        else:
            labels[key] = value
    after = keys(run(policy_of(stem), write_dump(tmp_path, items), built=built_of(stem)))
    assert not any(rule == "node-labels" for rule, *_ in after)


def test_the_taint_hint_names_what_to_put_back() -> None:
    dump = DUMPS / "minimal" / "drift-04-node-taint-removed.json"
    if not dump.is_file():
        missing_shared_data(dump)
    (finding,) = run(policy_of("minimal"), dump, built=built_of("minimal")).diagnostics
    assert finding.hint is not None
    assert "`kubectl taint node gpu-1 gpu.example.org/node.usage=training:NoSchedule`" in finding.hint


TWO_USAGES = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata:
  name: two-usages
spec:
  kubernetesVersion: "1.33"
  domain: gpu.example.org
  gpuTiers:
    - name: a100
      products: [NVIDIA-A100-SXM4-40GB]
  nodePools:
    - name: train
      usage: training
      nodes: ["gpu-[1-2]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}
      allocatable: {cpu: "128", memory: 1000Gi}
    - name: serve
      usage: inference
      nodes: ["gpu-[3-4]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}
      allocatable: {cpu: "128", memory: 1000Gi}
  tenants:
    - name: ml
      namespaces: [ml]
  workloads:
    - name: train-job
      type: training
      tenant: ml
      gpuTier: a100
      gpus: 8
    - name: chat
      type: inference
      tenant: ml
      gpuTier: a100
      gpus: 1
"""


def test_a_pod_on_a_granted_pool_of_another_usage_than_its_workload(tmp_path: Path) -> None:
    policy = tmp_path / "two-usages.yaml"
    policy.write_text(TWO_USAGES, encoding="utf-8")
    cluster = compiled(policy).cluster
    assert cluster is not None
    nodes = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": dict(p.labels)},
         "spec": {"taints": [t.to_dict() for t in p.taints]}, "status": {}}
        for p in cluster.pools for n in p.nodes
    ]  # fmt: skip

    def pod(name: str, workload: str, node: str) -> dict:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "ml", "labels": {"app.kubernetes.io/name": workload}},
                "spec": {"nodeName": node, "schedulerName": "volcano"},
                "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}}  # fmt: skip

    # the serving pod on the training pool: the tenant is granted it (for train-job), not for chat, which is inference
    pods = [pod("chat-0", "chat", "gpu-1"), pod("chat-1", "chat", "gpu-3"), pod("train-0", "train-job", "gpu-2")]
    report = run(policy, write_dump(tmp_path, nodes + pods))
    assert {k for k in keys(report) if k[1] == "Pod"} == {("pod-placement", "Pod", "ml", "chat-0")}
    (finding,) = [d for d in report.diagnostics if d.subject and d.subject.kind == "Pod"]
    assert "pool train is of usage training, its workload chat is inference" in finding.message

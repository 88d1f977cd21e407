"""policyc explain: the placement matrix with reasons, and the policy lines behind each object."""

from __future__ import annotations

import json

from click.testing import CliRunner

from policyc.commands.cli import main
from tests.conftest import REPO

AI_PROD = str(REPO / "policies" / "ai-prod.yaml")


def explain(*args: str):
    return CliRunner().invoke(main, ["explain", *args])


def line_of(text: str) -> int:
    return (REPO / "policies" / "ai-prod.yaml").read_text().splitlines().index(text) + 1


def test_matrix_of_the_full_example() -> None:
    result = explain(AI_PROD)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("workload"))
    assert header.split() == ["workload", "a100-train", "a40-dev", "h100-slurm", "h100-train", "h20-hybrid",
                              "l4-serve", "t4-serve", "(control", "plane)"]  # fmt: skip
    row = next(line for line in lines if line.startswith("llm-pretraining"))
    assert row.split()[2:] == ["P", ".", ".", "P", "A", ".", ".", "."]  # h100-slurm: Slurm's only
    assert any(line.startswith("chat-serving (pod) -> h20-hybrid (hybrid, high-performance): rejected: expression "
                               "ai.example.com/gpu.tier In [inference] does not match (node has 'high-performance')")
               for line in lines)  # fmt: skip


def test_filters_and_json() -> None:
    result = explain(AI_PROD, "--workload", "vision-dev", "--format", "json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)["placement"]
    assert {r["workload"] for r in rows} == {"vision-dev"}
    verdicts = {r["pool"]: r["verdict"] for r in rows}
    assert verdicts["a40-dev"] == "preferred"
    assert verdicts["(control plane)"] == "rejected"
    assert set(rows[0]) == {"workload", "role", "pool", "usage", "tier", "verdict", "score", "reason"}
    one = explain(AI_PROD, "--pool", "l4-serve", "--format", "json")
    assert {r["pool"] for r in json.loads(one.stdout)["placement"]} == {"l4-serve"}


def test_unknown_names_are_usage_errors_with_a_hint() -> None:
    result = explain(AI_PROD, "--pool", "l4-serv")
    assert result.exit_code == 2 and "did you mean 'l4-serve'?" in result.output


def test_provenance_points_at_the_policy_lines() -> None:
    result = explain(AI_PROD, "--object", "Queue/team-b")
    assert result.exit_code == 0, result.output
    queue_line = next(i + 1 for i, text in enumerate((REPO / "policies" / "ai-prod.yaml").read_text().splitlines())
                      if text.strip().startswith("queue: {weight: 2"))  # fmt: skip
    assert result.stdout.strip() == (f"volcano/queues.yaml: Queue team-b <- {AI_PROD}:{queue_line}:14 "
                                     "'tenants[1].queue'")  # fmt: skip
    by_file = explain(AI_PROD, "--object", "tenants/team-b.yaml")
    # 2 namespaces x (namespace, quota, forbidden-classes quota), and its admission: 2 policies and 2 bindings
    assert by_file.stdout.count("\n") == 2 * 3 + 2 * 2
    assert explain(AI_PROD, "--object", "Queue/nope").exit_code == 2


def test_explain_shows_the_matrix_of_a_failing_policy(tmp_path) -> None:
    bad = tmp_path / "p.yaml"
    zoned = "      gpus: 8\n      nodeSelector: {topology.kubernetes.io/zone: z}\n"
    text = (REPO / "policies" / "minimal.yaml").read_text().replace("      gpus: 8\n", zoned)
    bad.write_text(text)
    result = explain(str(bad))
    assert result.exit_code == 1
    assert "Placement" in result.stdout and "nodeSelector topology.kubernetes.io/zone=z does not match" in result.stdout
    assert "error PC504" in result.stderr


def test_provenance_of_a_script_names_the_pools_and_the_control_plane() -> None:
    result = explain(AI_PROD, "--object", "nodes/apply.sh")
    assert result.exit_code == 0, result.output
    [row] = result.stdout.strip().splitlines()
    assert row.startswith(f"nodes/apply.sh <- {AI_PROD}:{line_of('  domain: ai.example.com')}:")
    places = row.split(" <- ", 1)[1].split("; ")
    assert [p.split(" ", 1)[1] for p in places] == [
        "'domain'",
        "'controlPlane'",
        *(f"'nodePools[{i}]'" for i in range(7)),
    ]  # in file order


# --- explain --pod ------------------------------------------------------------------------------------------

SNEAKY = """\
apiVersion: v1
kind: Pod
metadata: {name: sneaky, namespace: ai-team-a}
spec:
  schedulerName: volcano
  tolerations: [{operator: Exists}]
  containers: [{name: c, image: busybox}]
"""


def _pod(tmp_path, text: str = SNEAKY) -> str:
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    return str(path)


def test_pod_with_a_wildcard_toleration_is_warned_about_in_warn_mode_and_lands_anywhere(tmp_path) -> None:
    result = explain(AI_PROD, "--pod", _pod(tmp_path))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Pod ai-team-a/sneaky (tenant team-a, admission mode warn)"
    assert lines[1] == "admission: admitted with warnings"
    assert "(rule wildcard-toleration)" in lines[2] and lines[3] == "placement:"
    assert "  pod -> (control plane): admitted" in lines  # what the policy exists to stop


def test_pod_refused_in_deny_mode_names_every_rule_it_breaks(tmp_path) -> None:
    text = (REPO / "policies" / "ai-prod.yaml").read_text().replace("spec:\n", "spec:\n  admission: {mode: deny}\n", 1)
    policy = tmp_path / "deny.yaml"
    policy.write_text(text)
    pod = SNEAKY.replace(
        "  schedulerName: volcano\n", "  nodeName: gpu-a100-001\n  priorityClassName: system-node-critical\n"
    )
    result = explain(str(policy), "--pod", _pod(tmp_path, pod), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert (doc["tenant"], doc["mode"], doc["verdict"]) == ("team-a", "deny", "refused")
    assert [r["rule"] for r in doc["refusals"]] == [
        "wildcard-toleration",
        "node-name",
        "priority-class",
        "scheduler-name",
    ]


def test_a_template_is_admitted_and_its_pods_land_only_on_its_pools() -> None:
    result = explain(AI_PROD, "--pod", str(REPO / "golden" / "ai-prod" / "templates" / "llm-pretraining.yaml"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == ["Job ai-team-a/llm-pretraining (tenant team-a, admission mode warn)", "admission: admitted"]
    landed = sorted(
        line.split(" -> ")[1].split(":")[0] for line in lines if " -> " in line and line.endswith("admitted")
    )
    assert landed == ["a100-train", "h100-train", "h20-hybrid"]


def test_a_pod_outside_tenants_is_not_matched_and_unexplainable_manifests_are_usage_errors(tmp_path) -> None:
    result = explain(AI_PROD, "--pod", _pod(tmp_path, SNEAKY.replace("ai-team-a", "kube-system")))
    assert result.exit_code == 0 and "no tenant: no admission policy applies" in result.stdout
    assert "admission: admitted" in result.stdout
    for text, says in (
        (SNEAKY.replace("namespace: ai-team-a", "labels: {}"), "metadata.namespace is not set"),
        (SNEAKY.replace("kind: Pod", "kind: Service"), "v1 Service is not a kind policyc's admission policies match"),
        (SNEAKY.replace("apiVersion: v1\nkind: Pod", "apiVersion: apps/v1\nkind: StatefulSet"), "no pod template"),
        ("- a list\n", "not a Kubernetes object"),
    ):
        result = explain(AI_PROD, "--pod", _pod(tmp_path, text))
        assert result.exit_code == 2 and says in result.output, result.output


def test_a_pod_naming_a_class_gets_its_placement_injected_and_lands_on_its_pools(tmp_path) -> None:
    pod = """\
apiVersion: v1
kind: Pod
metadata:
  name: mine
  namespace: ai-team-a
  labels: {ai.example.com/workload-class: llm-pretraining}
spec:
  priorityClassName: production-training
  containers: [{name: c, image: busybox}]
"""
    result = explain(AI_PROD, "--pod", _pod(tmp_path, pod))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1:3] == ["injected: the placement of workload class llm-pretraining", "admission: admitted"]
    landed = sorted(
        line.split(" -> ")[1].split(":")[0] for line in lines if " -> " in line and line.endswith("admitted")
    )
    assert landed == ["a100-train", "h100-train", "h20-hybrid"]  # the class's tier, training or hybrid
    # Without the label the same pod keeps the default scheduler and tolerates no pool: it lands nowhere.
    result = explain(
        AI_PROD,
        "--pod",
        _pod(tmp_path, pod.replace("  labels: {ai.example.com/workload-class: llm-pretraining}\n", "")),
    )
    assert "injected:" not in result.stdout and "(rule scheduler-name)" in result.stdout
    placed = [line for line in result.stdout.splitlines() if " -> " in line]
    assert len(placed) == 8 and all(": rejected: taint " in line for line in placed)


def test_another_controllers_object_is_explained_by_its_pods(tmp_path) -> None:
    stateful = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ai-team-a}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: c, image: busybox}]
"""
    result = explain(AI_PROD, "--pod", _pod(tmp_path, stateful))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "StatefulSet ai-team-a/db (tenant team-a, admission mode warn)"
    assert lines[1] == "the admission policies do not match this kind; its pods, as they would be created:"
    assert lines[2] == "admission: admitted with warnings" and "(rule wildcard-toleration)" in lines[3]


# --- spec.nodeName: no scheduler, the named node's kubelet --------------------------------------------------------

PINNED = """\
apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: ai-team-a}
spec:
  nodeName: NODE
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
NODE_NAME_WARNING = (
    "  - tenant team-a: spec.nodeName skips the scheduler, and with it the NoSchedule taints it checks (rule node-name)"
)


def _pinned(tmp_path, node: str, text: str = PINNED) -> str:
    return _pod(tmp_path, text.replace("NODE", node))


def test_a_pod_naming_a_pool_node_lands_on_that_pool_only_despite_its_noschedule_taints(tmp_path) -> None:
    # a100-02 is one of a100-train's nodes (a100-[01-04]); the pod tolerates neither its usage nor its product taint,
    # both NoSchedule, which only the scheduler checks: its kubelet admits it.
    result = explain(AI_PROD, "--pod", _pinned(tmp_path, "a100-02"))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Pod ai-team-a/pinned (tenant team-a, admission mode warn)",
        "admission: admitted with warnings",
        NODE_NAME_WARNING,
        "placement:",
        "  pod -> a100-train, node a100-02 (spec.nodeName, no scheduler): admitted by its kubelet",
    ]
    doc = json.loads(explain(AI_PROD, "--pod", _pinned(tmp_path, "a100-02"), "--format", "json").stdout)
    assert doc["placement"] == [{"role": "pod", "node": "a100-02", "pool": "a100-train", "admitted": True,
                                 "reason": None}]  # fmt: skip
    assert [r["rule"] for r in doc["refusals"]] == ["node-name"]


def test_a_pod_naming_a_control_plane_node_lands_on_the_control_plane(tmp_path) -> None:
    # cp-2 is one of controlPlane.nodes (cp-[1-3]): policyc's control-plane taint is NoSchedule, so only the node-name
    # rule stands between the pod and the control plane.
    result = explain(AI_PROD, "--pod", _pinned(tmp_path, "cp-2"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2] == NODE_NAME_WARNING
    assert lines[3:] == [
        "placement:",
        "  pod -> (control plane), node cp-2 (spec.nodeName, no scheduler): admitted by its kubelet",
    ]


def test_a_pod_naming_an_unknown_node_lands_nowhere(tmp_path) -> None:
    result = explain(AI_PROD, "--pod", _pinned(tmp_path, "a100-05"), "--format", "json")  # a100-[01-04]
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [r["rule"] for r in doc["refusals"]] == ["node-name"]
    [placed] = doc["placement"]
    assert (placed["node"], placed["pool"], placed["admitted"]) == ("a100-05", None, False)
    assert placed["reason"].startswith("no node a100-05 in the policy's pools or control plane")
    text = explain(AI_PROD, "--pod", _pinned(tmp_path, "a100-05")).stdout
    assert "  pod -> node a100-05 (spec.nodeName, no scheduler): not run: no node a100-05 in the policy" in text


def test_the_kubelet_of_the_named_node_still_checks_node_selector_and_devices(tmp_path) -> None:
    # The kubelet's admission checks the node selector and required affinity, and resources: a pod bound to an
    # A100 node that selects the inference tier, or asks for AMD GPUs, is not run there.
    selecting = PINNED.replace("  schedulerName: volcano\n", "  nodeSelector: {ai.example.com/gpu.tier: inference}\n")
    doc = json.loads(explain(AI_PROD, "--pod", _pinned(tmp_path, "a100-02", selecting), "--format", "json").stdout)
    [placed] = doc["placement"]
    assert (placed["pool"], placed["admitted"]) == ("a100-train", False)
    assert placed["reason"] == (
        "nodeSelector ai.example.com/gpu.tier=inference does not match (node has 'high-performance')"
    )
    amd = PINNED.replace("nvidia.com/gpu", "amd.com/gpu")
    doc = json.loads(explain(AI_PROD, "--pod", _pinned(tmp_path, "a100-02", amd), "--format", "json").stdout)
    assert doc["placement"][0]["reason"] == "its nodes have no amd.com/gpu (Insufficient amd.com/gpu)"


def test_a_gpu_limit_without_a_request_is_requested_as_the_api_server_defaults_it(tmp_path) -> None:
    # No nodeName: the scheduler's view. The pod tolerates every taint; its amd.com/gpu limit is also its request,
    # which no pool of ai-prod (NVIDIA only) has; the control plane's hardware is unknown, so it is not ruled out.
    pod = SNEAKY.replace("containers: [{name: c, image: busybox}]",
                         "containers: [{name: c, image: busybox, resources: {limits: {amd.com/gpu: 1}}}]")  # fmt: skip
    doc = json.loads(explain(AI_PROD, "--pod", _pod(tmp_path, pod), "--format", "json").stdout)
    verdicts = {p["pool"]: p["reason"] for p in doc["placement"]}
    assert verdicts.pop("(control plane)") is None
    assert set(verdicts.values()) == {"its nodes have no amd.com/gpu (Insufficient amd.com/gpu)"} and len(verdicts) == 7


NO_EXECUTE_POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: no-execute}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  admission: {mode: warn}
  controlPlane: {nodes: [cp-1]}
  gpuTiers:
    - {name: small, products: [NVIDIA-L4]}
  nodePools:
    - name: l4-serve
      usage: inference
      nodes: ["l4-[1-2]"]
      gpu: {product: NVIDIA-L4, count: 4}
      allocatable: {cpu: "48", memory: 192Gi}
      taints: [{key: example.com/dedicated, value: vip, effect: NoExecute}]
  tenants:
    - {name: ml, namespaces: [ml]}
  workloads:
    - name: serve
      type: inference
      tenant: ml
      gpuTier: small
      gpus: 1
      tolerations: [{key: example.com/dedicated, value: vip, effect: NoExecute}]
"""


def test_the_kubelet_refuses_a_pod_that_does_not_tolerate_a_noexecute_taint(tmp_path) -> None:
    policy = tmp_path / "no-execute.yaml"
    policy.write_text(NO_EXECUTE_POLICY)
    pod = PINNED.replace("ai-team-a", "ml")
    doc = json.loads(explain(str(policy), "--pod", _pinned(tmp_path, "l4-2", pod), "--format", "json").stdout)
    assert doc["placement"] == [{
        "role": "pod", "node": "l4-2", "pool": "l4-serve", "admitted": False,
        "reason": "taint example.com/dedicated=vip:NoExecute is not tolerated (the kubelet checks NoExecute)",
    }]  # fmt: skip
    tolerating = pod.replace(
        "  schedulerName: volcano\n",
        "  schedulerName: volcano\n  tolerations: [{key: example.com/dedicated, value: vip, effect: NoExecute}]\n",
    )
    doc = json.loads(explain(str(policy), "--pod", _pinned(tmp_path, "l4-2", tolerating), "--format", "json").stdout)
    assert doc["placement"][0]["admitted"] is True  # the usage and product taints are NoSchedule: not the kubelet's


def test_a_deployment_whose_template_names_a_node_is_warned_about_and_its_pods_go_to_that_node_only(tmp_path) -> None:
    template = (REPO / "golden" / "ai-prod" / "templates" / "chat-serving.yaml").read_text().split("\n---\n")[0]
    pinned = template.replace("    spec:\n      schedulerName: volcano\n",
                              "    spec:\n      nodeName: NODE\n      schedulerName: volcano\n")  # fmt: skip
    assert pinned != template
    result = explain(AI_PROD, "--pod", _pinned(tmp_path, "l4-007", pinned))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Deployment ai-team-b/chat-serving (tenant team-b, admission mode warn)",
        "admission: admitted with warnings",
        "  - tenant team-b: spec.nodeName skips the scheduler, and with it the NoSchedule taints it checks "
        "(rule node-name)",
        "placement:",
        "  pod -> l4-serve, node l4-007 (spec.nodeName, no scheduler): admitted by its kubelet",
    ]
    # Named to an H100 training node, its pods keep the template's required affinity (usage inference or hybrid),
    # which the kubelet checks: they are not run.
    result = explain(AI_PROD, "--pod", _pinned(tmp_path, "gpu-node-03", pinned))
    assert result.stdout.splitlines()[-1].startswith(
        "  pod -> h100-train, node gpu-node-03 (spec.nodeName, no scheduler): not run: expression "
        "ai.example.com/node.usage In [inference, hybrid] does not match"
    )


def test_a_pod_naming_a_node_waits_for_resource_claims_nothing_allocates(tmp_path) -> None:
    # DRA: the scheduler allocates a pod's claims; a pod bound by nodeName bypasses it, so the kubelet waits.
    claiming = """\
apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: serving}
spec:
  nodeName: a100-03
  resourceClaims: [{name: gpus, resourceClaimTemplateName: chat-gpus}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpus}]}}]
"""
    result = explain(str(REPO / "policies" / "ai-dra.yaml"), "--pod", _pod(tmp_path, claiming), "--format", "json")
    [placed] = json.loads(result.stdout)["placement"]
    assert (placed["pool"], placed["admitted"]) == ("a100", False)
    assert placed["reason"].startswith(
        "its resource claims are allocated by the scheduler, which spec.nodeName bypasses"
    )

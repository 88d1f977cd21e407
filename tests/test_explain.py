"""policyc explain: the placement matrix with reasons, and the policy lines behind each object."""

from __future__ import annotations

import json

from click.testing import CliRunner

from policyc.cli import main
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
    assert by_file.stdout.count("\n") == 6  # 2 namespaces x (namespace, quota, forbidden-classes quota)
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

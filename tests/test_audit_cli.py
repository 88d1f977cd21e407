"""`policyc audit` on the command line: every output format on a drift dump, exit codes, --dump-command, and the same
bytes whatever the hash seed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from policyc.commands.cli import main
from tests.audit_helpers import DUMPS, built_of, items_of, policy_of, write_dump
from tests.conftest import REPO, missing_shared_data

DRIFT = DUMPS / "ai-prod" / "drift-11-pod-foreign-pool.json"
POLICY = str(policy_of("ai-prod").relative_to(REPO))
BUILT = str(built_of("ai-prod").relative_to(REPO))


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths relative to the checkout, as a CI job gives them (SARIF wants repository-relative URIs)."""
    monkeypatch.chdir(REPO)


def audit(*args: str):
    return CliRunner().invoke(main, ["audit", *args])


def drift(*args: str):
    if not DRIFT.is_file():
        missing_shared_data(DRIFT)
    return audit(POLICY, "--built", BUILT, "--from", str(DRIFT), *args)


def test_text_one_line_per_finding() -> None:
    result = drift()
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # 59 nodes not created, 3 MutatingAdmissionPolicies refused at the recording, team-b's guarantee, and the drift
    assert len(lines) == 59 + 3 + 1 + 1
    line = re.compile(rf"^{re.escape(POLICY)}:\d+:\d+: (error|warning) audit/[a-z-]+: .+; .+$")
    assert all(line.match(text) for text in lines), [t for t in lines if not line.match(t)]
    (placed,) = [text for text in lines if "audit/pod-placement" in text]
    assert (
        "Pod ai-team-a/team-a-adhoc-0 on node a40-05: pool a40-dev (training, tier standard) is not granted" in placed
    )
    assert result.stderr.strip().endswith(f"against {POLICY}: 4 errors, 60 warnings")


def test_json_a_result_per_finding_with_its_object_and_a_summary() -> None:
    result = drift("--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["summary"] == {"errors": 4, "warnings": 60, "cluster": str(DRIFT)}
    (placed,) = [r for r in document["diagnostics"] if r["rule"] == "pod-placement"]
    assert placed["object"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "ai-team-a", "name": "team-a-adhoc-0"}
    assert placed["id"] == placed["code"] == "audit/pod-placement" and placed["severity"] == "error"
    # located at the tenant that was granted other pools
    lines = policy_of("ai-prod").read_text(encoding="utf-8").splitlines()
    assert lines[placed["line"] - 1].strip() == "- name: team-a", lines[placed["line"] - 1]
    assert placed["hint"].endswith("`kubectl delete pod -n ai-team-a team-a-adhoc-0`")


def _sarif_schema() -> dict:
    return json.loads((REPO / "tests" / "data" / "sarif-2.1.0.schema.json").read_text(encoding="utf-8"))


def test_sarif_is_valid_and_names_the_object_as_a_logical_location() -> None:
    result = drift("--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    jsonschema.validate(log, _sarif_schema())
    (placed,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "audit/pod-placement"]
    (location,) = placed["locations"]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == POLICY
    assert location["logicalLocations"] == [
        {"name": "team-a-adhoc-0", "fullyQualifiedName": "v1/Pod/ai-team-a/team-a-adhoc-0", "kind": "resource"}
    ]


def test_github_annotations_then_the_list() -> None:
    result = drift("--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    annotations = [text for text in lines if text.startswith("::")]
    assert len(annotations) == 64
    assert annotations[0].startswith(f"::error file={POLICY},line=")  # errors first
    assert any(",title=audit/pod-placement::Pod ai-team-a/team-a-adhoc-0 on node a40-05: " in a for a in annotations)
    assert "policyc: 4 error(s), 60 other diagnostic(s):" in lines


def test_output_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "findings.json"
    result = drift("--format", "json", "-o", str(out))
    assert result.exit_code == 1 and result.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["errors"] == 4


def test_the_same_bytes_whatever_the_hash_seed() -> None:
    if not DRIFT.is_file():
        missing_shared_data(DRIFT)
    args = [
        sys.executable,
        "-m",
        "policyc",
        "audit",
        POLICY,
        "--built",
        BUILT,
        "--from",
        str(DRIFT),
        "--format",
        "json",
    ]
    outputs = {
        subprocess.run(args, capture_output=True, cwd=REPO, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1 and next(iter(outputs))


# --- exit codes ---------------------------------------------------------------------------------------------------


def test_exit_0_without_errors_even_with_warnings(tmp_path: Path) -> None:
    items = [i for i in items_of("minimal") if i["metadata"]["name"] != "gpu-4"]
    dump = str(write_dump(tmp_path, items))
    minimal, built = str(policy_of("minimal")), str(built_of("minimal"))
    warned = audit(minimal, "--built", built, "--from", dump)
    assert warned.exit_code == 0 and "warning audit/node-missing" in warned.stdout
    assert audit(minimal, "--built", built, "--from", dump, "--strict").exit_code == 1


def test_exit_0_and_nothing_on_a_clean_cluster() -> None:
    clean = DUMPS / "minimal" / "clean.json"
    if not clean.is_file():
        missing_shared_data(clean)
    result = audit(str(policy_of("minimal")), "--built", str(built_of("minimal")), "--from", str(clean))
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.endswith(": 0 errors\n")


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    (b"{not json", "is not JSON"),
    (b'{"kind": "Pod"}', "is not a kubectl List"),
])  # fmt: skip
def test_exit_2_for_an_unreadable_dump(content: bytes | None, message: str, tmp_path: Path) -> None:
    dump = tmp_path / "cluster.json"
    if content is not None:
        dump.write_bytes(content)
    result = audit(str(policy_of("minimal")), "--from", str(dump))
    assert result.exit_code == 2
    assert result.stderr.startswith("policyc: ") and message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.splitlines()) == 1


def test_exit_2_for_a_policy_that_does_not_build(tmp_path: Path) -> None:
    result = audit(str(REPO / "tests" / "cases" / "five-mistakes.yaml"), "--from", str(tmp_path / "none.json"))
    assert result.exit_code == 2
    assert ": error PC" in result.stderr, "its errors, as validate prints them"
    assert result.stderr.splitlines()[-1].endswith(
        "does not build: fix its errors before auditing a cluster against it"
    )


def test_exit_2_for_a_directory_policyc_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: [a.yaml]\n", encoding="utf-8")
    for directory in (tmp_path, tmp_path / "missing"):
        result = audit(str(policy_of("minimal")), "--built", str(directory), "--from", str(tmp_path / "x.json"))
        assert result.exit_code == 2
        assert "is not a policyc output directory" in result.stderr and "Traceback" not in result.output


def test_a_fleet_is_audited_one_cluster_at_a_time() -> None:
    """A fleet's clusters differ (policies/fleet: onprem runs Volcano, cloud Kueue): the audit needs the one the
    cluster is, as explain and report do."""
    fleet = str(REPO / "policies" / "fleet")
    result = audit(fleet, "--dump-command")
    assert result.exit_code == 2
    assert "is a fleet of clusters cloud, onprem: give --cluster NAME" in result.stderr
    cloud = audit(fleet, "--cluster", "cloud", "--dump-command")
    onprem = audit(fleet, "--cluster", "onprem", "--dump-command")
    assert cloud.exit_code == onprem.exit_code == 0
    assert "clusterqueues.kueue.x-k8s.io" in cloud.stdout and "volcano" not in cloud.stdout
    assert "queues.scheduling.volcano.sh" in onprem.stdout and "kueue" not in onprem.stdout
    unknown = audit(fleet, "--cluster", "clod", "--dump-command")
    assert unknown.exit_code == 2 and "has no cluster 'clod'; did you mean 'cloud'?" in unknown.stderr


def test_a_fleet_cluster_s_findings_say_how_to_build_that_cluster(tmp_path: Path) -> None:
    """An empty cluster: every object is missing, and the hint's build command is the cluster's (`policyc build
    policies/fleet -o OUT` without --cluster is a usage error: a fleet builds one cluster, or all with --repo-url)."""
    dump = tmp_path / "empty.json"
    dump.write_text('{"apiVersion": "v1", "kind": "List", "items": []}', encoding="utf-8")
    result = audit(str(REPO / "policies" / "fleet"), "--cluster", "onprem", "--from", str(dump))
    assert result.exit_code == 1
    missing = [line for line in result.stdout.splitlines() if "audit/object-missing" in line]
    assert missing and all(line.endswith("after `policyc build POLICY --cluster onprem -o OUT`") for line in missing)
    assert f"against {REPO / 'policies' / 'fleet'} (cluster onprem): " in result.stderr


def test_built_names_the_cluster_of_a_fleet_output(tmp_path: Path) -> None:
    """A fleet's output holds a directory per cluster: --built gets the audited cluster's, and is told so."""
    (tmp_path / "applicationset.yaml").write_text("# Generated by policyc from the fleet 'fleet'\n", encoding="utf-8")
    result = audit(str(REPO / "policies" / "fleet"), "--cluster", "cloud", "--built", str(tmp_path), "--from", "x")
    assert result.exit_code == 2
    assert f"{tmp_path} is a fleet's output directory: give the directory of the cluster, {tmp_path / 'cloud'}" in (
        result.stderr
    )


def test_exit_2_for_the_output_directory_of_another_policy() -> None:
    """The built/ of ai-prod given to an audit of minimal: not dozens of findings comparing two policies, one line."""
    result = audit(str(policy_of("minimal")), "--built", BUILT, "--from", "missing.json")
    assert result.exit_code == 2
    assert (
        f"{BUILT} was built from policy 'ai-prod' (ai-prod.yaml), not from policy 'minimal': give the directory"
        in result.stderr
    )


def test_without_a_dump_the_live_path_needs_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "policyc.cluster.live", None)  # as without the extra: the import fails
    result = audit(str(policy_of("minimal")))
    assert result.exit_code == 2
    assert result.stderr == "policyc: install policyc[cluster] to read a live cluster, or pass --from DUMP\n"


def test_the_dump_command_reads_what_the_recordings_dumped() -> None:
    expect = DUMPS / "ai-prod" / "clean.expect.json"
    if not expect.is_file():
        missing_shared_data(expect)
    result = audit(POLICY, "--built", BUILT, "--dump-command")
    assert result.exit_code == 0
    command = result.stdout.strip()
    match = re.fullmatch(r"kubectl get (\S+) -A -o json > cluster\.json", command)
    assert match, command
    kinds = match.group(1).split(",")
    assert kinds[:3] == ["nodes", "namespaces", "pods"]
    # every resource is one the recording dumped (it named those of Kubernetes' own *.k8s.io groups without their group,
    # which kubectl resolves alike)
    dumped = set(json.loads(expect.read_text(encoding="utf-8"))["dumped_kinds"])
    assert {re.sub(r"\.[a-z.]+\.k8s\.io$", "", k) for k in kinds} <= dumped
    assert {"queues.scheduling.volcano.sh", "priorityclasses.scheduling.k8s.io", "resourcequotas"} <= set(kinds)


def test_a_live_cluster_audits_as_its_dump_does(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The live path end to end: the drifted cluster behind an API server (the local fake: no real one runs here),
    read page by page with GET only, gives the same findings, byte for byte, as its dump."""
    from tests.fake_apiserver import FakeApiServer

    from_dump = drift("--format", "json")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)
    # the recording's server served MutatingAdmissionPolicies (dumped_kinds) and refused policyc's: none to serve
    served = [("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", False)]
    with FakeApiServer(json.loads(DRIFT.read_text(encoding="utf-8"))["items"], empty=served) as server:
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig", context="prod")
        live = audit(POLICY, "--built", BUILT, "--kubeconfig", str(kubeconfig), "--context", "prod", "--format", "json")
    assert (live.exit_code, live.stderr) == (1, from_dump.stderr.replace(str(DRIFT), "prod")), live.stderr
    live_json, dump_json = json.loads(live.stdout), json.loads(from_dump.stdout)
    assert live_json["summary"].pop("cluster") == "prod" and dump_json["summary"].pop("cluster") == str(DRIFT)
    assert live_json == dump_json
    assert len(live_json["diagnostics"]) == 64  # as test_text_one_line_per_finding counts them
    assert sum(1 for _, path in server.requests if "/pods" in path) >= 1

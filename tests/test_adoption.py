"""The adoption story of docs/adoption.md, run on a recorded cluster: import, build, audit in Warn, clear, Deny. The
page shows what these steps print; this test holds it to that."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from policyc.commands.cli import main
from tests.conftest import REPO, missing_shared_data, shared_dir

PAGE = REPO / "docs" / "adoption.md"
FOREIGN_POD = "team-a-adhoc-0"


def policyc(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recorded ai-prod cluster where a pod of team-a runs on a pool team-a is not granted, as cluster.json."""
    recorded = shared_dir() / "testdata" / "cluster-dumps" / "ai-prod" / "drift-11-pod-foreign-pool.json"
    if not recorded.is_file():
        missing_shared_data(recorded)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.json").write_bytes(recorded.read_bytes())
    return tmp_path / "cluster.json"


def shown_finding() -> str:
    """The audit line the page shows (the fenced block after the audit command)."""
    lines = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if " audit/" in line]
    assert len(lines) == 1, lines
    return lines[0]


def pod_findings(output: str) -> list[str]:
    return [line for line in output.splitlines() if re.search(r" audit/pod-(placement|priority|contract): ", line)]


def test_import_build_audit_in_warn_clear_then_deny(cluster: Path) -> None:
    # 1. import: a starting policy, in warn (the cluster had policyc's admission policies in Warn)
    imported = policyc("import", "--from", "cluster.json", "-o", "policy.yaml")
    assert imported.exit_code == 0, imported.stderr
    policy = YAML(typ="safe").load(Path("policy.yaml"))
    assert policy["spec"]["admission"] == {"mode": "warn"}
    # 2. build
    assert policyc("build", "policy.yaml", "-o", "out", "-q").exit_code == 0
    # 3. audit in Warn: the foreign pod is the one pod finding, exactly as the page shows it
    audited = policyc("audit", "policy.yaml", "--from", "cluster.json")
    assert audited.exit_code == 1
    assert pod_findings(audited.stdout) == [shown_finding()]
    # 4. clear: the pod deleted, as the hint says (kubectl delete pod -n ai-team-a team-a-adhoc-0)
    assert f"`kubectl delete pod -n ai-team-a {FOREIGN_POD}`" in shown_finding()
    dump = json.loads(cluster.read_text(encoding="utf-8"))
    dump["items"] = [o for o in dump["items"] if not (o["kind"] == "Pod" and o["metadata"]["name"] == FOREIGN_POD)]
    cluster.write_text(json.dumps(dump), encoding="utf-8")
    cleared = policyc("audit", "policy.yaml", "--from", "cluster.json")
    assert pod_findings(cleared.stdout) == []
    # 5. deny, as the page writes it: every tenant's binding now denies
    text = Path("policy.yaml").read_text(encoding="utf-8")
    Path("policy.yaml").write_text(text.replace("admission: {mode: warn}", "admission: {mode: deny}", 1))
    assert "  admission: {mode: deny}" in PAGE.read_text(encoding="utf-8")
    assert policyc("build", "policy.yaml", "-o", "out", "-q").exit_code == 0
    bindings = [
        doc
        for path in sorted(Path("out/tenants").glob("*.yaml"))
        for doc in YAML(typ="safe").load_all(path)
        if doc and doc["kind"] == "ValidatingAdmissionPolicyBinding"
    ]
    assert len(bindings) == 3 and all(b["spec"]["validationActions"] == ["Deny", "Audit"] for b in bindings)

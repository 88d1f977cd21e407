"""policyc build --check: compares bytes in memory with the directory; writes nothing."""

from __future__ import annotations

import os
import threading

from click.testing import CliRunner

import policyc
from policyc.commands.cli import main
from policyc.output.drift import PRIORITY_CLASSES, immutable_changes
from tests.conftest import REPO

MINIMAL = str(REPO / "policies" / "minimal.yaml")


def run(*args: str):
    return CliRunner().invoke(main, ["build", MINIMAL, *args])


def snapshot(root) -> dict:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def test_up_to_date_directory_passes(tmp_path) -> None:
    out = tmp_path / "out"
    assert run("-o", str(out)).exit_code == 0
    result = run("-o", str(out), "--check")
    assert result.exit_code == 0 and result.stdout == ""
    assert "up to date" in result.stderr


def test_drift_is_a_diff_plus_missing_and_stale_files_and_nothing_is_written(tmp_path) -> None:
    out = tmp_path / "out"
    assert run("-o", str(out)).exit_code == 0
    queues = out / "volcano" / "queues.yaml"
    queues.write_text(queues.read_text().replace("weight: 1", "weight: 3"))
    (out / "tenants" / "ml.yaml").unlink()
    (out / "tenants" / "old-team.yaml").write_text("kind: Namespace\n")
    os.chmod(out / "nodes" / "apply.sh", 0o644)
    before = snapshot(out)
    result = run("-o", str(out), "--check")
    assert result.exit_code == 1
    assert "--- a/volcano/queues.yaml\n+++ b/volcano/queues.yaml\n" in result.stdout
    assert "-  weight: 3\n+  weight: 1\n" in result.stdout
    assert "missing in" in result.stdout and "  tenants/ml.yaml\n" in result.stdout
    assert "stale in" in result.stdout and "  tenants/old-team.yaml\n" in result.stdout
    assert "nodes/apply.sh: should be executable" in result.stdout
    assert snapshot(out) == before


def test_check_of_a_missing_directory_creates_nothing(tmp_path) -> None:
    result = run("-o", str(tmp_path / "none"), "--check")
    assert result.exit_code == 1 and "kustomization.yaml" in result.stdout
    assert not (tmp_path / "none").exists()


def test_policy_errors_in_check_mode_exit_1_without_a_diff(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO / "policies" / "minimal.yaml").read_text().replace("usage: training", "usage: trainng"))
    result = CliRunner().invoke(main, ["build", str(bad), "-o", str(tmp_path / "out"), "--check"])
    assert result.exit_code == 1 and "PC104" in result.stderr and result.stdout == ""


def test_a_priority_class_change_the_api_server_refuses_is_a_located_warning(tmp_path) -> None:
    """value and preemptionPolicy of a PriorityClass cannot be updated: the sync after the change would fail."""
    source = (REPO / "policies" / "ai-prod.yaml").read_text()
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(REPO / "policies" / "ai-prod.yaml"), "-o", str(out)]).exit_code == 0
    start = source.index("    - name: production-training")
    changed = source[:start] + source[start:].replace("value: 1000", "value: 1500", 1)
    changed = changed.replace("preemptionPolicy: Never ", "preemptionPolicy: PreemptLowerPriority ", 1)
    policy = tmp_path / "ai-prod.yaml"
    policy.write_text(changed)
    lines = changed.splitlines()
    for args in (["--check"], []):
        result = CliRunner().invoke(main, ["build", str(policy), "-o", str(out), *args])
        warnings = [line for line in result.stderr.splitlines() if "PC434" in line]
        value_line = next(i for i, line in enumerate(lines, 1) if i > changed.count("\n", 0, start) and "1500" in line)
        assert len(warnings) == 2, result.stderr
        assert any(
            w.startswith(f"{policy}:{value_line}:")
            and "priority class 'production-training' changes value from 1000 to 1500" in w
            for w in warnings
        ), warnings
        assert any("changes preemptionPolicy from Never to PreemptLowerPriority" in w for w in warnings), warnings
    # Once the output holds the new class, there is nothing left to warn about against it.
    rebuilt = CliRunner().invoke(main, ["build", str(policy), "-o", str(out)])
    assert "PC434" not in rebuilt.stderr


def test_a_fifo_where_the_previous_priority_classes_were_does_not_block_the_build(tmp_path) -> None:
    out, policy = tmp_path / "out", REPO / "policies" / "ai-prod.yaml"
    assert CliRunner().invoke(main, ["build", str(policy), "-o", str(out)]).exit_code == 0
    previous = out / PRIORITY_CLASSES
    previous.unlink()
    os.mkfifo(previous)
    cluster = policyc.compile(policy).cluster
    found: list = []
    worker = threading.Thread(target=lambda: found.append(immutable_changes(cluster, out)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # unblock the reader, then fail
        with open(os.open(previous, os.O_WRONLY | os.O_NONBLOCK), "w"):
            pass
        raise AssertionError("reading the previous output blocked on a FIFO")
    assert found == [[]]

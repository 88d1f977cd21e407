"""policyc build --check: compares bytes in memory with the directory; writes nothing."""

from __future__ import annotations

import os

from click.testing import CliRunner

from policyc.cli import main
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

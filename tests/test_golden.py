"""Each example policy compiles to golden/<policy>/ byte for byte (refresh: pytest --snapshot-update)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys

import pytest

from policyc.compiler import compile_file, fleet_files
from policyc.language.teams import fleet_of
from tests.conftest import GOLDEN, REPO, example_policies, inner_pytest_env
from tests.golden import GoldenFileExtension

FLEETS = ("fleet",)
"""Example fleets (policies/<name>/, docs/teams.md): golden/<name>/ is what `policyc build policies/<name> -o
manifests --repo-url FLEET_REPO` writes."""
FLEET_REPO = "https://github.com/example-org/ai-fleet.git"


@functools.cache
def _outputs(policy_name: str) -> dict[str, bytes]:
    if policy_name in FLEETS:
        return _fleet_outputs(policy_name)
    path = next(p for p in example_policies() if p.stem == policy_name)
    result = compile_file(path, f"policies/{path.name}")
    assert result.ok, [d.message for d in result.report.diagnostics]
    return {rel: f.data for rel, f in result.files.items()}


def _fleet_outputs(name: str) -> dict[str, bytes]:
    directory = REPO / "policies" / name
    compilations = {
        cluster: compile_file(directory, f"policies/{name}", cluster=cluster) for cluster in fleet_of(directory)[1]
    }
    for compilation in compilations.values():
        assert compilation.ok, [d.message for d in compilation.report.diagnostics]
    files = fleet_files(directory, compilations, "manifests", FLEET_REPO, "HEAD")
    return {rel: f.data for rel, f in files.items()}


def _cases() -> list[str]:
    cases = []
    for policy in [p.stem for p in example_policies()] + list(FLEETS):
        emitted = set(_outputs(policy))
        frozen = {p.relative_to(GOLDEN / policy).as_posix() for p in (GOLDEN / policy).rglob("*") if p.is_file()}
        # Golden files the compiler no longer emits get a case too: it fails (or, on update, deletes them).
        cases.extend(f"{policy}:{rel}" for rel in sorted(emitted | frozen))
    return cases


@pytest.mark.parametrize("case", _cases())
def test_golden(case: str, snapshot, request) -> None:
    policy, path = case.split(":", 1)
    outputs = _outputs(policy)
    if path not in outputs:
        if request.config.option.update_snapshots:
            (GOLDEN / policy / path).unlink()
            return
        pytest.fail(f"golden/{policy}/{path} is no longer emitted; run pytest --snapshot-update")
    assert outputs[path] == snapshot(extension_class=GoldenFileExtension)


@pytest.mark.skipif("POLICYC_GOLDEN" in os.environ, reason="already running against a copy")
def test_golden_tests_fail_when_a_golden_file_is_edited_missing_or_left_over(tmp_path) -> None:
    """The golden tests over a copy with three faults, spread over two pytest-xdist workers as the README's test
    command runs them: those three cases fail, every other one passes, and syrupy reports nothing unused."""
    golden = tmp_path / "golden"
    shutil.copytree(GOLDEN, golden)
    edited = golden / "minimal" / "tenants" / "ml.yaml"
    edited.write_bytes(edited.read_bytes().replace(b"name: ml", b"name: ml2"))
    (golden / "minimal" / "kustomization.yaml").unlink()
    (golden / "minimal" / "left-over.yaml").write_text("kind: Namespace\n")  # the compiler emits no such file
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "tests/test_golden.py"],
        cwd=REPO,
        env=inner_pytest_env(POLICYC_GOLDEN=str(golden)),
        capture_output=True,
        text=True,
    )
    passed = len(_cases()) + 1 - 3  # the copy's cases: these and the left-over file's; less the three faults
    summary = f"3 failed, {passed} passed, 1 skipped"  # skipped: this test, inside
    assert result.returncode == 1 and summary in result.stdout, result.stdout[-2000:]
    # syrupy's own report (the controller's: workers print none): the edited and the missing file, nothing unused
    assert f"2 snapshots failed. {passed} snapshots passed." in result.stdout, result.stdout[-2000:]
    assert not re.search(r"\d+ snapshots? unused", result.stdout), result.stdout[-2000:]
    for case in ("minimal:tenants/ml.yaml", "minimal:kustomization.yaml", "minimal:left-over.yaml"):
        assert f"FAILED tests/test_golden.py::test_golden[{case}]" in result.stdout, case

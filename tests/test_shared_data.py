"""The tests that read ../shared honour POLICYC_SHARED: without the data they skip with one reason naming what is
missing, and under CI=true (where the data is always beside the checkout) they fail instead."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, in_ci, inner_pytest_env

READERS = [
    "tests/k8s/test_vectors.py",
    "tests/k8s/test_admission_vectors.py",
    "tests/test_crd_schemas.py::test_generated_schemas_are_up_to_date",
    "tests/test_output_schemas.py::test_every_emitted_object_passes_its_schema",
    "tests/test_output_schemas.py::test_strict_crd_check_rejects_unknown_fields",
]


def _run(tmp_path, ci: str | None) -> subprocess.CompletedProcess:
    dropped = ("CI", "POLICYC_K8S_VECTORS", "POLICYC_ADMISSION_VECTORS")
    env = {k: v for k, v in inner_pytest_env().items() if k not in dropped}
    env["POLICYC_SHARED"] = str(tmp_path / "no-shared")
    if ci:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *READERS],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.parametrize("ci", [None, "true"])
def test_shared_data_is_read_from_policyc_shared(tmp_path, ci: str | None) -> None:
    result = _run(tmp_path, ci)
    missing = str(tmp_path / "no-shared")
    assert missing in result.stdout, result.stdout[-2000:]
    if ci:
        assert result.returncode == 1 and " failed" in result.stdout and " skipped" not in result.stdout
    else:
        assert result.returncode == 0, result.stdout[-2000:]
        assert " skipped" in result.stdout and " failed" not in result.stdout
        for reader in ("k8s-vectors", "admission-vectors", "crds"):
            assert f"{missing}/" in result.stdout and reader in result.stdout, reader


@pytest.mark.parametrize(("value", "ci"), [("true", True), ("1", True), ("yes", True), ("TRUE", True),
                                           (None, False), ("", False), ("0", False), ("false", False)])  # fmt: skip
def test_every_ci_check_reads_ci_one_way(monkeypatch, value: str | None, ci: bool) -> None:
    """CI services set CI=true, others CI=1: one reading for every test that fails under CI instead of skipping."""
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert in_ci() is ci
    reading = "environ.get(" + '"CI")'  # spelt in two halves, so that this file does not hold it
    offenders = [p.name for p in (REPO / "tests").rglob("*.py") if reading in p.read_text()]
    assert offenders == [], f"read CI through tests.conftest.in_ci: {offenders}"

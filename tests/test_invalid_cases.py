"""The bad-policy corpus: tests/cases/invalid/<name>.yaml, one file per mistake.

Each case starts with ``# expect: PCnnn [PCmmm ...]`` naming the codes it must produce; its full
diagnostics (messages, locations, hints) are a syrupy snapshot, so every message is reviewed when it
changes (``pytest --snapshot-update``). Every code in the catalogue needs at least one case.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from policyc.codes import RULES
from policyc.compiler import compile_file
from policyc.formats import render_text
from tests.conftest import REPO

CASES = sorted((REPO / "tests" / "cases" / "invalid").glob("*.yaml"))
UNREACHABLE_FROM_A_FILE = {
    "PC001": "an unreadable path, tested in tests/test_cli.py",
    "PC501": "a toleration that would let a template onto the other usage is refused first (PC509); the placement "
    "proof of the emitted templates is tested in tests/test_placement.py",
    "PC502": "a toleration of another tier's products is refused first (PC509); tested in tests/test_placement.py",
    "PC503": "a toleration of the control plane is refused first (PC509); tested in tests/test_placement.py",
    "PC505": "generated templates always prefer their dedicated pools; tested in tests/test_placement.py",
    "PC901": "an emitted object failing its schema is a policyc bug; tested in tests/test_verify.py",
    "PC902": "a tenancy policy that fails its own proof is a policyc bug; tested in tests/test_tenancy.py",
    "PC434": "a change against a previous output directory; tested in tests/test_drift.py",
}


def expected_codes(case: Path) -> list[str]:
    first = case.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    match = re.fullmatch(r"# expect: ((?:PC\d{3} ?)+)", first.strip())
    assert match, f"{case.name} must start with '# expect: PCnnn'"
    return match.group(1).split()


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_invalid_case(case: Path, snapshot) -> None:
    result = compile_file(case, case.name)
    found = {d.code for d in result.report.diagnostics}
    missing = set(expected_codes(case)) - found
    assert not missing, f"{case.name}: expected {sorted(missing)}, got:\n{render_text(result.report)}"
    assert all(d.line and d.column for d in result.report.diagnostics)
    assert render_text(result.report) == snapshot


def test_every_code_has_a_case() -> None:
    covered = {code for case in CASES for code in expected_codes(case)}
    uncovered = set(RULES) - covered - set(UNREACHABLE_FROM_A_FILE)
    assert not uncovered, f"codes without a case in tests/cases/invalid: {sorted(uncovered)}"

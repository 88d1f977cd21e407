"""The CEL judge of the tests (tests/cel_check.py) against admission policies recorded from a real kube-apiserver
v1.36: every `compile` case of the CEL vectors gets the server's verdict, and for a refusal the same refused
fields, the same error positions and, for the errors of the homogeneous-literal rule, the server's words; every
`mutate` case's pod, admitted through its policy as the server does (tests/mutating_admission.py), gets the
server's verdict and exactly the recorded fields, or for a refusal the server's reason.

The vectors are every ``*.json`` in ``../shared/testdata/cel-vectors`` beside the repository (or under
``$POLICYC_SHARED``), or in the directory named by ``POLICYC_CEL_VECTORS``; its README describes the format.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cel_check import check_policy
from tests.conftest import missing_shared_data, shared_dir
from tests.mutating_admission import admit

VECTORS = Path(os.environ.get("POLICYC_CEL_VECTORS") or shared_dir() / "testdata" / "cel-vectors")


def vector_cases(kind: str) -> list[Any]:
    """pytest params of every case of `kind` ("compile" or "mutate") in every vector file, one None param when
    there is none (the test then skips, or fails under CI)."""
    cases = [pytest.param(c, id=f"{stem}/{i}-{c['name']}") for stem, i, c in _each_case() if c["kind"] == kind]
    return cases or [pytest.param(None, id="missing-vectors")]


def _each_case() -> Iterator[tuple[str, int, dict]]:
    for path in sorted(VECTORS.glob("*.json")):
        for i, case in enumerate(json.loads(path.read_text(encoding="utf-8"))["cases"]):
            yield path.stem, i, case


_FIELD = re.compile(r"(spec\.[A-Za-z]+\[\d+\]\.[A-Za-z.]+): Invalid value: ")
_ERROR = re.compile(r"ERROR: <input>:(\d+):(\d+): ")


def server_refusals(message: str) -> dict[str, str]:
    """Field -> the part of the server's message about it (its expression and why)."""
    marks = list(_FIELD.finditer(message))
    return {m.group(1): message[m.end() : n.start() if n else len(message)]
            for m, n in zip(marks, [*marks[1:], None], strict=True)}  # fmt: skip


@pytest.mark.parametrize("case", vector_cases("compile"))
def test_compile_vector(case: dict | None) -> None:
    if case is None:
        missing_shared_data(VECTORS)
    result = check_policy(case["object"])
    assert ("refused" if result.refusals else "accepted") == case["verdict"], [str(r) for r in result.refusals]
    if not result.refusals:
        return
    server = server_refusals(case["message"])
    assert sorted(server) == sorted(r.field for r in result.refusals)
    for r in result.refusals:
        said = server[r.field]
        assert said.startswith(json.dumps(r.expression) + ": "), r.field
        if not r.issues:  # a type the expression must have
            assert f": {r.detail}" in said, (r.detail, said)
            continue
        positions = sorted((int(m.group(1)), int(m.group(2))) for m in _ERROR.finditer(said))
        assert sorted((i.line, i.column) for i in r.issues) == positions, r.field
        if all(i.ours for i in r.issues):
            assert r.detail in said, f"{r.detail}\n---\n{said}"


MUTATED_FIELDS = {"tolerations": ("spec",), "affinity": ("spec",), "nodeSelector": ("spec",),
                  "schedulerName": ("spec",), "labels": ("metadata",), "annotations": ("metadata",)}  # fmt: skip
"""The fields a mutate case records (`mutated`), and where they are in a pod."""


@pytest.mark.parametrize("case", vector_cases("mutate"))
def test_mutate_vector(case: dict | None) -> None:
    if case is None:
        missing_shared_data(VECTORS)
    outcome = admit(case["policy"], case["pod"])
    if case["verdict"] == "refused":
        assert outcome.pod is None, f"admitted, but the server said: {case['message']}"
        assert outcome.reason in case["message"], (outcome.reason, case["message"])
        return
    assert outcome.pod is not None, outcome.reason
    assert set(case["mutated"]) == set(MUTATED_FIELDS)
    got = {k: outcome.pod[where[0]].get(k) for k, where in MUTATED_FIELDS.items()}
    assert got == case["mutated"]

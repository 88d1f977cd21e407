"""Each example policy compiles to golden/<policy>/ byte for byte (refresh: pytest --snapshot-update)."""

from __future__ import annotations

import functools

import pytest

from policyc.compiler import compile_file
from tests.conftest import GOLDEN, example_policies
from tests.golden import GoldenFileExtension


@functools.cache
def _outputs(policy_name: str) -> dict[str, bytes]:
    path = next(p for p in example_policies() if p.stem == policy_name)
    result = compile_file(path, f"policies/{path.name}")
    assert result.ok, [d.message for d in result.report.diagnostics]
    return {rel: f.data for rel, f in result.files.items()}


def _cases() -> list[str]:
    cases = []
    for policy in example_policies():
        emitted = set(_outputs(policy.stem))
        frozen = {
            p.relative_to(GOLDEN / policy.stem).as_posix() for p in (GOLDEN / policy.stem).rglob("*") if p.is_file()
        }
        # Golden files the compiler no longer emits get a case too: it fails (or, on update, deletes them).
        cases.extend(f"{policy.stem}:{rel}" for rel in sorted(emitted | frozen))
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

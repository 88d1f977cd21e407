"""The library API: `policyc.compile` of text or of a file, with what `policyc build` would write, and nothing
written or changed on the host."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from click.testing import CliRunner

import policyc
from policyc.commands.cli import main
from tests.conftest import POLICIES


def test_text_and_file_give_the_bytes_policyc_build_writes(tmp_path) -> None:
    path = POLICIES / "ai-prod.yaml"
    from_text = policyc.compile(path.read_text(encoding="utf-8"), name="ai-prod.yaml")
    from_file = policyc.compile(path, name="ai-prod.yaml")
    assert from_text.ok and from_file.ok
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(path), "-o", str(out)]).exit_code == 0
    written = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert {k: f.data for k, f in from_text.files.items()} == written
    assert {k: f.data for k, f in from_file.files.items()} == written
    assert from_text.artifacts and {a.path for a in from_text.artifacts} <= set(written)


def test_diagnostics_name_the_text_and_nothing_is_written(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = policyc.compile("apiVersion: policyc.io/v1alpha1\nkind: ClusterPolicy\nmetadata: {name: x}\nspec: {}\n")
    assert not result.ok and not result.files
    assert result.report.file == "<policy>"
    assert {d.code for d in result.report.errors} == {"PC103"}
    assert all(d.line == 4 for d in result.report.errors)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_left_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        policyc.compile(Path(POLICIES / "minimal.yaml"))
        assert gc.isenabled() is enabled
        policyc.compile("{not: [valid")  # a failed compile too
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()

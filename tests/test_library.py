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


# The proofs in a child process (`prove_apart`, which `policyc build` and `validate` take in a process of their own).

INVALID = Path(__file__).parent / "cases" / "invalid"


@pytest.mark.parametrize(
    "policy",
    [
        POLICIES / "ai-prod.yaml",
        INVALID / "pc504-nowhere-untolerated-taint.yaml",  # found by the placement proof
        INVALID / "pc508-node-agent-untolerated.yaml",  # by the node-agent proof
        INVALID / "pc103-missing-domain.yaml",  # by the checks, before anything is proven
    ],
    ids=lambda p: p.stem,
)
def test_proven_apart_is_proven_in_order(policy: Path, monkeypatch) -> None:
    """The same diagnostics in the same order, and the same files (none when the proofs fail), apart or not."""
    monkeypatch.setattr("policyc.compiler.APART_FROM_OBJECTS", 0)  # these policies are small
    monkeypatch.setattr("threading.active_count", lambda: 1)  # pytest's own threads would keep it here
    here, apart = policyc.compile(policy), policyc.compile(policy, prove_apart=True)
    assert apart.report.diagnostics == here.report.diagnostics
    assert apart.files == here.files
    assert apart.ok is here.ok


@pytest.mark.parametrize(
    "policy",
    [
        POLICIES / "ai-prod.yaml",
        INVALID / "pc002-unclosed-quote.yaml",  # the load fails: PolicyError, raised in the child, reported here
        INVALID / "pc003-duplicate-key.yaml",  # the load reports it and goes on
        INVALID / "pc103-missing-domain.yaml",  # found after the load
    ],
    ids=lambda p: p.stem,
)
def test_loaded_apart_is_loaded_in_order(policy: Path, monkeypatch) -> None:
    """A policy file loaded in a child process gives the same diagnostics in the same order, and the same files."""
    monkeypatch.setattr("policyc.compiler.LOAD_APART_FROM_BYTES", 0)  # these policies are small
    monkeypatch.setattr("policyc.compiler.APART_FROM_OBJECTS", 10**9)  # the load alone apart
    monkeypatch.setattr("threading.active_count", lambda: 1)  # pytest's own threads would keep it here
    here, apart = policyc.compile(policy), policyc.compile(policy, prove_apart=True)
    assert apart.report.diagnostics == here.report.diagnostics
    assert apart.files == here.files
    assert apart.ok is here.ok


def calls_in(monkeypatch, module: object, name: str) -> list[int]:
    """The process ids of the calls of `module.name` from now on, made in this process (a child's stay in its own
    memory: it calls the function, the list here does not grow)."""
    import os

    pids: list[int] = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        pids.append(os.getpid())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return pids


def test_a_large_policy_file_is_loaded_in_a_child_process(monkeypatch) -> None:
    """The load of a file of LOAD_APART_FROM_BYTES or more runs in another process; a smaller file's runs here."""
    import os

    from policyc.language import load

    pids = calls_in(monkeypatch, load, "load_file")
    monkeypatch.setattr("threading.active_count", lambda: 1)
    example = POLICIES / "ai-prod.yaml"
    monkeypatch.setattr("policyc.compiler.LOAD_APART_FROM_BYTES", example.stat().st_size + 1)
    assert policyc.compile(example, prove_apart=True).ok
    assert pids == [os.getpid()]  # one byte short: here
    monkeypatch.setattr("policyc.compiler.LOAD_APART_FROM_BYTES", example.stat().st_size)
    assert policyc.compile(example, prove_apart=True).ok
    assert pids == [os.getpid()]  # appended in the child's memory, not in this process's


def test_a_failure_in_the_loading_process_is_raised_here(monkeypatch) -> None:
    """A bug in the load is an exception in this process, with the child's traceback as a note."""
    from policyc.language import load

    def broken(*args, **kwargs):
        raise KeyError("lost")

    monkeypatch.setattr(load, "load_file", broken)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr("policyc.compiler.LOAD_APART_FROM_BYTES", 0)
    with pytest.raises(KeyError, match="lost") as raised:
        policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True)
    assert any("in the policy's loading process" in note and "broken" in note for note in raised.value.__notes__)


@pytest.mark.parametrize(
    "policy",
    [
        POLICIES / "ai-prod.yaml",
        POLICIES / "ai-prod-kueue.yaml",
        INVALID / "pc103-missing-domain.yaml",  # an error of the checks: nothing emitted is used
        INVALID / "pc504-nowhere-untolerated-taint.yaml",  # found by the proofs, after the checks pass
    ],
    ids=lambda p: p.stem,
)
def test_checked_apart_is_checked_in_order(policy: Path, monkeypatch) -> None:
    """Checked in a child process while this one emits: the same diagnostics in the same order, the same files."""
    monkeypatch.setattr("policyc.compiler.CHECK_APART_FROM_ITEMS", 0)  # these policies are small
    monkeypatch.setattr("threading.active_count", lambda: 1)  # pytest's own threads would keep it here
    here, apart = policyc.compile(policy), policyc.compile(policy, prove_apart=True)
    assert apart.report.diagnostics == here.report.diagnostics
    assert apart.files == here.files
    assert apart.ok is here.ok
    assert (apart.backend, apart.provisioners) == (here.backend, here.provisioners)

    def emitted(c):  # Manifest compares by identity
        return [(a.path, [(m.obj, m.sources) for m in a.manifests]) for a in c.artifacts]

    assert emitted(apart) == emitted(here)


def test_checked_apart_in_a_child_process(monkeypatch) -> None:
    """The checks of a cluster of CHECK_APART_FROM_ITEMS pools, tenants and workloads or more run in another process;
    a smaller cluster's here."""
    import os

    from policyc import checks

    pids = calls_in(monkeypatch, checks, "run_checks")
    monkeypatch.setattr("threading.active_count", lambda: 1)
    example = policyc.compile(POLICIES / "ai-prod.yaml").cluster
    items = len(example.pools) + len(example.tenants) + len(example.workloads)
    pids.clear()
    monkeypatch.setattr("policyc.compiler.CHECK_APART_FROM_ITEMS", items + 1)
    assert policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True).ok
    assert pids == [os.getpid()]  # one item short: here
    monkeypatch.setattr("policyc.compiler.CHECK_APART_FROM_ITEMS", items)
    assert policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True).ok
    assert pids == [os.getpid()]  # appended in the child's memory, not in this process's


def test_what_the_emitters_raise_while_checked_apart_counts_only_if_the_checks_pass(monkeypatch) -> None:
    """Emitting beside the checks, an exception of the emitters is the build's only for a cluster the checks pass;
    for one they refuse, their errors are the build's, as in order (where nothing is emitted)."""
    from policyc import emit

    def broken(*args, **kwargs):
        raise KeyError("emitter")

    monkeypatch.setattr(emit, "emit", broken)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr("policyc.compiler.CHECK_APART_FROM_ITEMS", 0)
    refused = INVALID / "pc103-missing-domain.yaml"
    apart = policyc.compile(refused, prove_apart=True)
    assert not apart.ok and apart.report.diagnostics == policyc.compile(refused).report.diagnostics
    assert apart.artifacts == [] and apart.backend is None
    with pytest.raises(KeyError, match="emitter"):
        policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True)


def test_proven_apart_in_a_child_process(monkeypatch) -> None:
    """The proofs run in another process: what they change of the cluster stays there."""

    from policyc import proof

    pids = calls_in(monkeypatch, proof, "prove")
    monkeypatch.setattr("threading.active_count", lambda: 1)  # pytest's own threads would keep it here
    monkeypatch.setattr("policyc.compiler.APART_FROM_OBJECTS", 0)  # the example is small
    result = policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True)
    assert result.ok and result.files
    assert pids == []  # appended in the child's memory, not in this process's


def test_a_failure_in_the_proofs_process_is_raised_here(monkeypatch) -> None:
    """A bug in a proof is an exception in this process, with the child's traceback as a note; an exception
    that cannot be pickled comes as a RuntimeError of its text."""
    from policyc import proof

    class Unpicklable(Exception):
        def __init__(self, a, b):
            super().__init__(f"{a} and {b}")

    def broken(*args, **kwargs):
        raise Unpicklable("one", "two")

    monkeypatch.setattr(proof, "prove", broken)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr("policyc.compiler.APART_FROM_OBJECTS", 0)
    with pytest.raises(RuntimeError, match="Unpicklable: one and two") as raised:
        policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True)
    assert any("in the proofs' process" in note and "broken" in note for note in raised.value.__notes__)

    def also_broken(*args, **kwargs):
        raise KeyError("lost")

    monkeypatch.setattr(proof, "prove", also_broken)
    with pytest.raises(KeyError, match="lost"):
        policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True)


def test_where_other_threads_run_or_few_objects_are_emitted_the_proofs_run_here(monkeypatch) -> None:
    """A process with other threads (a progress display) is not forked, nor one that emits fewer objects than
    forking is worth."""
    import os

    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    monkeypatch.setattr("threading.active_count", lambda: 1)
    assert policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True).ok  # 22 objects
    monkeypatch.setattr("policyc.compiler.APART_FROM_OBJECTS", 0)
    monkeypatch.setattr("threading.active_count", lambda: 2)
    assert policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True).ok


def test_a_proofs_process_that_dies_is_an_error_here(monkeypatch) -> None:
    """A child that ends without sending anything (killed, out of memory) fails the build, saying how it ended."""
    import os
    import signal

    from policyc import proof

    monkeypatch.setattr(proof, "prove", lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL))
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr("policyc.compiler.APART_FROM_OBJECTS", 0)
    with pytest.raises(RuntimeError, match="the proofs' process ended without a result \\(signal 9\\)"):
        policyc.compile(POLICIES / "ai-prod.yaml", prove_apart=True)

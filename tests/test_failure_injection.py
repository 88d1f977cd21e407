"""No lost output: a build that fails at any stage leaves the previous output directory byte for byte as it was.

Failures are injected with monkeypatch where policyc writes (tests run as root, where a read-only directory
does not stop a write): OSError(ENOSPC) or OSError(EROFS) from a file write, a mkdir, a chmod or a rename,
at every step of building the staging tree and of swapping it in; KeyboardInterrupt at the same places.
Each test checks the previous tree (content and modes), that the new one is complete when the swap was
done, and that no staging directory is left beside the output.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import policyc.output.write
from policyc.commands.cli import main
from policyc.compiler import compile_file
from policyc.output.write import OutputError, write_tree
from tests.conftest import REPO

AI_PROD = REPO / "policies" / "ai-prod.yaml"
MINIMAL = REPO / "policies" / "minimal.yaml"
WRITE_ERRORS = [
    pytest.param(errno.ENOSPC, "No space left on device", id="ENOSPC"),
    pytest.param(errno.EROFS, "Read-only file system", id="EROFS"),
]


@pytest.fixture(scope="module")
def old_files():
    result = compile_file(AI_PROD, "ai-prod.yaml")
    assert result.ok
    return result.files


@pytest.fixture(scope="module")
def new_files():
    result = compile_file(MINIMAL, "minimal.yaml")
    assert result.ok
    return result.files


@pytest.fixture
def out(tmp_path, old_files) -> Path:
    """A previous output directory, alone in its parent so that any leftover beside it shows."""
    target = tmp_path / "parent" / "out"
    write_tree(old_files, target)
    return target


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file and directory under `root` with its bytes and permission bits."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None, stat.S_IMODE(p.stat().st_mode))
        for p in sorted(root.rglob("*"))
    }


def expected_tree(files) -> dict[str, bytes]:
    return {rel: f.data for rel, f in files.items()}


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_no_leftovers(out: Path) -> None:
    assert [p.name for p in out.parent.iterdir()] == ["out"], "a staging directory was left behind"


def fail_on_call(real, number: int, error: BaseException, calls: list | None = None):
    """`real`, except that its `number`-th call raises `error`."""
    calls = [] if calls is None else calls

    def wrapper(*args, **kwargs):
        calls.append(args)
        if len(calls) == number:
            raise error
        return real(*args, **kwargs)

    return wrapper


def no_exchange(monkeypatch) -> None:
    """Take the portable path: two renames instead of renameat2(RENAME_EXCHANGE)."""
    monkeypatch.setattr(policyc.output.write, "_rename_exchange", lambda a, b: False)


# --- policy errors ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "code"),
    [
        pytest.param(
            lambda t: t.replace("kind: ClusterPolicy", "kind: ClusterPolicy\n\tbad: tab"), "PC002", id="syntax"
        ),
        pytest.param(lambda t: t.replace("gpuTier: inference", "gpuTier: inferense"), "PC302", id="reference"),
        pytest.param(lambda t: t + "---\nkind: other\n", "PC004", id="two-documents"),
        pytest.param(lambda t: "", "PC005", id="emptied"),
    ],
)
def test_policy_errors_leave_the_previous_output_intact(tmp_path, out, change, code) -> None:
    before = snapshot(out)
    bad = tmp_path / "bad.yaml"
    bad.write_text(change(AI_PROD.read_text()))
    result = CliRunner().invoke(main, ["build", str(bad), "-o", str(out)])
    assert result.exit_code == 1
    assert f"error {code}" in result.stderr
    assert snapshot(out) == before
    assert_no_leftovers(out)


# --- write errors while building the staging tree -------------------------------------------------------------------


@pytest.mark.parametrize("error_number, message", WRITE_ERRORS)
@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_file_write_error_leaves_the_previous_output_intact(
    out, new_files, monkeypatch, error_number, message, which
) -> None:
    before = snapshot(out)
    number = {"first": 1, "middle": len(new_files) // 2 + 1, "last": len(new_files)}[which]
    calls: list = []
    error = OSError(error_number, os.strerror(error_number))
    monkeypatch.setattr(Path, "write_bytes", fail_on_call(Path.write_bytes, number, error, calls))
    with pytest.raises(OutputError, match=message):
        write_tree(new_files, out)
    assert len(calls) == number, "the write stopped at the first failure"
    monkeypatch.undo()
    assert snapshot(out) == before
    assert_no_leftovers(out)


@pytest.mark.parametrize("error_number, message", WRITE_ERRORS)
@pytest.mark.parametrize(
    "function", ["mkdir", "chmod", "mkdtemp"], ids=["mkdir-of-a-subdirectory", "chmod", "staging-directory"]
)
def test_directory_errors_leave_the_previous_output_intact(
    out, new_files, monkeypatch, error_number, message, function
) -> None:
    before = snapshot(out)
    error = OSError(error_number, os.strerror(error_number))
    if function == "mkdir":
        real_mkdir = Path.mkdir
        # The staging directory's own subdirectories: cluster/, nodes/, ... (the second one fails).
        monkeypatch.setattr(Path, "mkdir", fail_on_call(real_mkdir, 3, error))
    elif function == "chmod":
        monkeypatch.setattr(os, "chmod", fail_on_call(os.chmod, 2, error))  # the executable nodes/apply.sh
    else:
        mkdtemp = policyc.output.write.tempfile.mkdtemp
        monkeypatch.setattr(policyc.output.write.tempfile, "mkdtemp", fail_on_call(mkdtemp, 1, error))
    with pytest.raises(OutputError, match=message):
        write_tree(new_files, out)
    monkeypatch.undo()
    assert snapshot(out) == before
    assert_no_leftovers(out)


# --- errors and interrupts at the swap ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "swapped"),
    [
        pytest.param(1, False, id="moving-the-old-tree-aside"),
        pytest.param(2, False, id="moving-the-new-tree-in"),
        pytest.param(3, True, id="after-the-swap"),
    ],
)
@pytest.mark.parametrize(
    "error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()], ids=["ENOSPC", "interrupt"]
)
def test_rename_failure_at_each_step_of_the_portable_swap(
    out, old_files, new_files, monkeypatch, number, swapped, error
) -> None:
    no_exchange(monkeypatch)
    monkeypatch.setattr(os, "rename", fail_on_call(os.rename, number, error))
    if swapped:  # nothing is left to fail once the new tree is in place
        write_tree(new_files, out)
    else:
        with pytest.raises(OutputError if isinstance(error, OSError) else KeyboardInterrupt):
            write_tree(new_files, out)
    monkeypatch.undo()
    assert files_of(out) == expected_tree(new_files if swapped else old_files)
    assert_no_leftovers(out)


def test_failure_to_put_the_old_tree_back_says_where_it_is(out, old_files, new_files, monkeypatch) -> None:
    no_exchange(monkeypatch)
    calls: list = []
    real_rename = os.rename

    def rename(src, dst):
        calls.append((src, dst))
        if len(calls) >= 2:  # the new tree cannot move in, and the old one cannot move back
            raise OSError(errno.EIO, "Input/output error")
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OutputError, match="nor put its previous contents back") as failure:
        write_tree(new_files, out)
    monkeypatch.undo()
    aside = Path(calls[0][1])
    assert str(aside) in str(failure.value)
    assert files_of(aside) == expected_tree(old_files), "the previous output is where the message says"


def test_rename_failure_into_a_new_directory(tmp_path, new_files, monkeypatch) -> None:
    target = tmp_path / "parent" / "out"
    target.parent.mkdir()
    monkeypatch.setattr(os, "rename", fail_on_call(os.rename, 1, OSError(errno.EROFS, "Read-only file system")))
    with pytest.raises(OutputError, match="Read-only file system"):
        write_tree(new_files, target)
    monkeypatch.undo()
    assert list(target.parent.iterdir()) == []


def test_atomic_exchange_swaps_the_whole_tree(out, new_files, monkeypatch) -> None:
    calls: list = []
    monkeypatch.setattr(os, "rename", fail_on_call(os.rename, 0, OSError(), calls))
    write_tree(new_files, out)
    if calls:
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    assert files_of(out) == expected_tree(new_files)
    assert_no_leftovers(out)


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_interrupt_while_writing_the_staging_tree(out, new_files, monkeypatch, exchange) -> None:
    if not exchange:
        no_exchange(monkeypatch)
    before = snapshot(out)
    monkeypatch.setattr(Path, "write_bytes", fail_on_call(Path.write_bytes, 3, KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        write_tree(new_files, out)
    monkeypatch.undo()
    assert snapshot(out) == before
    assert_no_leftovers(out)


# --- the command line --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("error_number, message", WRITE_ERRORS)
def test_cli_reports_a_write_failure_with_exit_code_2(out, monkeypatch, error_number, message) -> None:
    before = snapshot(out)
    error = OSError(error_number, os.strerror(error_number))
    monkeypatch.setattr(Path, "write_bytes", fail_on_call(Path.write_bytes, 2, error))
    result = CliRunner().invoke(main, ["build", str(MINIMAL), "-o", str(out)])
    monkeypatch.undo()
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"policyc: cannot write {out}: {message}" in result.stderr
    assert "Traceback" not in result.output
    assert snapshot(out) == before
    assert_no_leftovers(out)


INTERRUPTED_BUILD = """
import os, sys
from pathlib import Path
real, calls = Path.write_bytes, []
def write_bytes(self, data):
    calls.append(self)
    if len(calls) == 3:
        raise KeyboardInterrupt
    return real(self, data)
Path.write_bytes = write_bytes
sys.argv = ["policyc", "build", sys.argv[1], "-o", sys.argv[2]]
from policyc.commands.cli import run
run()
"""


def interrupted_build(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", INTERRUPTED_BUILD, str(MINIMAL), str(out)], capture_output=True, text=True, timeout=60
    )


def test_cli_interrupted_mid_write_keeps_the_output(out) -> None:
    before = snapshot(out)
    result = interrupted_build(out)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert snapshot(out) == before
    assert_no_leftovers(out)


def test_cli_interrupted_mid_write_exits_130(out) -> None:
    result = interrupted_build(out)
    assert result.returncode == 130, result.stderr
    assert "policyc: interrupted" in result.stderr

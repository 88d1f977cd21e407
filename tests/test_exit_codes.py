"""The exit codes of docs/commands.md are the program's: every example command of its table, run as a process in the
directory the page describes, ends with its row's code; the two codes no command can be made to give (an internal
error, an interrupt) are given by a policyc whose compilation raises, as a bug or Ctrl-C would."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import POLICIES, REPO

PAGE = REPO / "docs" / "commands.md"


def documented() -> dict[int, list[str]]:
    """The table of '## Exit codes': code -> the example commands of its row (in backticks, starting 'policyc ')."""
    section = PAGE.read_text(encoding="utf-8").split("## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("| ")]
    header, *rows = rows
    assert header == ["code", "meaning", "for example"], header
    return {int(code): re.findall(r"`(policyc [^`]*)`", examples) for code, _, examples in rows}


def test_the_table_has_the_codes_of_the_program() -> None:
    from policyc.commands import cli

    program = {cli.EXIT_OK, cli.EXIT_FAILED, cli.EXIT_USAGE, cli.EXIT_INTERNAL, 130}
    assert set(documented()) == program
    # every code a command can give has an example; 3 and 130 are given by the tests below
    assert all(documented()[code] for code in program - {cli.EXIT_INTERNAL, 130})


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """The directory the page describes."""
    d = tmp_path_factory.mktemp("exit-codes")
    policy = (POLICIES / "minimal.yaml").read_text()
    (d / "policy.yaml").write_text(policy)
    assert "gpuTier: a100" in policy
    (d / "broken.yaml").write_text(policy.replace("gpuTier: a100", "gpuTier: a10"))  # a tier the policy lacks
    for out in ("manifests", "stale"):
        assert policyc(d, f"policyc build policy.yaml -o {out}").returncode == 0
    edited = d / "stale" / "kustomization.yaml"
    edited.write_text(edited.read_text() + "# edited by hand\n")
    (d / "foreign").mkdir()
    (d / "foreign" / "notes.txt").write_text("not policyc's\n")
    return d


def policyc(cwd: Path, command: str) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "policyc", command
    return subprocess.run(
        [sys.executable, "-m", "policyc", *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("code", "command"), [(code, command) for code, commands in documented().items() for command in commands]
)
def test_each_documented_example_exits_with_its_code(workdir: Path, code: int, command: str) -> None:
    before = sorted(p.relative_to(workdir) for p in workdir.rglob("*"))
    result = policyc(workdir, command)
    assert result.returncode == code, (command, result.stdout[-2000:], result.stderr[-2000:])
    if code:  # a failure writes nothing
        assert sorted(p.relative_to(workdir) for p in workdir.rglob("*")) == before, command
        assert "Traceback" not in result.stderr
        shutil.rmtree(workdir / "out", ignore_errors=True)


RAISING = """
import sys
import policyc.commands.cli as cli

def compile_policy(*args, **kwargs):
    raise {error}

cli.compile_policy = compile_policy
sys.argv = ["policyc", "validate", "policy.yaml"]
cli.run()
"""


@pytest.mark.parametrize(
    ("error", "code", "says"),
    [
        ("RuntimeError('a bug')", 3, "policyc: internal error: RuntimeError: a bug"),
        ("KeyboardInterrupt()", 130, "policyc: interrupted"),
    ],
)
def test_a_bug_and_an_interrupt(workdir: Path, error: str, code: int, says: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", RAISING.format(error=error)], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == code, result.stderr
    assert says in result.stderr.splitlines() and "Traceback" not in result.stderr, result.stderr

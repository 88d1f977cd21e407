"""Progress of a long build or validation (issue 30, point 5): on a terminal, a line on stderr naming the stage and
what it works on; nothing when stderr is not a terminal or with --quiet.

The commands run as processes, their stderr a pseudo-terminal (a real one, as a user's shell gives) or a pipe. The
line appears once the work has taken `progress.DELAY` seconds: the processes here set it (0: from the start; 60:
never), as the shipped example builds in well under a second.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

import policyc
from policyc.commands import progress
from policyc.compiler import STAGES
from tests.conftest import POLICIES, REPO

RUN_WITH_DELAY = (
    "import sys; from policyc.commands import progress; progress.DELAY = float(sys.argv.pop(1)); "
    "from policyc.commands.cli import run; run()"
)
"""`policyc ARGS` with the delay before the line appears set by the first argument."""

CASE = REPO / "tests" / "cases" / "invalid" / "clusterapi-invalid-sync-regex.yaml"
"""A policy with one error, its output recorded in its file (tests/test_invalid_cases.py checks it)."""

LINE = re.compile(r"\r\x1b\[K(policyc: [^\r]*)")
"""A drawn line: back to the line's start, cleared, then the text."""


def policyc_on(
    stderr: str, *args: str, delay: float = 0.0, columns: int = 200, term: str = "xterm", cwd: Path = REPO
) -> tuple[int, str]:
    """(exit code, stderr) of `policyc ARGS` whose stderr is a pseudo-terminal `columns` wide ('terminal') or a pipe
    ('pipe'); stdout is discarded."""
    command = [sys.executable, "-c", RUN_WITH_DELAY, str(delay), *args]
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": term, "NO_COLOR": "1"}  # diagnostics as a pipe gets them
    if stderr == "pipe":
        run = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        return run.returncode, run.stderr.decode()
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=follower) as process:
        os.close(follower)
        received = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # Linux: EIO once the process has closed the terminal
                break
            if not chunk:
                break
            received += chunk
        os.close(leader)
    return process.returncode, received.decode().replace("\r\n", "\n")  # the terminal's own line ending


def drawn(stderr: str) -> list[str]:
    return LINE.findall(stderr)


def test_the_compiler_tells_each_stage_as_it_ends() -> None:
    told: list[tuple[str, int]] = []
    compilation = policyc.compile(
        POLICIES / "ai-prod.yaml", on_stage=lambda stage, so_far: told.append((stage, len(so_far.artifacts)))
    )
    # the shipped example emits 22 objects (golden/ai-prod: 22 files, one object each)
    assert told == [
        ("load", 0),
        ("parse", 0),
        ("check", 0),
        ("emit", 22),
        ("verify", 22),
        ("prove", 22),
        ("render", 22),
    ]
    assert tuple(compilation.timings) == STAGES == tuple(stage for stage, _ in told)


def test_a_build_on_a_terminal_shows_each_stage_and_what_it_works_on(tmp_path) -> None:
    out = tmp_path / "out"
    code, stderr = policyc_on("terminal", "build", "policies/ai-prod.yaml", "-o", str(out))
    assert code == 0, stderr
    lines = drawn(stderr)
    stages = [
        re.fullmatch(r"policyc: \d+\.\d s, stage (\d)/8: policies/ai-prod\.yaml: (\w+).*", line) for line in lines
    ]
    assert all(stages), lines
    assert [int(s.group(1)) for s in stages] == sorted(int(s.group(1)) for s in stages), "in order"
    seen = {s.group(2) for s in stages}
    assert seen == {"load", "parse", "check", "emit", "verify", "prove", "render", "write"}, lines
    # ai-prod.yaml: tenants team-a, team-b, team-c; 7 node pools; 5 workloads; 22 objects, one file each
    assert any(line.endswith(": emit 3 tenants, 7 pools, 5 workloads") for line in lines), lines
    assert any(line.endswith(": prove 22 objects") for line in lines), lines
    assert any(line.endswith(": write 22 files") for line in lines), lines
    # the line is erased before the summary, which reads as it does without the display
    assert stderr.endswith(f"\r\x1b[Kpolicies/ai-prod.yaml: wrote 22 files to {out}\n"), stderr[-300:]


def test_a_validation_of_several_policies_counts_them() -> None:
    code, stderr = policyc_on("terminal", "validate", "policies/minimal.yaml", "policies/ai-prod.yaml")
    assert code == 0, stderr
    lines = drawn(stderr)
    assert "policyc: 0.0 s, policy 1/2, stage 1/7: policies/minimal.yaml: load" in {
        re.sub(r"\d+\.\d s", "0.0 s", line) for line in lines
    }, lines
    assert any(re.fullmatch(r"policyc: \d+\.\d s, policy 2/2, stage 7/7: policies/ai-prod\.yaml: render 22 objects", x)
               for x in lines), lines  # fmt: skip
    assert stderr.endswith("\r\x1b[K"), "erased: a validation that passes prints nothing"


def test_the_line_never_wraps() -> None:
    code, stderr = policyc_on("terminal", "validate", "policies/ai-prod.yaml", columns=40)
    assert code == 0, stderr
    lines = drawn(stderr)
    assert lines and all(len(line) == 39 for line in lines), lines  # each longer than 39 columns, cut at 39


def test_nothing_before_the_delay() -> None:
    code, stderr = policyc_on("terminal", "validate", "policies/ai-prod.yaml", delay=60)
    assert (code, stderr) == (0, "")


@pytest.mark.parametrize("stderr", ["terminal", "pipe"])
def test_quiet_shows_diagnostics_only(stderr: str, tmp_path) -> None:
    built = policyc_on(stderr, "build", "--quiet", "policies/ai-prod.yaml", "-o", str(tmp_path / "out"))
    assert built == (0, "")
    assert (tmp_path / "out" / "kustomization.yaml").is_file()
    checked = policyc_on(stderr, "build", "-q", "--check", "policies/ai-prod.yaml", "-o", str(tmp_path / "out"))
    assert checked == (0, "")
    code, found = policyc_on(stderr, "validate", "-q", CASE.name, cwd=CASE.parent)
    assert (code, found) == (1, _recorded_output(CASE))


def test_without_a_terminal_stderr_is_as_it_was(tmp_path) -> None:
    """A pipe gets no line even when the work is long (here: from the start), byte for byte what policyc wrote before
    the display."""
    out = tmp_path / "out"
    assert policyc_on("pipe", "build", "policies/ai-prod.yaml", "-o", str(out)) == (
        0,
        f"policies/ai-prod.yaml: wrote 22 files to {out}\n",
    )
    assert policyc_on("pipe", "build", "--check", "policies/ai-prod.yaml", "-o", str(out)) == (
        0,
        f"{out} is up to date with policies/ai-prod.yaml (unchanged since the last build: reused)\n",
    )
    assert policyc_on("pipe", "validate", CASE.name, cwd=CASE.parent) == (1, _recorded_output(CASE))


def test_a_dumb_terminal_gets_no_line() -> None:
    """A terminal that cannot erase a line (TERM=dumb) is written to as a pipe is."""
    assert policyc_on("terminal", "validate", "policies/ai-prod.yaml", term="dumb") == (0, "")


def _recorded_output(case: Path) -> str:
    """What `policyc validate` prints for a case with one error: its recorded diagnostic, then the count."""
    recorded = case.read_text(encoding="utf-8").partition("\n# output\n")[2]
    diagnostics = [line.removeprefix("# ") for line in recorded.splitlines()]
    return "\n".join([*diagnostics, f"{case.name}: 1 error"]) + "\n"


def test_a_reused_cluster_is_named_on_the_line(tmp_path) -> None:
    """A rebuild of an unchanged fleet (policyc.output.records) compiles nothing: the line names each cluster as it is
    checked and reused, with no stage."""
    build = ("build", "policies/fleet", "-o", str(tmp_path / "out"), "--repo-url", "https://git.example.com/f.git")
    assert policyc_on("pipe", *build)[0] == 0
    code, stderr = policyc_on("terminal", *build)
    assert code == 0, stderr
    lines = {re.sub(r"\d+\.\d s", "0.0 s", line) for line in drawn(stderr)}
    for number, cluster in enumerate(("cloud", "onprem"), 1):
        line = f"policyc: 0.0 s, policy {number}/2: policies/fleet (cluster {cluster}): {progress.REUSE}"
        assert line in lines, lines
    assert stderr.endswith("every cluster unchanged since the last build: reused)\n"), stderr[-300:]

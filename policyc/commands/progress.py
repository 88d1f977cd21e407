"""What a long build or validation is doing, shown on a terminal: one line on stderr, such as

    policyc: 5.2 s, stage 6/8: policies/big.yaml: prove 10,811 objects

drawn once the work has taken `DELAY` seconds, redrawn as each stage starts and as the time passes, and erased when
the work ends, so that what follows reads as it would without it. A quicker command, a stderr that is not a terminal
(a pipe, a file, CI's log) or `--quiet` shows nothing: stderr is then byte for byte what it would be without it.

The compiler tells the end of each of its stages (`policyc.compile`'s `on_stage`); a thread of its own draws the line
when no stage has ended for a while, and the elapsed time.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from policyc.compiler import STAGES

if TYPE_CHECKING:
    from policyc.compiler import Compilation

DELAY = 1.0
"""Seconds of work before the line appears."""

REFRESH = 0.25
"""Seconds between two draws of the line while a stage runs."""

REUSE = "unchanged since the last build: reusing its output"
"""What the line says in place of a stage while a policy's previous output is checked (`Progress.reuse`)."""

_ERASE = "\r\x1b[K"
"""Back to the start of the line, and clear it (ECMA-48's carriage return and Erase in Line)."""


def on_terminal() -> bool:
    """Whether stderr is a terminal that can redraw a line (not one that declares itself dumb)."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


class Progress:
    """The line of one command: the policies it compiles, each through `STAGES` and then the command's own stages.

    The command's thread updates the state as the compiler tells it and the line's thread reads it, both under one
    lock, which also keeps the two from writing to stderr at once."""

    def __init__(self, stages: tuple[str, ...], policies: int, *, live: bool) -> None:
        self.stages, self.policies, self.live = stages, policies, live
        self.started = time.perf_counter()
        self.policy, self.number, self.stage = "", 0, stages[0]
        self.compilation: Compilation | None = None
        self.drawn = False
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="policyc progress", daemon=True)
        if live:
            self._thread.start()

    def begin(self, policy: str) -> None:
        """The next policy's compile begins."""
        if self.live:
            with self._lock:
                self.policy, self.number, self.stage, self.compilation = policy, self.number + 1, self.stages[0], None
                self._draw_when_due()

    def reuse(self, policy: str) -> None:
        """The next policy is not compiled: its previous output is checked and reused (`policyc.output.records`)."""
        if self.live:
            with self._lock:
                self.policy, self.number, self.stage, self.compilation = policy, self.number + 1, REUSE, None
                self._draw_when_due()

    def lap(self, stage: str, compilation: Compilation) -> None:
        """The compiler's `on_stage`: `stage` has ended, the next begins."""
        following = self.stages.index(stage) + 1
        if self.live and following < len(self.stages):
            with self._lock:
                self.stage, self.compilation = self.stages[following], compilation
                self._draw_when_due()

    def close(self) -> None:
        """Stop drawing, and erase the line if it is drawn."""
        self._done.set()
        if self.live:
            self._thread.join()
        if self.drawn:
            click.echo(_ERASE, err=True, nl=False)
            self.drawn = False

    def _tick(self) -> None:
        wait = DELAY
        while not self._done.wait(wait):
            with self._lock:
                if self.number:  # a policy has begun
                    self._draw()
            wait = REFRESH

    def _draw_when_due(self) -> None:
        if time.perf_counter() - self.started >= DELAY:
            self._draw()

    def _draw(self) -> None:
        """Draw the line (the lock held), cut to the terminal's width so that it never wraps."""
        where = [f"{time.perf_counter() - self.started:.1f} s"]
        if self.policies > 1:
            where.append(f"policy {self.number}/{self.policies}")
        if self.stage != REUSE:
            where.append(f"stage {self.stages.index(self.stage) + 1}/{len(self.stages)}")
        counted = _counts(self.stage, self.compilation)
        line = f"policyc: {', '.join(where)}: {self.policy}: {self.stage}{' ' + counted if counted else ''}"
        click.echo(_ERASE + line[: _width() - 1], err=True, nl=False)
        self.drawn = True


def _width() -> int:
    """The terminal's width in columns (stderr's: stdout may go elsewhere)."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or 80  # 0 where the terminal never said
    except (OSError, ValueError):
        return 80


def _counts(stage: str, compilation: Compilation | None) -> str:
    """What `stage` works on, as far as the compilation so far tells: the cluster's size, the objects, the files."""
    if compilation is None:
        return ""
    cluster = compilation.cluster
    if stage in ("check", "emit") and cluster is not None:
        return f"{len(cluster.tenants):,} tenants, {len(cluster.pools):,} pools, {len(cluster.workloads):,} workloads"
    if stage in ("verify", "prove", "render") and compilation.artifacts:
        return f"{len(compilation.artifacts):,} objects"
    if stage not in STAGES and compilation.files:  # the command's own: writing or comparing the files
        return f"{len(compilation.files):,} files"
    return ""


@contextlib.contextmanager
def shown(after: tuple[str, ...] = (), policies: int = 1, *, quiet: bool = False) -> Iterator[Progress]:
    """The line of a command that compiles `policies` policies and then runs the stages `after` (build's write): live
    on a terminal unless `quiet`, erased however the block ends."""
    progress = Progress((*STAGES, *after), policies, live=not quiet and on_terminal())
    try:
        yield progress
    finally:
        progress.close()

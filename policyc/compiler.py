"""The pipeline: load -> parse -> resolve -> check -> backends -> verify and prove placement -> render.

Each stage is a plain function of the previous stage's result. The pipeline stops after the check
stage if any error was found (backends only ever see a consistent cluster) and after verification if
an emitted object fails its schema. It never writes files: `policyc.write` does, for the CLI.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass, field

from policyc.artifacts import Artifact
from policyc.diagnostics import PolicyError, Report, diag
from policyc.ir import Cluster
from policyc.write import OutputFile


@dataclass
class Compilation:
    report: Report
    cluster: Cluster | None = None
    artifacts: list[Artifact] = field(default_factory=list)
    files: dict[str, OutputFile] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent per stage, for the benchmark."""

    @property
    def ok(self) -> bool:
        return not self.report.failed


class _Clock:
    def __init__(self, timings: dict[str, float]):
        self.timings = timings
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + now - self.last
        self.last = now


def compile_file(path: str | os.PathLike[str], display_name: str | None = None) -> Compilation:
    """Compile the policy at `path`; `display_name` is how diagnostics name the file.

    The cyclic garbage collector is paused meanwhile: a large build allocates hundreds of thousands of
    short-lived, acyclic objects, and the collections they trigger cost a third of its time.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _compile(path, display_name)
    finally:
        if paused:
            gc.enable()


def _compile(path: str | os.PathLike[str], display_name: str | None) -> Compilation:
    from policyc import backends
    from policyc.checks import run_checks
    from policyc.load import load_file
    from policyc.parse import parse
    from policyc.proof import prove
    from policyc.resolve import resolve
    from policyc.verify import verify
    from policyc.write import render

    name = display_name or os.fspath(path)
    result = Compilation(Report(name))
    report, clock = result.report, _Clock(result.timings)
    try:
        doc = load_file(path, name)
    except PolicyError as e:
        report.extend(e.diagnostics)
        return result
    report.source_map = doc.source_map
    report.extend(doc.diagnostics)
    clock.lap("load")
    if not isinstance(doc.data, dict):
        report.extend(
            [
                diag(
                    "wrong-type",
                    "a policy must be a mapping with apiVersion, kind, metadata and spec",
                    (),
                    hint="start from an example in policies/",
                )
            ]
        )
        return result
    parsed = parse(doc.data, doc.source_map)
    report.extend(parsed.diagnostics)
    clock.lap("parse")
    if parsed.policy is None:
        return result
    cluster, diagnostics = resolve(parsed, name)
    report.extend(diagnostics)
    if cluster is None:
        return result
    result.cluster = cluster
    # A value the loader rejected is null from here on: what later stages would say about it is said already.
    report.extend(d for d in run_checks(cluster) if not doc.source_map.is_rejected(d.path))
    clock.lap("check")
    if report.failed:
        return result
    result.artifacts = backends.emit(cluster)
    clock.lap("emit")
    report.extend(verify(result.artifacts, cluster.kubernetes_version))
    clock.lap("verify")
    report.extend(prove(cluster, result.artifacts))
    clock.lap("prove")
    if report.failed:
        return result
    result.files = render(result.artifacts, cluster.name, cluster.source)
    clock.lap("render")
    return result

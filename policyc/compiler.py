"""The pipeline: load -> parse -> resolve -> check -> emit -> verify and prove -> render.

Each stage is a plain function of the previous stage's result. The pipeline stops after the check
stage if any error was found (what the backends emit is only used for a consistent cluster; a large build in a
process of its own emits while a child process checks, `_check_and_emit`) and after verification if
an emitted object fails its schema. It never writes files: `policyc.output.write` does, for the CLI.
It looks the policy's scheduler backend and its pools' node provisioners up in the registry, once, and passes them to
the stages that need them.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from policyc.artifacts import Artifact
from policyc.codes import Severity
from policyc.diagnostics import Diagnostic, PolicyError, Report, diag

if TYPE_CHECKING:
    from policyc.apart import Apart
    from policyc.backends.interface import Provisioner, SchedulerBackend
    from policyc.ir import Cluster
    from policyc.language.load import Document
    from policyc.language.parse import Parsed
    from policyc.output.write import OutputFile


@dataclass(eq=False)
class Compilation:
    report: Report
    cluster: Cluster | None = None
    backend: SchedulerBackend | None = None
    """The scheduler backend the cluster selects (`policyc.registry.scheduler`), once the policy resolved."""
    provisioners: dict[str, Provisioner] = field(default_factory=dict)
    """The node provisioners its pools select (`policyc.registry.provisioner`), by name, in registry order."""
    artifacts: list[Artifact] = field(default_factory=list)
    files: dict[str, OutputFile] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent per stage, for the benchmark."""
    reused: bool = False
    """The output of a previous build, not compiled (`policyc.output.records`): its files and diagnostics only."""

    @property
    def ok(self) -> bool:
        return not self.report.failed


STAGES = ("load", "parse", "check", "emit", "verify", "prove", "render")
"""The stages a compile times (`Compilation.timings`), in the order they run; check includes resolving the policy."""

StageHook = Callable[[str, Compilation], None]
"""Told the name of each stage as it ends, with the compilation so far (which a progress display counts)."""


class _Clock:
    def __init__(self, result: Compilation, on_stage: StageHook | None):
        self.result, self.on_stage = result, on_stage
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        timings = self.result.timings
        timings[stage] = timings.get(stage, 0.0) + now - self.last
        self.last = now
        if self.on_stage is not None:
            self.on_stage(stage, self.result)


TEXT_NAME = "<policy>"
"""How diagnostics name a policy compiled from text without a name."""


def compile_file(
    path: str | os.PathLike[str],
    display_name: str | None = None,
    on_stage: StageHook | None = None,
    cluster: str | None = None,
    *,
    prove_apart: bool = False,
) -> Compilation:
    """Compile the policy at `path`, a file or a policy directory (`policyc.language.teams`); `display_name` is how
    diagnostics name it; `cluster`, a cluster document of the directory whose overrides apply
    (`policyc.language.fleet`). `prove_apart`: the proofs may run in a child process (`_prove_and_render`), and so
    may the load of a large policy file (`_load_apart`) and the checks of a large cluster (`_check_and_emit`)."""
    name = display_name or os.fspath(path)
    if os.path.isdir(path):
        from policyc.language.teams import load_directory

        return _paused_gc(lambda: _compile(lambda: load_directory(path, name, cluster), name, on_stage, prove_apart))
    from policyc.language.load import load_file

    loading = _load_apart(path, name) if prove_apart else None
    load = loading.result if loading is not None else lambda: load_file(path, name)
    return _paused_gc(lambda: _compile(load, name, on_stage, prove_apart))


LOAD_APART_FROM_BYTES = 16 * 1024
"""Smaller policy files are loaded in order: a few milliseconds of loading are not worth a fork and the pickling of
what it loads (the benchmark's 5,000-node policy, 215 KB, loads in about 70 ms and comes back through the pipe in
about 6)."""


def _load_apart(path: str | os.PathLike[str], name: str) -> Apart[Document] | None:
    """The policy file at `path` loaded in a child process (`policyc.apart`) while this one imports the pipeline
    (`_compile`'s imports: the language's models, the checks, the emitters), if it has `LOAD_APART_FROM_BYTES` or
    more; None where it is loaded in order. Nothing the pipeline imports is imported before it: the fork is small."""
    from policyc.apart import Apart
    from policyc.language.load import load_file

    try:
        if os.stat(path).st_size < LOAD_APART_FROM_BYTES:
            return None
    except OSError:  # the load in order reports it
        return None
    return Apart.start(lambda: load_file(path, name), "the policy's loading process")


def compile_team(
    team: str, platform: str, on_stage: StageHook | None = None, cluster: str | None = None
) -> Compilation:
    """Compile the team file `team` with the platform document of the policy directory `platform`, without the other
    teams' files (`policyc validate TEAM --platform DIR`); `cluster`, a cluster document of the directory whose
    overrides apply."""
    from policyc.language.teams import load_team

    compilation = _paused_gc(lambda: _compile(lambda: load_team(team, platform, platform, cluster), team, on_stage))
    report = compilation.report
    # A warning in the platform's file may hold only without the teams left out (the autoscaling no workload of this
    # team uses): the directory's check shows the platform's warnings; the team's shows its own, and every error.
    report.diagnostics = [d for d in report.diagnostics if d.severity is Severity.ERROR or report.file_of(d) == team]
    return compilation


def fleet_files(
    directory: str | os.PathLike[str],
    compilations: Mapping[str, Compilation],
    root: str,
    repo_url: str,
    revision: str,
    project: str = "default",
    namespace: str = "argocd",
) -> dict[str, OutputFile]:
    """A fleet's output (docs/teams.md): each cluster's files (its compilation's) under its name, and the ApplicationSet
    deploying each directory `<root>/<cluster>` of the git repository `repo_url` at `revision`, in Argo CD's
    `namespace`, its Applications in the Argo CD `project`."""
    from policyc.language.teams import fleet_of
    from policyc.output.argocd import APPLICATION_SET_FILE, application_set
    from policyc.output.write import OutputFile

    files = {f"{name}/{path}": f for name, c in compilations.items() for path, f in c.files.items()}
    platform, destinations = fleet_of(directory)
    text = application_set(platform, destinations, "" if root == "." else root, repo_url, revision, project, namespace)
    return dict(sorted({**files, APPLICATION_SET_FILE: OutputFile(text)}.items()))


def compile_text(
    text: str, name: str = TEXT_NAME, on_stage: StageHook | None = None, *, prove_apart: bool = False
) -> Compilation:
    """Compile policy text; `name` is how diagnostics (and generated file headers) name it. `prove_apart`: see
    `_prove_and_render`."""
    from policyc.language.load import load_bytes

    return _paused_gc(lambda: _compile(lambda: load_bytes(text.encode("utf-8"), name), name, on_stage, prove_apart))


def _paused_gc(build: Callable[[], Compilation]) -> Compilation:
    """Run `build` with the cyclic garbage collector paused, as it was found afterwards.

    A large build allocates hundreds of thousands of short-lived, acyclic objects, and the collections they
    trigger cost a third of its time.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return build()
    finally:
        if paused:
            gc.enable()


def _compile(
    load: Callable[[], Document], name: str, on_stage: StageHook | None, prove_apart: bool = False
) -> Compilation:
    from policyc import registry
    from policyc.checks import run_checks
    from policyc.checks.written import Written
    from policyc.emit import emit
    from policyc.resolve import resolve

    result = Compilation(Report(name))
    report, clock = result.report, _Clock(result, on_stage)
    read = _read(load, report, clock)
    if read is None:
        return result
    doc, parsed = read
    # Generated files name the file of the policy's ClusterPolicy: a directory's platform file.
    cluster, diagnostics = resolve(parsed, doc.source_map.files.get((), (name,))[0])
    report.extend(diagnostics)
    if cluster is None:
        return result
    result.cluster = cluster
    # The union spec.scheduler is has a member per registered backend: the name is one of theirs.
    selected = cluster.scheduler.backend
    used = [name for name in registry.PROVISIONERS if any(p.provisioning == name for p in cluster.pools)]

    def check() -> list[Diagnostic]:
        # The backends' rules faces are imported here: checked apart, only the child imports them (and what their
        # rules read: a scheduler's configuration models, 5 to 7 ms).
        own_checks = (
            *registry.scheduler_rules(selected).CHECKS,
            *(c for n in used for c in registry.provisioner_rules(n).CHECKS),
        )
        # A value the loader rejected is null from here on: what later stages would say about it is said already.
        found = run_checks(cluster, Written(doc.data), own_checks)
        return [d for d in found if not doc.source_map.is_rejected(d.path)]

    def emit_all() -> _Emitted:
        backend = registry.scheduler(selected)
        provisioners = {name: registry.provisioner(name) for name in used}
        return backend, provisioners, emit(cluster, backend, provisioners)

    items = len(cluster.pools) + len(cluster.tenants) + len(cluster.workloads)
    if _check_and_emit(result, clock, check, emit_all, prove_apart and items >= CHECK_APART_FROM_ITEMS):
        _prove_and_render(result, cluster, result.backend, clock, prove_apart)  # type: ignore[arg-type]
    return result


_Emitted = tuple["SchedulerBackend", dict[str, "Provisioner"], list[Artifact]]
"""The selected scheduler backend, the node provisioners the pools select, and the artifacts they emit."""

CHECK_APART_FROM_ITEMS = 300
"""Smaller clusters (pools, tenants and workloads) are checked in order: the fork and the pages it copies cost about
10 ms of CPU, about what checking a few hundred items takes (the benchmark's 5,000-node policy, 800 items, is checked
in 40 to 60 ms; its 1,250-node policy, 200 items, stays in order). A judgement, not a measured break-even."""


def _check_and_emit(
    result: Compilation,
    clock: _Clock,
    check: Callable[[], list[Diagnostic]],
    emit_all: Callable[[], _Emitted],
    apart: bool,
) -> bool:
    """Report what `check` finds and, if it is no error, keep what `emit_all` emits (`result.backend`, `.provisioners`
    and `.artifacts`); whether it was. `apart`: the checks may run in a child process (`policyc.apart`) while this one
    emits; what it emits is then dropped, and an exception the emitters raised ignored, if the checks find an error:
    the emitters' work is only ever used for a cluster that passed the checks (the emitters may fail on one that did
    not, for the reasons the checks give)."""
    from policyc.apart import Apart

    report = result.report
    checking = Apart.start(check, "the checks' process") if apart else None
    if checking is None:
        report.extend(check())
        clock.lap("check")
        if report.failed:
            return False
        result.backend, result.provisioners, result.artifacts = emit_all()
        clock.lap("emit")
        return True
    failure: Exception | None = None
    try:
        result.backend, result.provisioners, result.artifacts = emit_all()
    except Exception as e:  # raised below if the checks pass
        failure = e
    except BaseException:
        checking.cancel()
        raise
    clock.lap("emit")
    report.extend(checking.result())
    clock.lap("check")
    if report.failed:
        result.backend, result.provisioners, result.artifacts = None, {}, []
        return False
    if failure is not None:
        raise failure
    return True


def _prove_and_render(
    result: Compilation, cluster: Cluster, backend: SchedulerBackend, clock: _Clock, prove_apart: bool
) -> None:
    """Verify and prove the emitted objects, and render the files (`result.files`) if they hold. `prove_apart`: the
    proofs may run in a child process while this one verifies and renders (`policyc.apart`), if there are
    `APART_FROM_OBJECTS` objects or more."""
    from policyc.apart import Apart
    from policyc.output.write import render
    from policyc.proof import prove
    from policyc.proof.schemas import verify
    from policyc.tenancy.proof import check as prove_tenancy

    report = result.report

    def proofs() -> list[Diagnostic]:
        proven = prove(cluster, result.artifacts, backend.KINDS)
        # A tenancy proof failure is a policyc bug; on a policy already found wrong (a template refused for its
        # priority class, say) it would only repeat that finding as one.
        if not any(d.severity is Severity.ERROR for d in proven):
            proven += prove_tenancy(cluster, result.artifacts, backend)
        return proven

    objects = sum(len(a.manifests) for a in result.artifacts)
    apart = Apart.start(proofs, "the proofs' process") if prove_apart and objects >= APART_FROM_OBJECTS else None
    try:
        report.extend(verify(result.artifacts, cluster.kubernetes_version))
        clock.lap("verify")
        if apart is None:
            report.extend(proofs())
            clock.lap("prove")
            if report.failed:
                return
        # Apart, the files are rendered while the child proves, and dropped if the proofs fail.
        result.files = render(result.artifacts, cluster.name, cluster.source)
        clock.lap("render")
    except BaseException:
        if apart is not None:
            apart.cancel()
        raise
    if apart is not None:
        report.extend(apart.result())
        clock.lap("prove")
        if report.failed:
            result.files = {}


def _read(load: Callable[[], Document], report: Report, clock: _Clock) -> tuple[Document, Parsed] | None:
    """The policy loaded and parsed, its diagnostics reported; None when there is no policy to resolve."""
    from policyc.language.parse import parse

    try:
        doc = load()
    except PolicyError as e:
        report.extend(e.diagnostics)
        return None
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
        return None
    parsed = parse(doc.data, doc.source_map)
    report.extend(parsed.diagnostics)
    clock.lap("parse")
    return None if parsed.policy is None else (doc, parsed)


APART_FROM_OBJECTS = 1_000
"""Fewer emitted objects are proven in order, in this process: the fork and the pages it copies cost about 10 ms of
CPU, more than proving a few hundred objects takes (the shipped example's 22 objects validate 11 ms slower apart;
the benchmark's 5,805 prove in about 100 ms)."""

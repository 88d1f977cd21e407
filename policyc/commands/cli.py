"""The command line: click commands only; the work is in the modules they call.

Exit codes: 0 success; 1 the policy has errors, or (with --check) the output directory differs from the
build; 2 usage error (bad option, missing argument, an output directory policyc will not replace or
cannot write, a standard output that cannot be written); 3 internal error (a policyc bug).
"""

from __future__ import annotations

import errno
import gc
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from policyc import __version__
from policyc import compile as compile_policy

if TYPE_CHECKING:
    from collections.abc import Callable

    from policyc.commands.progress import Progress
    from policyc.compiler import Compilation, StageHook
    from policyc.diagnostics import Diagnostic, Report
    from policyc.output.drift import Drift

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
DIAGNOSTIC_FORMATS = ("text", "json", "github", "sarif")
STDOUT = "-"
"""The output 'directory' that stands for standard output (`build -o -`)."""
_own_process = False
"""Whether the commands run in a process of policyc's own (`run`): build and validate then prove in a child process
while they verify and render, and load a large policy file and check a large cluster in others while they import the
pipeline and emit (`policyc.compile`'s `prove_apart`); not when called from another program (a test)."""

_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(DIAGNOSTIC_FORMATS),
    default="text",
    show_default=True,
    help="Diagnostics as text (stderr), or JSON, GitHub annotations or SARIF 2.1.0 (stdout).",
)


def _colour(word: str, severity: str) -> str:
    if os.environ.get("NO_COLOR"):
        return word
    return click.style(word, fg={"error": "red", "warning": "yellow"}.get(severity, "cyan"), bold=True)


def _emit_diagnostics(compilations: list, fmt: str) -> None:
    """Print every report's diagnostics in `fmt` (colour only reaches a terminal: click strips it elsewhere)."""
    reports = [c.report for c in compilations]
    if fmt == "text" and not any(report.diagnostics for report in reports):
        return  # nothing to print
    from policyc.output import formats

    if fmt == "json":
        click.echo(formats.to_json(reports))
    elif fmt == "github":
        text = formats.to_github(reports)
        if text:
            click.echo(text)
    elif fmt == "sarif":
        click.echo(formats.to_sarif(reports))
    else:
        for report in reports:
            text = formats.render_text(report, _colour)
            if text:
                click.echo(text, err=True)
            if report.diagnostics or report.shown_elsewhere:
                click.echo(report.summary(), err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="policyc")
def main() -> None:
    """Compile a GPU cluster policy into verified Kubernetes and batch scheduler manifests."""


_quiet_option = click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress display on a terminal and no summary line: only diagnostics and errors.",
)


_POLICY_PATH = click.Path()
"""A policy: its file, or a policy directory (a platform file and the teams' files, docs/teams.md)."""


_cluster_option = click.option(
    "--cluster", metavar="NAME",
    help="A policy directory with cluster documents (a fleet, docs/teams.md): this cluster only.",
)  # fmt: skip


def _clusters(policy: str, cluster: str | None) -> list[str | None]:
    """The clusters of POLICY to compile: `cluster`, else every cluster of a fleet, else [None] (the policy as it
    is); a usage error for a cluster it does not have."""
    if not os.path.isdir(policy):  # a policy file: what a directory needs is not imported
        _refuse_a_directory_s_part(policy)
        names = []
    else:
        from policyc.language.teams import fleet_of

        names = list(fleet_of(policy)[1])
    if cluster is None:
        return names or [None]  # type: ignore[return-value]
    if cluster not in names:
        from policyc.diagnostics import did_you_mean

        hint = did_you_mean(cluster, names) if names else "it names no cluster documents (kind: Cluster)"
        raise click.BadParameter(f"{policy} has no cluster '{cluster}'; {hint}", param_hint="--cluster")
    return [cluster]


_PART_KIND = re.compile(rb"^kind:[ \t]*[\"']?(Tenant|Cluster)[\"']?[ \t]*(#.*)?$", re.MULTILINE)
"""A line that may make a file a team's or a cluster's document: only then is it loaded to know (`_kind_of`)."""


def _refuse_a_directory_s_part(policy: str) -> None:
    """A usage error for a team's or a cluster's file given as a policy: it is checked with its policy directory."""
    from policyc.language.load import MAX_FILE_BYTES

    if not os.path.isfile(policy):  # compiling it reports what it is (a FIFO is never opened here)
        return
    try:
        with open(policy, "rb") as f:
            if not _PART_KIND.search(f.read(MAX_FILE_BYTES + 1)):
                return
    except OSError:
        return
    kind = _kind_of(policy)
    if kind not in ("Tenant", "Cluster"):
        return
    resolved, cwd = Path(policy).resolve(), Path.cwd()
    # the walk up reads every file below each directory: only within the current one, as the pre-commit hook's
    directory = _policy_directory(policy, kind, cwd) if cwd in resolved.parents else None
    part = f"a {'team' if kind == 'Tenant' else 'cluster'}'s document (kind: {kind}) of a policy directory"
    if directory is None:
        raise click.UsageError(f"{policy} is {part}, not a policy: give the directory that holds it and the platform "
                               "document (kind: ClusterPolicy; docs/teams.md)")  # fmt: skip
    alone = ""
    if kind == "Tenant" and click.get_current_context().info_name == "validate":
        alone = f"; or check the file against the platform alone: `policyc validate {policy} --platform {directory}`"
    raise click.UsageError(f"{policy} is {part}, `{directory}`: give `{directory}` instead{alone}")


def _one_cluster(policy: str, cluster: str | None) -> str | None:
    """The cluster a command about one cluster (explain, report, audit) reads: `cluster`, or a fleet's only one."""
    clusters = _clusters(policy, cluster)
    if len(clusters) > 1:
        raise click.UsageError(f"{policy} is a fleet of clusters {', '.join(map(str, clusters))}: give --cluster NAME")
    return clusters[0]


def _compile_clusters(
    policy: str,
    clusters: list[str | None],
    progress: Progress,
    cache: _Cache | None = None,
    compile_one: Callable[[str | None, StageHook], Compilation] | None = None,
) -> list[Compilation]:
    """POLICY compiled for each of `clusters` (by `compile_one`, given the cluster and the stage hook; default: the
    policy as a file or directory), or its previous output reused (`cache`); a fleet's reports say their cluster, and
    a diagnostic every cluster shares is shown once (in the first)."""

    def compile_policy_of(name: str | None, lap: StageHook) -> Compilation:
        return compile_policy(Path(policy), name=policy, on_stage=lap, cluster=name, prove_apart=_own_process)

    compile_one = compile_one or compile_policy_of
    compilations = []
    for name in clusters:
        label = policy if name is None else f"{policy} (cluster {name})"
        reused = cache.reused(name) if cache is not None else None
        if reused is not None:
            progress.reuse(label)
            compilations.append(reused)
            continue
        progress.begin(label)
        compilation = compile_one(name, progress.lap)
        if cache is not None:
            cache.keep(name, compilation)
        compilations.append(compilation)
    if clusters != [None]:
        _name_clusters(compilations, clusters)  # type: ignore[arg-type]
    return compilations


class _Cache:
    """A build's records (`policyc.output.records`): each cluster's previous output in `output` (a fleet's: in
    `output/<cluster>`) reused when nothing its compilation reads has changed, and each compiled one recorded."""

    def __init__(self, policy: str, output: str, fleet: bool):
        from policyc.output.records import Records

        self.records, self.output, self.fleet = Records(policy, policy), output, fleet

    def reused(self, cluster: str | None) -> Compilation | None:
        from policyc.compiler import Compilation
        from policyc.diagnostics import Report

        found = self.records.reused(cluster, _cluster_output(self.output, cluster, self.fleet))
        if found is None:
            return None
        return Compilation(Report(self.records.name, diagnostics=found.diagnostics), files=found.files, reused=True)

    def keep(self, cluster: str | None, compilation: Compilation) -> None:
        """Record a compilation without errors, before anything is added to its report (the drift's warnings)."""
        if compilation.ok:
            output = _cluster_output(self.output, cluster, self.fleet)
            self.records.keep(cluster, output, compilation.files, list(compilation.report.diagnostics))


def _cluster_output(output: str, cluster: str | None, fleet: bool) -> str:
    """The directory a cluster's files are written to: a fleet's `output/<cluster>`, else `output`."""
    return os.path.join(output, cluster) if fleet else output  # type: ignore[arg-type]


def _name_clusters(compilations: list[Compilation], clusters: list[str]) -> None:
    from dataclasses import replace

    def key(d: Diagnostic) -> tuple:
        return d.file, d.line, d.column, d.code, d.message

    shared = set.intersection(*({key(d) for d in c.report.diagnostics} for c in compilations))
    shown: set = set()
    for compilation, name in zip(compilations, clusters, strict=True):
        report = compilation.report
        report.file = f"{report.file} (cluster {name})"
        diagnostics, report.diagnostics = report.diagnostics, []
        for d in diagnostics:
            if key(d) not in shared:
                report.diagnostics.append(replace(d, message=f"{d.message} (cluster {name})"))
            elif key(d) not in shown:
                shown.add(key(d))
                report.diagnostics.append(d)
            else:
                report.shown_elsewhere.append(d)


def _k8s_name(check: str) -> Callable[[click.Context, click.Parameter, str], str]:
    """An option's check that its value is a Kubernetes name by `check`, a function of `policyc.k8s.names` (a usage
    error else)."""

    def checked(ctx: click.Context, param: click.Parameter, value: str) -> str:
        from policyc.k8s import names

        problems = getattr(names, check)(value)
        if problems:
            raise click.BadParameter(f"'{value}' is not a Kubernetes name: {problems[0]}")
        return value

    return checked


def _read_once(policies: list[str]) -> None:
    """Each policy directory among `policies` listed and read once for the rest of the command
    (`policyc.language.teams.read_once`); a policy file's command does not import what a directory needs."""
    if any(os.path.isdir(p) for p in policies):
        from policyc.language.teams import read_once

        click.get_current_context().with_resource(read_once())


@main.command()
@click.argument("policy", type=_POLICY_PATH)
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Directory to write (replaced as a whole; created if missing), or - to print what Argo CD "
              "applies (the objects kustomization.yaml lists, in its order) as one YAML stream. A fleet's build "
              "writes a directory per cluster and applicationset.yaml in it.")  # fmt: skip
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 and show a diff if the output directory differs from the build.")  # fmt: skip
@_cluster_option
@click.option("--repo-url", metavar="URL",
              help="A fleet's build: the git repository the ApplicationSet points Argo CD at, which holds the output "
              "directory (the ApplicationSet names its path from the repository's top).")  # fmt: skip
@click.option("--revision", default="HEAD", show_default=True,
              help="A fleet's build: the ApplicationSet's git revision.")  # fmt: skip
@click.option("--project", default="default", show_default=True, callback=_k8s_name("is_dns1123_subdomain"),
              help="A fleet's build: the Argo CD project (AppProject) of the clusters' Applications.")  # fmt: skip
@click.option("--argocd-namespace", default="argocd", show_default=True, callback=_k8s_name("is_dns1123_label"),
              help="A fleet's build: the namespace of Argo CD, where the ApplicationSet goes.")  # fmt: skip
@click.option("--no-cache", is_flag=True,
              help="Compile every cluster, and neither read nor write build records. Without it, a cluster whose "
              "inputs (the files its policy takes in, policyc itself) are unchanged since the build that wrote its "
              "output, and whose output is unchanged on disk, is reused, not compiled (docs/teams.md).")  # fmt: skip
@_format_option
@_quiet_option
def build(policy: str, output: str, check: bool, cluster: str | None, repo_url: str | None, revision: str,
          project: str, argocd_namespace: str, no_cache: bool, fmt: str, quiet: bool) -> None:  # fmt: skip
    """Compile POLICY and write the generated tree to the output directory (or print it as a stream, with -o -)."""
    from policyc.commands.progress import shown
    from policyc.output.write import OutputError, render_stream, write_tree

    _read_once([policy])

    to_stdout = output == STDOUT
    if to_stdout and (check or fmt != "text"):
        raise click.UsageError("-o - prints the objects on standard output: --check and --format other than text "
                               "need an output directory")  # fmt: skip
    clusters = _clusters(policy, cluster)
    argocd = (revision, project, argocd_namespace)
    fleet = _fleet_source(policy, clusters, cluster is None and clusters != [None], output, repo_url, argocd)
    drift = refused = None
    cache = None if to_stdout or no_cache else _Cache(policy, output, fleet is not None)
    with shown(("compare" if check else "write",), len(clusters), quiet=quiet) as progress:
        compilations = _compile_clusters(policy, clusters, progress, cache)
        ok = all(c.ok for c in compilations)
        files = _built_files(policy, output, compilations, clusters, fleet)
        if ok and check:
            from policyc.output.drift import compare

            drift = compare(files, output)
        elif ok and not to_stdout:
            try:
                write_tree(files, output)
            except OutputError as e:
                refused = e
    _emit_diagnostics(compilations, fmt)
    if not ok:
        sys.exit(EXIT_FAILED)
    if to_stdout:
        compiled = compilations[0].cluster
        click.echo(render_stream(compilations[0].artifacts, compiled.name, compiled.source), nl=False)  # type: ignore[union-attr]
        return
    built = dict(zip(clusters, compilations, strict=True))
    line = None if quiet else _final_line(policy, output, len(files), check, built, fleet)
    _written(policy, output, refused, drift, line)


def _written(policy: str, output: str, refused: Exception | None, drift: Drift | None, line: str | None) -> None:
    """The end of a build into a directory: the writer's refusal, the drift found (--check), or `line` (None: quiet)."""
    if refused is not None:
        click.echo(f"policyc: {refused}", err=True)
        sys.exit(EXIT_USAGE)
    if drift is not None and not drift.clean:
        click.echo(drift.render(output), nl=False)
        click.echo(f"{output} differs from what {policy} builds: run `policyc build {policy} -o {output}`", err=True)
        sys.exit(EXIT_FAILED)
    if line is not None:
        click.echo(line, err=True)


def _final_line(policy: str, output: str, files: int, checked: bool, built: dict[str | None, Compilation],
                fleet: tuple | None) -> str:  # fmt: skip
    """What a build says once done: what it wrote (and where a fleet's ApplicationSet points Argo CD, `fleet`), or
    that the directory is up to date; and what it reused."""
    done = f"{output} is up to date with {policy}" if checked else f"{policy}: wrote {files} files to {output}"
    deploys = f"the ApplicationSet deploys {fleet[0] or '.'}/<cluster> of {fleet[1]}" if fleet and not checked else ""
    notes = [note for note in (deploys, _reused(built)) if note]
    return f"{done} ({'; '.join(notes)})" if notes else done


def _reused(built: dict[str | None, Compilation]) -> str:
    """What the final line says of the clusters (by name; None: a policy's only one) whose previous output was
    reused: '' if none."""
    from policyc.diagnostics import listing

    names = [str(name) for name, c in built.items() if c.reused]
    if not names:
        return ""
    if list(built) == [None]:
        what = ""
    elif len(names) == len(built) > 1:
        what = "every cluster "
    else:
        what = f"cluster{'s' if len(names) > 1 else ''} {listing(names)} "
    return f"{what}unchanged since the last build: reused"


def _fleet_source(policy: str, clusters: list[str | None], fleet: bool, output: str, repo_url: str | None,
                  argocd: tuple[str, str, str]) -> tuple[str, str, str, str, str] | None:  # fmt: skip
    """What a fleet's ApplicationSet deploys (every cluster's directory of `output`): `output`'s path in its git
    repository (as given outside one), the repository `repo_url`, and as `argocd` gives them the revision, the Argo CD
    project and Argo CD's namespace; None for a build of one cluster. A usage error without `repo_url`: it is not
    taken from the clone's remote, which differs between clones (a developer's SSH URL, CI's HTTPS one), and so would
    the bytes built."""
    if not fleet:
        return None
    every = f"{policy} is a fleet of clusters {', '.join(map(str, clusters))}: build one with --cluster NAME"
    if output == STDOUT:
        raise click.UsageError(f"{every}, or all of them into a directory")
    from policyc.output.repository import locate

    where = locate(output)
    if repo_url is None:
        origin = f"; this clone's origin is {where.url}" if where and where.url else ""
        raise click.UsageError(f"{every}, or all of them into a directory with --repo-url URL (the repository the "
                               f"ApplicationSet points Argo CD at{origin})")  # fmt: skip
    return where.path if where else Path(os.path.relpath(output)).as_posix(), repo_url, *argocd


def _built_files(policy: str, output: str, compilations: list[Compilation], clusters: list[str | None],
                 fleet: tuple[str, str, str, str, str] | None) -> dict:  # fmt: skip
    """What a build writes to `output` once every compilation is ok (else nothing): a policy's files, or a fleet's
    (`fleet`: what its ApplicationSet deploys, `_fleet_source`). Each cluster's report gets the warnings of comparing it
    with its earlier output (`policyc.output.drift.immutable_changes`)."""
    from policyc.compiler import fleet_files
    from policyc.output.drift import immutable_changes

    if not all(c.ok for c in compilations):
        return {}
    if output != STDOUT:
        for c, name in zip(compilations, clusters, strict=True):
            if not c.reused:  # reused, the output is the earlier one: nothing changes
                c.report.extend(immutable_changes(c.cluster, _cluster_output(output, name, fleet is not None)))  # type: ignore[arg-type]
    if fleet is None:
        return compilations[0].files
    return fleet_files(policy, dict(zip(clusters, compilations, strict=True)), *fleet)  # type: ignore[arg-type]


_MENTIONS_POLICY_API = re.compile(rb"""apiVersion['"]?\s*:\s*['"]?policyc\.io/""")
_KINDS = ("ClusterPolicy", "Tenant", "Cluster")
"""The kinds of policyc's documents: a policy (or a directory's platform document), a team's document and a fleet's
cluster document."""


def _is_policy(path: str) -> bool:
    """Whether `path` is a policyc policy: a YAML mapping with apiVersion policyc.io/<version>, kind ClusterPolicy."""
    return _kind_of(path) in ("ClusterPolicy", True)


def _kind_of(path: str) -> str | bool | None:
    """The kind of the policyc document in `path` (ClusterPolicy, or a team's Tenant), True for one that cannot be
    loaded, None for other files.

    Cheap and safe on any input: a byte search of the first `MAX_FILE_BYTES` (nothing decoded or parsed)
    rules out every file that does not mention a policyc.io apiVersion: binary, invalid UTF-8, Kyverno,
    Helm values. Only files that do are loaded, by the policy loader and its limits on size, nesting and
    aliases. One that mentions it but cannot be loaded counts as a policy, so its error is shown, not hidden.
    """
    from policyc.diagnostics import PolicyError
    from policyc.language.load import MAX_FILE_BYTES, load_bytes

    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return True  # validation reports why it cannot be read
    if not _MENTIONS_POLICY_API.search(raw):
        return None
    try:
        data = load_bytes(raw, path).data
    except PolicyError:
        return True
    if isinstance(data, dict) and str(data.get("apiVersion")).startswith("policyc.io/") and data.get("kind") in _KINDS:
        return data["kind"]
    return None


def _policy_directory(path: str, kind: str, here: Path) -> str | None:
    """The policy directory of the document of `kind` in `path`: for a team's or a cluster's, the nearest directory
    above it (within `here`) that holds a platform document; for a platform file, its own directory if it holds team or
    cluster documents. None when there is none."""
    from policyc.language.teams import policy_files

    others = ("ClusterPolicy",) if kind != "ClusterPolicy" else ("Tenant", "Cluster")
    above = Path(path).resolve().parents
    for directory in above if kind != "ClusterPolicy" else above[:1]:
        if directory != here and here not in directory.parents:
            break
        if any(_kind_of(str(directory / f)) in others for f in policy_files(directory)):
            return os.path.relpath(directory)
    return None


def _policies_of(changed: list[str]) -> list[str]:
    """What to validate for the changed files a hook passes (`--only-policies`): each policy file, and for a file of
    a policy directory the whole directory (`_policy_directory`, within the current one). Other files are left out.
    In the order given, each once."""
    here = Path.cwd()
    out: list[str] = []
    for path in changed:
        kind = _kind_of(path)
        if kind is None:
            continue
        chosen = (_policy_directory(path, kind, here) if kind in _KINDS else None) or path
        if chosen not in out:
            out.append(chosen)
    return out


def _output_file(suggested: str) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """The check of `-o FILE` of a command writing one file: a directory given instead is told a file to give in it
    (`suggested`)."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None and os.path.isdir(value):
            raise click.BadParameter(f"{value} is a directory; give a file in it: -o {os.path.join(value, suggested)}")
        return value

    return check


def _platform_directory(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--platform`: a policy directory; the platform's own file given instead is told which directory to give."""
    if value is not None and not os.path.isdir(value):
        raise click.BadParameter(
            f"{value} is a file; give the policy directory that holds the platform document: "
            f"--platform {os.path.dirname(value) or '.'}"
        )
    return value


@main.command()
@click.argument("policies", nargs=-1, required=True, type=_POLICY_PATH)
@click.option("--only-policies", is_flag=True,
              help="Skip, silently, files that are not policyc policies (YAML mappings with apiVersion "
              "policyc.io/<version> and kind ClusterPolicy), for hooks that see every YAML file. A file that "
              "mentions a policyc.io apiVersion but cannot be loaded is validated, to show why. A file of a policy "
              "directory (a team's Tenant document, or a platform file beside them) validates its whole "
              "directory.")  # fmt: skip
@click.option("--platform", type=click.Path(exists=True), callback=_platform_directory, metavar="DIR",
              help="Each POLICY is a team's file: check it against the platform document of the policy directory DIR "
              "alone, without the other teams' files; in a fleet, with each cluster that hosts the team.")  # fmt: skip
@click.option("--cluster", metavar="NAME",
              help="Each POLICY is a fleet (a policy directory with cluster documents, docs/teams.md), or each team's "
              "file is checked with --platform against one: validate this cluster only, not every one.")  # fmt: skip
@_format_option
@_quiet_option
def validate(policies: tuple[str, ...], only_policies: bool, platform: str | None, cluster: str | None, fmt: str,
             quiet: bool) -> None:  # fmt: skip
    """Run every check and verification on each POLICY (a file or a policy directory; each cluster of a fleet); write
    nothing (the pre-commit path)."""
    from policyc.commands.progress import shown

    chosen = _policies_of(list(policies)) if only_policies else list(policies)
    _read_once(chosen)
    compilations = []
    with shown(policies=len(chosen), quiet=quiet) as progress:
        for policy in chosen:
            if platform is not None:
                compilations += _compile_team(policy, platform, cluster, progress)
            else:
                compilations += _compile_clusters(policy, _clusters(policy, cluster), progress)
    _emit_diagnostics(compilations, fmt)
    if platform is not None and not quiet:
        click.echo(f"policyc: note: checked against {platform}'s platform and cluster documents only: a tenant, "
                   f"namespace or workload name another team's file also claims is not checked (`policyc validate "
                   f"{platform}` checks it)", err=True)  # fmt: skip
    sys.exit(EXIT_OK if all(c.ok for c in compilations) else EXIT_FAILED)


def _compile_team(team: str, platform: str, cluster: str | None, progress: Progress) -> list[Compilation]:
    """The team file `team` compiled with the platform document of `platform`, for each cluster of its fleet that
    hosts the team (`cluster` only, when given), else with the shared policy; named as a fleet's."""
    from policyc.compiler import compile_team
    from policyc.language.teams import clusters_hosting

    hosting = clusters_hosting(team, platform)
    clusters: list[str | None] = [c for c in hosting if cluster in (None, c)] if hosting else [None]
    if cluster is not None and cluster not in clusters:
        hosts = f"{', '.join(hosting)} host{'s' if len(hosting) == 1 else ''} it" if hosting else "it has no clusters"
        raise click.BadParameter(f"cluster '{cluster}' of {platform} does not host {team}: {hosts}",
                                 param_hint="--cluster")  # fmt: skip

    def compile_with(name: str | None, lap: StageHook) -> Compilation:
        return compile_team(team, platform, on_stage=lap, cluster=name)

    return _compile_clusters(team, clusters, progress, compile_one=compile_with)


@main.command("find")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
def find_policies(directory: str) -> None:
    """List the policyc policies in DIRECTORY (default: the current one), by content as `validate --only-policies`
    tells them: the names of its .yaml and .yml files that are, one a line, sorted; nothing if none (Argo CD's plugin
    discovery)."""
    for path in sorted(Path(directory).iterdir()):
        if path.suffix in (".yaml", ".yml") and path.is_file() and _is_policy(str(path)):
            click.echo(path.name)


@main.command()
@click.argument("policy", type=_POLICY_PATH)
@click.option("--workload", help="Only this workload class.")
@click.option("--pool", help="Only this node pool ('(control plane)' for the control plane).")
@click.option("--object", "selector", metavar="SELECTOR",
              help="Instead of placement, show the policy lines emitted objects come from: an output file "
              "(tenants/team-a.yaml), Kind/name, Kind/namespace/name, or 'all'.")  # fmt: skip
@click.option("--pod", "manifest", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="Instead of the templates, one pod (or workload) manifest: whether its tenant's admission policy "
              "admits it, which rule refuses it, and where its pods can land.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(DIAGNOSTIC_FORMATS), default="text", show_default=True,
              help="text, or one JSON document (placement, pools, objects, diagnostics); github and sarif print the "
              "matrix as text and the diagnostics in that format.")  # fmt: skip
@_cluster_option
def explain(
    policy: str, workload: str | None, pool: str | None, selector: str | None, manifest: str | None, fmt: str,
    cluster: str | None,
) -> None:  # fmt: skip
    """Show where each workload template can land on each pool and why, where objects come from, or what admission
    does with one pod."""
    from policyc.commands import explain as ex
    from policyc.diagnostics import did_you_mean
    from policyc.proof.placement import targets

    cluster = _one_cluster(policy, cluster)
    compilation = compile_policy(Path(policy), name=policy, cluster=cluster)
    if compilation.cluster is None or not compilation.artifacts:
        _emit_diagnostics([compilation], fmt)
        sys.exit(EXIT_FAILED)
    if manifest is not None:
        _explain_manifest(compilation, manifest, fmt)
    for option, value, known in (
        ("workload", workload, [w.name for w in compilation.cluster.workloads]),
        ("pool", pool, [t.name for t in targets(compilation.cluster)]),
    ):
        if value is not None and value not in known:
            hint = did_you_mean(value, known)
            raise click.BadParameter(f"no {option} named '{value}'" + (f"; {hint}" if hint else ""))
    placement = [] if selector else ex.placement_rows(compilation, workload, pool)
    pools = [] if selector else ex.pool_rows(compilation, pool)
    provenance = ex.provenance_rows(compilation, selector) if selector else []
    if selector and not provenance:
        raise click.BadParameter(f"no emitted object or file matches '{selector}'", param_hint="--object")
    if fmt == "json":
        from policyc.output.formats import to_json

        click.echo(ex.render_json(placement, pools, provenance, to_json([compilation.report])))
    else:
        placed = ex.render_placement_text(placement) + ("\n\n" + ex.render_pools_text(pools) if pools else "")
        body = ex.render_provenance_text(provenance) if selector else placed
        click.echo(body, err=fmt == "sarif")
        _emit_diagnostics([compilation], fmt)
    sys.exit(EXIT_OK if compilation.ok else EXIT_FAILED)


def _explain_manifest(compilation: Compilation, manifest: str, fmt: str) -> None:
    """`explain --pod`: exit 0 when admitted (warnings and audit included), 1 when refused or not explainable."""
    from policyc.commands import explain as ex
    from policyc.diagnostics import PolicyError
    from policyc.language.load import load_file

    try:
        doc = load_file(manifest)
        if doc.diagnostics:
            raise PolicyError(doc.diagnostics)
        e = ex.explain_manifest(compilation, doc.data)
    except PolicyError as err:
        first = err.diagnostics[0]
        raise click.BadParameter(f"{manifest}: {first.message}", param_hint="--pod") from None
    except ex.ManifestError as err:
        raise click.BadParameter(f"{manifest}: {err}", param_hint="--pod") from None
    if fmt == "json":
        import json
        from dataclasses import asdict

        click.echo(json.dumps(asdict(e), indent=2, ensure_ascii=False))
    else:
        click.echo(ex.render_manifest_text(e))
    sys.exit(EXIT_FAILED if e.verdict == "refused" else EXIT_OK)


@main.command()
@click.argument("policy", type=_POLICY_PATH)
@click.option("--from", "dump", type=click.Path(dir_okay=False), metavar="FILE",
              help="Read the cluster from a `kubectl get <kinds> -A -o json` dump (see --dump-command) instead of a "
              "live API server.")  # fmt: skip
@click.option(
    "--kubeconfig", type=click.Path(dir_okay=False), help="The live cluster's kubeconfig (as kubectl takes it)."
)
@click.option("--context", help="The kubeconfig context of the live cluster (default: its current context).")
@click.option("--built", type=click.Path(file_okay=False), metavar="DIR",
              help="Compare the cluster's objects with this output directory of an earlier build (what Argo CD "
              "synced) instead of building POLICY now; POLICY still gives the pools, tenants and grants.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(DIAGNOSTIC_FORMATS), default="text", show_default=True,
              help="Findings as text, JSON, GitHub annotations or SARIF 2.1.0.")  # fmt: skip
@click.option("--strict", is_flag=True, help="A node the policy names that the cluster lacks is an error.")
@click.option("-o", "--output", type=click.Path(), callback=_output_file("findings"),
              help="Write the findings to this file.")  # fmt: skip
@click.option("--dump-command", is_flag=True,
              help="Print the kubectl command whose dump holds every kind the audit reads, and exit.")  # fmt: skip
@_cluster_option
def audit(policy: str, dump: str | None, kubeconfig: str | None, context: str | None, built: str | None, fmt: str,
          strict: bool, output: str | None, dump_command: bool, cluster: str | None) -> None:  # fmt: skip
    """Compare a running cluster with what POLICY builds and proves, read-only: nodes, the build's objects, tenants'
    pods and capacity. Exit 0 without findings of error severity, 1 with, 2 when the policy does not build or the
    cluster cannot be read."""
    from policyc.audit.build import BuiltError, of_artifacts, of_directory
    from policyc.audit.build import dump_command as kubectl_get
    from policyc.audit.run import audit as run_audit
    from policyc.cluster.source import SourceError
    from policyc.diagnostics import Report

    cluster = _one_cluster(policy, cluster)
    compilation = compile_policy(Path(policy), name=policy, cluster=cluster)
    if not compilation.ok or compilation.cluster is None or compilation.backend is None:
        _emit_diagnostics([compilation], fmt)
        click.echo(f"policyc: {policy} does not build: fix its errors before auditing a cluster against it", err=True)
        sys.exit(EXIT_USAGE)
    try:
        build = (
            of_directory(built, compilation.cluster.name, compilation.artifacts)
            if built
            else of_artifacts(compilation.artifacts, cluster)
        )
    except BuiltError as e:
        raise click.BadParameter(str(e), param_hint="--built") from None
    if dump_command:
        click.echo(kubectl_get(build))
        return
    named = compilation.report.file if cluster is None else f"{compilation.report.file} (cluster {cluster})"
    report = Report(named, compilation.report.source_map)
    try:
        source = _cluster_source(dump, kubeconfig, context)
        run_audit(compilation.cluster, compilation.backend, build, source, report, strict=strict)
    except SourceError as e:
        click.echo(f"policyc: {e}", err=True)
        sys.exit(EXIT_USAGE)
    _write_findings(report, fmt, output, source.name)
    sys.exit(EXIT_FAILED if report.failed else EXIT_OK)


def _cluster_source(dump: str | None, kubeconfig: str | None, context: str | None):  # -> ClusterSource
    """The dump, or the live cluster (its client library is an optional extra, imported only here)."""
    from policyc.cluster.source import DumpSource, SourceError

    if dump is not None:
        if kubeconfig or context:
            raise click.UsageError("--from reads a dump: --kubeconfig and --context are for a live cluster")
        return DumpSource(dump)
    try:
        from policyc.cluster.live import LiveSource  # type: ignore[import-not-found]

        return LiveSource(kubeconfig, context)
    except ImportError:  # the module, or the client library it uses
        raise SourceError("install policyc[cluster] to read a live cluster, or pass --from DUMP") from None


def _write_findings(report: Report, fmt: str, output: str | None, source: str) -> None:
    """The findings in `fmt`, to `output` or standard output; a summary line on standard error."""
    from policyc.output import formats

    counts = {"errors": len(report.errors), "warnings": len(report.warnings), "cluster": source}
    if fmt == "json":
        text = formats.to_json([report], summary=counts)
    elif fmt == "sarif":
        text = formats.to_sarif([report])
    elif fmt == "github":
        text = formats.to_github([report])
    else:
        text = formats.render_text(report, None if output else _colour)
    if output:
        Path(output).write_text(text + "\n" if text else "", encoding="utf-8")
    elif text:
        click.echo(text)
    click.echo(f"policyc audit: {source} against {report.summary()}", err=True)


@main.command()
@click.option("--team", is_flag=True, help="The schema of a team's file of a policy directory (kind Tenant) instead.")
@click.option("--cluster", is_flag=True, help="The schema of a cluster's file of a fleet (kind Cluster) instead.")
def schema(team: bool, cluster: bool) -> None:
    """Print the JSON Schema of the policy language (for editors and CI)."""
    from policyc.language.model import json_schema_text

    if team and cluster:
        raise click.UsageError("give --team or --cluster, not both")
    click.echo(json_schema_text(team=team, cluster=cluster), nl=False)


@main.command()
@click.argument("path", default="cluster-policy.yaml", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite existing files.")
@click.option("--team", metavar="NAME",
              help="Write a team's file of a policy directory instead (kind Tenant: a tenant and a workload; "
              "PATH defaults to NAME.yaml).")  # fmt: skip
def init(path: str, force: bool, team: str | None) -> None:
    """Write a commented starter policy (and the schema beside it, for editors), or a team's file (--team)."""
    from policyc.commands.init import SCHEMA_FILE, STARTER, fitted_team_file, team_file

    if team is not None:
        target = Path(f"{team}.yaml" if path == "cluster-policy.yaml" else path)
        if target.exists() and not force:
            raise click.UsageError(f"{target} exists; use --force to overwrite it")
        cwd = Path.cwd()
        found = _policy_directory(str(target), "Tenant", cwd) if cwd in target.resolve().parents else None
        text, own, platform = fitted_team_file(team, found) if found else (team_file(team), 0, 0)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(f"wrote {target}{_fitted(target, found, own, platform)}", err=True)
        return
    from policyc.language.model import json_schema_text

    target = Path(path)
    schema_path = target.parent / SCHEMA_FILE
    for existing in (target, schema_path):
        if existing.exists() and not force:
            raise click.UsageError(f"{existing} exists; use --force to overwrite it")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(STARTER, encoding="utf-8")
    schema_path.write_text(json_schema_text(), encoding="utf-8")
    click.echo(f"wrote {target} and {schema_path}; next: policyc build {target} -o manifests", err=True)


def _fitted(target: Path, directory: str | None, own: int, platform: int) -> str:
    """What `init --team` says of the file it wrote to `target` in the policy `directory` (None: in none yet) after
    validating it against the platform: `own` errors in the file, `platform` in the platform's files."""
    if directory is None:  # the user knows where it goes
        return f"; next: policyc validate {target} --platform <policy directory>"
    fitted = f", fitted to {directory}'s platform"
    if own:
        return (f"{fitted} as far as it goes: it has {own} error{'s' if own > 1 else ''} still; see them with "
                f"`policyc validate {target} --platform {directory}`")  # fmt: skip
    if platform:
        return f"{fitted}, which has errors of its own: see them with `policyc validate {directory}`"
    return f"{fitted} (it validates); next: edit its values, and `policyc validate {directory}`"


@main.command("import")
@click.option(
    "--from",
    "dump",
    type=click.Path(dir_okay=False),
    metavar="DUMP",
    help="A `kubectl get ... -A -o json` dump to read instead of a live cluster.",
)
@click.option(
    "--manifests",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="A directory of the YAML manifests you keep today, read as the cluster.",
)
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="The kubeconfig of the live cluster.")
@click.option("--context", help="The kubeconfig context of the live cluster.")
@click.option("-o", "--output", type=click.Path(), callback=_output_file("policy.yaml"),
              help="Write the policy here instead of stdout.")  # fmt: skip
@click.option("--force", is_flag=True, help="Overwrite the output file.")
def import_command(
    dump: str | None, manifests: str | None, kubeconfig: str | None, context: str | None, output: str | None,
    force: bool,
) -> None:  # fmt: skip
    """Write a starting policy from a running cluster or your manifests: guesses marked, what it cannot say listed."""
    from policyc.adopt.importer import import_policy
    from policyc.adopt.manifests import ManifestSource
    from policyc.cluster.source import DumpSource, SourceError

    if dump and manifests:
        raise click.UsageError("pass --from DUMP or --manifests DIR, not both")
    if (dump or manifests) and (kubeconfig or context):
        given = "--from" if dump else "--manifests"
        raise click.UsageError(f"{given} reads files: --kubeconfig and --context are for a live cluster; drop them")
    if output and Path(output).exists() and not force:
        raise click.UsageError(f"{output} exists; use --force to overwrite it")
    try:
        if dump:
            source = DumpSource(dump)
        elif manifests:
            source = ManifestSource(manifests)
            if source.errors:
                for error in source.errors:
                    click.echo(f"policyc: {error}", err=True)
                sys.exit(EXIT_USAGE)
        else:
            source = _live_source(kubeconfig, context)
        text = import_policy(source)
    except SourceError as e:
        click.echo(f"policyc: {e}", err=True)
        sys.exit(EXIT_USAGE)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as e:
            click.echo(f"policyc: cannot write {output}: {e.strerror or e}", err=True)
            sys.exit(EXIT_USAGE)
        click.echo(f"wrote {output}; next: policyc validate {output}", err=True)
    else:
        click.echo(text, nl=False)


def _live_source(kubeconfig: str | None, context: str | None):
    """The live cluster's source (`policyc[cluster]`); a one-line usage error where it is not installed."""
    try:
        from policyc.cluster.live import LiveSource  # type: ignore[import-not-found]

        return LiveSource(kubeconfig, context)
    except ImportError:  # the module, or the client library it reads the API server with
        click.echo(
            "policyc: install policyc[cluster] to read a live cluster, or pass --from DUMP or --manifests DIR", err=True
        )
        sys.exit(EXIT_USAGE)


@main.command()
@click.argument("policy", type=_POLICY_PATH)
@click.option("--format", "fmt", type=click.Choice(["markdown", "html"]), default="markdown", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
@_cluster_option
def report(policy: str, fmt: str, output: str | None, cluster: str | None) -> None:
    """Summarise capacity, guarantees, quotas and warnings for a pull-request review."""
    from policyc.commands import report as rp

    cluster = _one_cluster(policy, cluster)
    compilation = compile_policy(Path(policy), name=policy, cluster=cluster)
    if compilation.cluster is None:
        _emit_diagnostics([compilation], "text")
        sys.exit(EXIT_FAILED)
    text = rp.render_html(compilation) if fmt == "html" else rp.render_markdown(compilation)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    sys.exit(EXIT_OK if compilation.ok else EXIT_FAILED)


@main.command("codes")
@click.argument("code", required=False)
@click.option("--family", help="Only the rules of this family (file, shape, meaning, ..., or a backend's name).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="A table (one code: its explanation), JSON, or Markdown (as docs/codes/).")  # fmt: skip
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path),
              help="With --format markdown: write index.md and a page per code here (as docs/codes/).")  # fmt: skip
def codes_command(code: str | None, family: str | None, fmt: str, output_dir: Path | None) -> None:
    """List the diagnostic codes, or explain CODE (a code such as PC414, its identity or its name): what it means, a
    policy that triggers it, what policyc says and the fix."""
    from policyc.commands import codes

    if code is not None and family is not None:
        raise click.UsageError("give a CODE or --family, not both")
    if output_dir is not None and (code is not None or fmt != "markdown"):
        raise click.UsageError("--output-dir writes the whole Markdown reference: give --format markdown and no CODE")
    try:
        if output_dir is not None:
            codes.write_pages(codes.rules_of(family), output_dir)
            return
        text = (
            codes.render_one(codes.find(code), fmt)
            if code is not None
            else codes.render_list(codes.rules_of(family), fmt)
        )
    except codes.UnknownName as e:
        click.echo(f"policyc: {e}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(text, nl=False)


def run() -> NoReturn:
    """Entry point: `main`, with an interrupt as exit code 130 and internal errors as 3 with a short message.

    It is the process's, and ends it without the interpreter's shutdown: once the output is flushed, nothing is
    left to do, and the shutdown would tear down every module and object (a million after a large build) one by
    one. For the same reason the cyclic garbage collector is paused meanwhile (as `policyc.compile` pauses it for a
    build): a command makes little cyclic garbage, and collections would traverse the objects of the imports and
    of the build again and again. Pydantic plugins installed beside policyc are not loaded: they could change how a
    policy is validated, and looking for them reads the metadata of every installed package (set
    PYDANTIC_DISABLE_PLUGINS to choose otherwise). And build and validate prove a policy in a child process while
    they verify it and render its files, and load and check a large one in others (`policyc.compile`'s
    `prove_apart`): a process of its own may fork."""
    global _own_process
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    gc.disable()
    _own_process = True
    try:
        _run()
        code: object = EXIT_OK
    except SystemExit as e:
        code = e.code
    _exit(code)


def _exit(code: object) -> NoReturn:
    """End the process with `code` (as `sys.exit` takes it) once stdout and stderr are flushed."""
    if code is None:
        code = EXIT_OK
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader left (`policyc report | head`): what it read is what it wanted
            pass
        except (OSError, ValueError) as e:  # output lost (a full disk): not a success
            if stream is sys.stdout:
                print(f"policyc: cannot write the output: {getattr(e, 'strerror', None) or e}", file=sys.stderr)
                code = code or EXIT_USAGE
    os._exit(code)


_OUTPUT_LOST = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""Errors writing to standard output that are the machine's, not policyc's."""


def _run() -> None:
    try:
        code = main.main(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):  # click turns an interrupt into Abort
        click.echo("policyc: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except Exception as e:  # a bug: say so briefly; the traceback only on request
        if isinstance(e, OSError) and e.errno in _OUTPUT_LOST:  # not a bug: stdout went to a full disk
            click.echo(f"policyc: cannot write the output: {e.strerror}", err=True)
            sys.exit(EXIT_USAGE)
        click.echo(f"policyc: internal error: {type(e).__name__}: {e}", err=True)
        if os.environ.get("POLICYC_DEBUG"):
            import traceback

            traceback.print_exc()
        else:
            click.echo("policyc: this is a bug; rerun with POLICYC_DEBUG=1 for details and please report it", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code or EXIT_OK)

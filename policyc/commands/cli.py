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
    from policyc.compiler import Compilation
    from policyc.diagnostics import Diagnostic, Report

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
            if report.diagnostics:
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


def _compile_clusters(policy: str, clusters: list[str | None], progress: Progress) -> list[Compilation]:
    """POLICY compiled for each of `clusters`; a fleet's reports say their cluster, and a diagnostic every cluster
    shares is shown once (in the first)."""
    compilations = []
    for name in clusters:
        progress.begin(policy if name is None else f"{policy} (cluster {name})")
        compilations.append(
            compile_policy(Path(policy), name=policy, on_stage=progress.lap, cluster=name, prove_apart=_own_process)
        )
    if len(clusters) > 1 or clusters[0] is not None:
        _name_clusters(compilations, clusters)  # type: ignore[arg-type]
    return compilations


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
              help="A fleet's build: the git repository the ApplicationSet points Argo CD at (the output directory "
              "is its path there, as given).")  # fmt: skip
@click.option("--revision", default="HEAD", show_default=True,
              help="A fleet's build: the ApplicationSet's git revision.")  # fmt: skip
@_format_option
@_quiet_option
def build(policy: str, output: str, check: bool, cluster: str | None, repo_url: str | None, revision: str, fmt: str,
          quiet: bool) -> None:  # fmt: skip
    """Compile POLICY and write the generated tree to the output directory (or print it as a stream, with -o -)."""
    from policyc.commands.progress import shown
    from policyc.output.write import OutputError, render_stream, write_tree

    to_stdout = output == STDOUT
    if to_stdout and (check or fmt != "text"):
        raise click.UsageError("-o - prints the objects on standard output: --check and --format other than text "
                               "need an output directory")  # fmt: skip
    clusters = _clusters(policy, cluster)
    fleet = _fleet_build(policy, clusters, cluster is None and clusters != [None], to_stdout, repo_url)
    drift = refused = None
    with shown(("compare" if check else "write",), len(clusters), quiet=quiet) as progress:
        compilations = _compile_clusters(policy, clusters, progress)
        ok = all(c.ok for c in compilations)
        files = _built_files(policy, output, compilations, clusters, (repo_url, revision) if fleet else None)
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
    if refused is not None:
        click.echo(f"policyc: {refused}", err=True)
        sys.exit(EXIT_USAGE)
    if drift is not None and not drift.clean:
        click.echo(drift.render(output), nl=False)
        click.echo(f"{output} differs from what {policy} builds: run `policyc build {policy} -o {output}`", err=True)
        sys.exit(EXIT_FAILED)
    if quiet:
        return
    if drift is not None:
        click.echo(f"{output} is up to date with {policy}", err=True)
    else:
        click.echo(f"{policy}: wrote {len(files)} files to {output}", err=True)


def _fleet_build(policy: str, clusters: list[str | None], fleet: bool, to_stdout: bool, repo_url: str | None) -> bool:
    """Whether a build writes a fleet (every cluster and the ApplicationSet); a usage error if it cannot."""
    if fleet and (to_stdout or not repo_url):
        raise click.UsageError(f"{policy} is a fleet of clusters {', '.join(map(str, clusters))}: build one with "
                               "--cluster NAME, or all of them into a directory with --repo-url URL (the repository "
                               "the ApplicationSet points Argo CD at)")  # fmt: skip
    return fleet


def _built_files(policy: str, output: str, compilations: list[Compilation], clusters: list[str | None],
                 fleet: tuple | None) -> dict:  # fmt: skip
    """What a build writes to `output` once every compilation is ok (else nothing): a policy's files, or a fleet's
    (`fleet`: the ApplicationSet's repository and revision). Each cluster's report gets the warnings of comparing it
    with its earlier output (`policyc.output.drift.immutable_changes`)."""
    from policyc.compiler import fleet_files
    from policyc.output.drift import immutable_changes

    if not all(c.ok for c in compilations):
        return {}
    if output != STDOUT:
        for c, name in zip(compilations, clusters, strict=True):
            c.report.extend(immutable_changes(c.cluster, os.path.join(output, name) if fleet else output))  # type: ignore[arg-type]
    if fleet is None:
        return compilations[0].files
    root = Path(os.path.relpath(output)).as_posix()
    return fleet_files(policy, dict(zip(clusters, compilations, strict=True)), root, *fleet)  # type: ignore[arg-type]


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
              "alone, without the other teams' files.")  # fmt: skip
@click.option("--cluster", metavar="NAME",
              help="Each POLICY is a fleet (a policy directory with cluster documents, docs/teams.md): validate this "
              "cluster only, not every one.")  # fmt: skip
@_format_option
@_quiet_option
def validate(policies: tuple[str, ...], only_policies: bool, platform: str | None, cluster: str | None, fmt: str,
             quiet: bool) -> None:  # fmt: skip
    """Run every check and verification on each POLICY (a file or a policy directory; each cluster of a fleet); write
    nothing (the pre-commit path)."""
    from policyc.commands.progress import shown

    chosen = _policies_of(list(policies)) if only_policies else list(policies)
    compilations = []
    with shown(policies=len(chosen), quiet=quiet) as progress:
        for policy in chosen:
            if platform is not None:
                from policyc.compiler import compile_team

                progress.begin(policy)
                compilations.append(compile_team(policy, platform, on_stage=progress.lap))
            else:
                compilations += _compile_clusters(policy, _clusters(policy, cluster), progress)
    _emit_diagnostics(compilations, fmt)
    if platform is not None and not quiet:
        click.echo(f"policyc: note: checked against {platform}'s platform document only: a tenant, namespace or "
                   f"workload name another team's file also claims is not checked (`policyc validate {platform}` "
                   "checks it)", err=True)  # fmt: skip
    sys.exit(EXIT_OK if all(c.ok for c in compilations) else EXIT_FAILED)


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
    from policyc.commands.init import SCHEMA_FILE, STARTER, team_file

    if team is not None:
        target = Path(f"{team}.yaml" if path == "cluster-policy.yaml" else path)
        if target.exists() and not force:
            raise click.UsageError(f"{target} exists; use --force to overwrite it")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(team_file(team), encoding="utf-8")
        cwd = Path.cwd()
        found = _policy_directory(str(target), "Tenant", cwd) if cwd in target.resolve().parents else None
        directory = found or "<policy directory>"  # not yet in one: the user knows where it goes
        click.echo(f"wrote {target}; next: policyc validate {target} --platform {directory}", err=True)
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

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
    from policyc.compiler import Compilation

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
DIAGNOSTIC_FORMATS = ("text", "json", "github", "sarif")
STDOUT = "-"
"""The output 'directory' that stands for standard output (`build -o -`)."""
_own_process = False
"""Whether the commands run in a process of policyc's own (`run`): build and validate then prove in a child process
while they verify and render (`policyc.compile`'s `prove_apart`); not when called from another program (a test)."""

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


@main.command()
@click.argument("policy", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Directory to write (replaced as a whole; created if missing), or - to print what Argo CD "
              "applies (the objects kustomization.yaml lists, in its order) as one YAML stream.")  # fmt: skip
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 and show a diff if the output directory differs from the build.")  # fmt: skip
@_format_option
@_quiet_option
def build(policy: str, output: str, check: bool, fmt: str, quiet: bool) -> None:
    """Compile POLICY and write the generated tree to the output directory (or print it as a stream, with -o -)."""
    from policyc.commands.progress import shown
    from policyc.output.drift import compare, immutable_changes
    from policyc.output.write import OutputError, render_stream, write_tree

    to_stdout = output == STDOUT
    if to_stdout and (check or fmt != "text"):
        raise click.UsageError("-o - prints the objects on standard output: --check and --format other than text "
                               "need an output directory")  # fmt: skip
    drift = refused = None
    with shown(("compare" if check else "write",), quiet=quiet) as progress:
        progress.begin(policy)
        compilation = compile_policy(Path(policy), name=policy, on_stage=progress.lap, prove_apart=_own_process)
        if compilation.ok and compilation.cluster is not None and not to_stdout:
            compilation.report.extend(immutable_changes(compilation.cluster, output))
        if compilation.ok and check:
            drift = compare(compilation.files, output)
        elif compilation.ok and not to_stdout:
            try:
                write_tree(compilation.files, output)
            except OutputError as e:
                refused = e
    _emit_diagnostics([compilation], fmt)
    if not compilation.ok:
        sys.exit(EXIT_FAILED)
    if to_stdout:
        cluster = compilation.cluster
        click.echo(render_stream(compilation.artifacts, cluster.name, cluster.source), nl=False)  # type: ignore[union-attr]
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
        click.echo(f"{policy}: wrote {len(compilation.files)} files to {output}", err=True)


_MENTIONS_POLICY_API = re.compile(rb"""apiVersion['"]?\s*:\s*['"]?policyc\.io/""")


def _is_policy(path: str) -> bool:
    """Whether `path` is a policyc policy: a YAML mapping with apiVersion policyc.io/<version>, kind ClusterPolicy.

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
        return False
    try:
        data = load_bytes(raw, path).data
    except PolicyError:
        return True
    return (
        isinstance(data, dict)
        and str(data.get("apiVersion")).startswith("policyc.io/")
        and data.get("kind") == "ClusterPolicy"
    )


@main.command()
@click.argument("policies", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--only-policies", is_flag=True,
              help="Skip, silently, files that are not policyc policies (YAML mappings with apiVersion "
              "policyc.io/<version> and kind ClusterPolicy), for hooks that see every YAML file. A file that "
              "mentions a policyc.io apiVersion but cannot be loaded is validated, to show why.")  # fmt: skip
@_format_option
@_quiet_option
def validate(policies: tuple[str, ...], only_policies: bool, fmt: str, quiet: bool) -> None:
    """Run every check and verification on each POLICY; write nothing (the pre-commit path)."""
    from policyc.commands.progress import shown

    chosen = [p for p in policies if not only_policies or _is_policy(p)]
    compilations = []
    with shown(policies=len(chosen), quiet=quiet) as progress:
        for policy in chosen:
            progress.begin(policy)
            compilations.append(
                compile_policy(Path(policy), name=policy, on_stage=progress.lap, prove_apart=_own_process)
            )
    _emit_diagnostics(compilations, fmt)
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
@click.argument("policy", type=click.Path(dir_okay=False))
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
def explain(
    policy: str, workload: str | None, pool: str | None, selector: str | None, manifest: str | None, fmt: str
) -> None:
    """Show where each workload template can land on each pool and why, where objects come from, or what admission
    does with one pod."""
    from policyc.commands import explain as ex
    from policyc.diagnostics import did_you_mean
    from policyc.proof.placement import targets

    compilation = compile_policy(Path(policy), name=policy)
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
def schema() -> None:
    """Print the JSON Schema of the policy language (for editors and CI)."""
    from policyc.language.model import json_schema_text

    click.echo(json_schema_text(), nl=False)


@main.command()
@click.argument("path", default="cluster-policy.yaml", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def init(path: str, force: bool) -> None:
    """Write a commented starter policy (and the schema beside it, for editors)."""
    from policyc.commands.init import SCHEMA_FILE, STARTER
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


@main.command()
@click.argument("policy", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["markdown", "html"]), default="markdown", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
def report(policy: str, fmt: str, output: str | None) -> None:
    """Summarise capacity, guarantees, quotas and warnings for a pull-request review."""
    from policyc.commands import report as rp

    compilation = compile_policy(Path(policy), name=policy)
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
    they verify it and render its files (`policyc.compile`'s `prove_apart`): a process of its own may fork."""
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

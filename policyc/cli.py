"""The command line: click commands only; the work is in `policyc.compiler` and `policyc.write`.

Exit codes: 0 success; 1 the policy has errors; 2 usage error (bad option, missing file argument,
an output directory policyc will not replace); 3 internal error (a policyc bug).
"""

from __future__ import annotations

import os
import sys
import traceback

import click

from policyc import __version__

EXIT_OK, EXIT_POLICY, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="policyc")
def main() -> None:
    """Compile a GPU cluster policy into verified Kubernetes and Volcano manifests."""


@main.command()
@click.argument("policy", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    type=click.Path(file_okay=False),
    help="Directory to write (replaced as a whole; created if missing).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="How to print diagnostics.",
)
def build(policy: str, output: str, fmt: str) -> None:
    """Compile POLICY and write the generated tree to the output directory."""
    from policyc.compiler import compile_file
    from policyc.write import OutputError, write_tree

    compilation = compile_file(policy)
    _emit_diagnostics([compilation], fmt)
    if not compilation.ok:
        sys.exit(EXIT_POLICY)
    try:
        write_tree(compilation.files, output)
    except OutputError as e:
        click.echo(f"policyc: {e}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"{policy}: wrote {len(compilation.files)} files to {output}", err=True)


@main.command()
@click.argument("policies", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="How to print diagnostics.",
)
def validate(policies: tuple[str, ...], fmt: str) -> None:
    """Run every check and verification on each POLICY; write nothing (the pre-commit path)."""
    from policyc.compiler import compile_file

    compilations = [compile_file(p) for p in policies]
    _emit_diagnostics(compilations, fmt)
    sys.exit(EXIT_OK if all(c.ok for c in compilations) else EXIT_POLICY)


@main.command()
@click.argument("policy", type=click.Path(dir_okay=False))
@click.option("--workload", help="Only this workload class.")
@click.option("--pool", help="Only this node pool ('(control plane)' for the control plane).")
@click.option("--object", "selector", metavar="SELECTOR",
              help="Instead of placement, show the policy lines emitted objects come from: an output file "
              "(tenants/team-a.yaml), Kind/name, Kind/namespace/name, or 'all'.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(policy: str, workload: str | None, pool: str | None, selector: str | None, fmt: str) -> None:
    """Show where each workload template can land on each pool and why, or where objects come from."""
    from policyc import explain as ex
    from policyc.compiler import compile_file
    from policyc.diagnostics import did_you_mean

    compilation = compile_file(policy)
    if compilation.cluster is None or not compilation.artifacts:
        _emit_diagnostics([compilation], "text")
        sys.exit(EXIT_POLICY)
    for option, value, known in (
        ("--workload", workload, [w.name for w in compilation.cluster.workloads]),
        ("--pool", pool, [r.pool for r in ex.placement_rows(compilation)]),
    ):
        if value is not None and value not in known:
            hint = did_you_mean(value, known)
            raise click.BadParameter(f"no {option[2:]} named '{value}'" + (f"; {hint}" if hint else ""))
    placement = [] if selector else ex.placement_rows(compilation, workload, pool)
    provenance = ex.provenance_rows(compilation, selector) if selector else []
    if selector and not provenance:
        raise click.BadParameter(f"no emitted object or file matches '{selector}'", param_hint="--object")
    if fmt == "json":
        click.echo(ex.render_json(placement, provenance))
    else:
        click.echo(ex.render_provenance_text(provenance) if selector else ex.render_placement_text(placement))
    if compilation.report.diagnostics:
        _emit_diagnostics([compilation], "text")
    sys.exit(EXIT_OK if compilation.ok else EXIT_POLICY)


@main.command()
def schema() -> None:
    """Print the JSON Schema of the policy language (for editors and CI)."""
    from policyc.model import json_schema_text

    click.echo(json_schema_text(), nl=False)


def _emit_diagnostics(compilations: list, fmt: str) -> None:
    from policyc.diagnostics import render_text, to_json

    if fmt == "json":
        click.echo(to_json([c.report for c in compilations]))
        return
    for c in compilations:
        text = render_text(c.report)
        if text:
            click.echo(text, err=True)
        if c.report.diagnostics:
            click.echo(c.report.summary(), err=True)


def run() -> None:
    """Entry point: `main` with internal errors turned into exit code 3 and a short message."""
    try:
        main(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("policyc: interrupted", err=True)
        sys.exit(130)
    except Exception as e:  # a bug: say so briefly; the traceback only on request
        click.echo(f"policyc: internal error: {type(e).__name__}: {e}", err=True)
        if os.environ.get("POLICYC_DEBUG"):
            traceback.print_exc()
        else:
            click.echo("policyc: this is a bug; rerun with POLICYC_DEBUG=1 for details and please report it", err=True)
        sys.exit(EXIT_INTERNAL)

"""Diagnostic output formats: text (one line each), JSON, GitHub Actions annotations and SARIF 2.1.0.

Leaf module: renderers only; which one runs is the CLI's choice (``--format``). The compiler's diagnostics and
`policyc audit`'s findings (diagnostics naming a cluster object, `Diagnostic.subject`) go through the same renderers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import PurePath

from policyc import __version__, codes
from policyc.codes import Severity
from policyc.diagnostics import Diagnostic, ObjectRef, Report, pointer

FORMATS = ("text", "json", "github", "sarif")
_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTE: 2}
_GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _text(d: Diagnostic) -> str:
    """Message and hint on one line (a value quoted in a message may hold a line break: it is escaped)."""
    text = d.message if not d.hint else f"{d.message}; {d.hint}"
    return text.replace("\r", "\\r").replace("\n", "\\n")


def render_text(report: Report, style: Callable[[str, Severity], str] | None = None) -> str:
    """One line per diagnostic, in source order: ``FILE:LINE:COL: severity CODE: message; hint``.

    `style` may colour the severity word (the CLI does on a terminal)."""
    lines = []
    for d in report.sorted():
        severity = style(str(d.severity), d.severity) if style else str(d.severity)
        lines.append(f"{report.file_of(d)}:{d.line or 1}:{d.column or 1}: {severity} {d.code}: {_text(d)}")
    return "\n".join(lines)


def to_json(reports: Sequence[Report], summary: dict | None = None) -> str:
    """A stable JSON document (version 1) of every diagnostic of every report: its `code` as the text prints it, its
    rule's identity (`id`, see `policyc.codes`) and name (`rule`), and the cluster object it is about (`object`) for
    an audit's finding; `summary` (an audit's counts) is added as it is given."""
    items = [
        {
            "file": report.file_of(d),
            "line": d.line or 1,
            "column": d.column or 1,
            "severity": str(d.severity),
            "code": d.code,
            "id": d.rule.id,
            "rule": d.rule.name,
            "message": d.message,
            "hint": d.hint,
            "path": pointer(d.path),
            **({"object": _object(d.subject)} if d.subject else {}),
        }
        for report in reports
        for d in report.sorted()
    ]
    document = {"version": 1, "diagnostics": items, **({"summary": summary} if summary is not None else {})}
    return json.dumps(document, indent=2, ensure_ascii=False)


def _object(ref: ObjectRef) -> dict[str, str | None]:
    return {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(reports: Sequence[Report]) -> str:
    """GitHub Actions workflow commands, most severe first; then the full list as text, since Actions shows
    only 10 annotations of each kind per step."""
    entries = sorted(
        ((r, d) for r in reports for d in r.sorted()),
        key=lambda e: (_RANK[e[1].severity], e[0].file_of(e[1]), e[1].line or 0, e[1].column or 0),
    )
    lines = []
    for report, d in entries:
        props = (f"file={_escape_property(_uri(report.file_of(d)))},line={d.line or 1},col={d.column or 1},"
                 f"title={_escape_property(_title(d))}")  # fmt: skip
        lines.append(f"::{_GITHUB_COMMAND[d.severity]} {props}::{_escape_data(_text(d))}")
    if entries:
        errors = sum(1 for _, d in entries if d.severity is Severity.ERROR)
        lines.append(f"policyc: {errors} error(s), {len(entries) - errors} other diagnostic(s):")
        lines.extend(render_text(r) for r in reports if r.diagnostics)
    return "\n".join(lines)


def _title(d: Diagnostic) -> str:
    """``PCnnn name`` for a numbered rule, the identity (which holds the name) for the others."""
    return f"{d.code} {d.rule.name}" if d.rule.numbered else d.code


def _uri(file: str) -> str:
    """A repository-relative, forward-slash path where possible (what code scanning expects)."""
    path = PurePath(file)
    if path.is_absolute():
        try:
            path = path.relative_to(os.getcwd())
        except ValueError:
            return path.as_posix()
    return path.as_posix()


def _logical(ref: ObjectRef) -> dict[str, str]:
    """A cluster object as a SARIF logical location: a resource, fully qualified as kubectl names it."""
    scope = f"{ref.namespace}/" if ref.namespace else ""
    return {
        "name": ref.name,
        "fullyQualifiedName": f"{ref.api_version}/{ref.kind}/{scope}{ref.name}",
        "kind": "resource",
    }


def to_sarif(reports: Sequence[Report]) -> str:
    """A SARIF 2.1.0 log with one run, every rule of the catalogue, and a result per diagnostic.

    A rule's `id` is its code as the text prints it (code scanning matches alerts across runs by it, so a dismissed
    alert stays dismissed); its identity and family are properties."""
    rules = [
        {
            "id": r.code,
            "name": "".join(part.capitalize() for part in r.name.split("-")),
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.summary},
            "help": {"text": f"{r.code} {r.name}: {r.summary} `policyc codes {r.code}` explains it."},
            "defaultConfiguration": {"level": str(r.severity)},
            "properties": {"identity": r.id, "tags": [r.family]},
        }
        for r in codes.RULES.values()
    ]
    index = {code: i for i, code in enumerate(codes.RULES)}
    results = [
        {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": str(d.severity),
            "message": {"text": _text(d)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(report.file_of(d))},
                        "region": {"startLine": d.line or 1, "startColumn": d.column or 1},
                    },
                    **({"logicalLocations": [_logical(d.subject)]} if d.subject else {}),
                }
            ],
        }
        for report in reports
        for d in report.sorted()
    ]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "policyc", "version": __version__, "rules": rules}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)

"""Diagnostics: what the compiler tells the user, where, and how it is rendered.

A check creates a `Diagnostic` naming a path in the policy document (a tuple like
``("spec", "nodePools", 2, "gpu", "product")``); the `Report` locates it in the source with the
`SourceMap` of the file and owns the exit status. Rendering is one line per diagnostic:

    policy.yaml:12:7: error PC302: workload 'llm' uses unknown GPU tier 'hi-perf'; did you mean 'high-perf'?
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from policyc import codes
from policyc.codes import Rule, Severity, rule

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True, order=True)
class ObjectRef:
    """A Kubernetes object a diagnostic is about (`policyc audit`'s findings name the cluster's object)."""

    api_version: str
    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTE: 2}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    path: Path = ()
    hint: str | None = None
    at_key: bool = False
    """Point at the key of `path` rather than its value (unknown fields, duplicate keys)."""
    related: Path | None = None
    """Another place the message refers to; ``{line}`` in the hint becomes its line number."""
    line: int | None = None
    column: int | None = None
    subject: ObjectRef | None = None
    """The cluster object it is about (an audit finding); None for a diagnostic of the policy alone."""
    file: str | None = None
    """The file where `path` was written, when not the report's own (a policy directory's team file)."""

    @property
    def rule(self) -> Rule:
        return codes.RULES[self.code]


def diag(
    name: str,
    message: str,
    path: Path = (),
    *,
    hint: str | None = None,
    at_key: bool = False,
    related: Path | None = None,
    subject: ObjectRef | None = None,
) -> Diagnostic:
    """Create a diagnostic of the rule `name` (see `policyc.codes`); `subject`: the cluster object it is about."""
    r = rule(name)
    return Diagnostic(r.code, r.severity, message, tuple(path), hint, at_key, related, subject=subject)


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate the user most likely meant: the same letters ignoring case and separators ('enable_gang' for
    'enableGang'), else the closest by difflib, ignoring case; None when none is close."""
    options = sorted(set(candidates))
    wanted = spelling(word)
    for option in options:
        if spelling(option) == wanted:
            return option
    by_lower = {option.lower(): option for option in options}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[close[0]] if close else None


def spelling(word: str) -> str:
    """A word without case and separators, to compare spellings ('enable_gang' and 'enableGang' are the same)."""
    return re.sub(r"[\s_\-.]", "", word).lower()


def did_you_mean(word: str, candidates: Iterable[str], *, list_few: bool = True) -> str | None:
    """A "did you mean 'x'?" hint for the closest candidate, else (if `list_few`) a list of the few valid ones."""
    options = sorted(set(candidates))
    match = closest(word, options)
    if match is not None:
        return f"did you mean '{match}'?"
    if list_few and options and len(options) <= 6:
        return "expected one of " + ", ".join(f"'{o}'" for o in options)
    return None


def listing(items: Sequence[str], shown: int = 4) -> str:
    """Items joined with commas, at most `shown` of them and how many more: a message stays one short line."""
    if len(items) <= shown:
        return ", ".join(items)
    return f"{', '.join(items[:shown])} and {len(items) - shown} more"


def pointer(path: Path) -> str:
    """The JSON pointer (RFC 6901) of a document path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def where(path: Path) -> str:
    """How a message names a place in the policy: ``'nodePools[2].gpu'`` (the ``spec.`` is implied)."""
    if not path:
        return "the policy"
    return f"'{dotted(path[1:] if path[0] == 'spec' and len(path) > 1 else path)}'"


def dotted(path: Path, brackets: str = "") -> str:
    """A path as code writes it: ``nodePools[2].gpu``. After the first part, a key that is empty or holds one of the
    characters of `brackets` is written in brackets too: ``resources[nvidia.com/gpu]`` for ``brackets="./"``."""
    out = ""
    for part in path:
        if isinstance(part, int) or (out and brackets and (not part or any(c in part for c in brackets))):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


QUOTED = 40
"""How much of a string value a message quotes."""


def describe_value(value: object, text: str | None = None) -> str:
    """A value as a message names it: "the string 'x'", "the integer 8" (in its source `text` if known)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {text or str(value).lower()}"
    if isinstance(value, int):
        return f"the integer {text or value}"
    if isinstance(value, float):
        return f"the number {text or repr(value)}"
    if isinstance(value, str):
        return f"the string '{value if len(value) <= QUOTED else value[: QUOTED - 3] + '...'}'"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, Sequence):
        return "a list"
    return f"a {type(value).__name__}"


class PolicyError(Exception):
    """Raised by a stage that cannot go on; carries every diagnostic found so far."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        super().__init__(f"{len(diagnostics)} diagnostic(s)")
        self.diagnostics = list(diagnostics)


def _in_its_file(d: Diagnostic, origin: tuple[str, Path, Path] | None) -> Diagnostic:
    """`d`, of a policy merged from a directory, in the terms of the file its path was written in: that file, and its
    item's place there in the message and hint ('tenants[0]' of the team's file, not of the merged policy)."""
    if origin is None:
        return d
    file, merged, own = origin
    if merged == own:
        return replace(d, file=file)
    was, now = dotted(merged[1:]), dotted(own[1:])
    hint = d.hint.replace(was, now) if d.hint else d.hint
    return replace(d, file=file, message=d.message.replace(was, now), hint=hint)


@dataclass(eq=False)
class Report:
    """The diagnostics of one policy file, located in its source, sorted, and rendered."""

    file: str
    source_map: object | None = None  # policyc.language.load.SourceMap; untyped to keep this module import-light
    diagnostics: list[Diagnostic] = field(default_factory=list)
    shown_elsewhere: list[Diagnostic] = field(default_factory=list)
    """Diagnostics this report has too, shown once in another (those every cluster of a fleet shares): counted in its
    summary and whether it failed, not rendered with it."""

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for d in diagnostics:
            if self.source_map is not None:
                if d.file is None and d.line is None and self.source_map.files:  # a merged policy directory
                    d = _in_its_file(d, self.source_map.file_of(d.path))
                if d.line is None:
                    line, column = self.source_map.locate(d.path, at_key=d.at_key)
                    d = replace(d, line=line, column=column)
                if d.related is not None and d.hint:
                    d = replace(d, hint=d.hint.replace("{line}", str(self.source_map.locate(d.related)[0])))
            self.diagnostics.append(d)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def failed(self) -> bool:
        return any(d.severity is Severity.ERROR for d in (*self.diagnostics, *self.shown_elsewhere))

    def file_of(self, d: Diagnostic) -> str:
        """The file `d` points into: its own, or the report's."""
        return d.file or self.file

    def sorted(self) -> list[Diagnostic]:
        """Diagnostics in source order (file, position, then severity, then code), without duplicates."""
        seen: set[tuple] = set()
        out = []
        for d in sorted(
            self.diagnostics,
            key=lambda d: (d.file or "", d.line or 0, d.column or 0, _SEVERITY_ORDER[d.severity], d.code, d.message),
        ):
            key = (d.file, d.line, d.column, d.code, d.message)
            if key not in seen:
                seen.add(key)
                out.append(d)
        return out

    def summary(self) -> str:
        every = (*self.diagnostics, *self.shown_elsewhere)
        e, w = (sum(d.severity is severity for d in every) for severity in (Severity.ERROR, Severity.WARNING))
        parts = [f"{e} error{'s' if e != 1 else ''}"]
        if w:
            parts.append(f"{w} warning{'s' if w != 1 else ''}")
        return f"{self.file}: " + ", ".join(parts) + self._shared(len(every))

    def _shared(self, count: int) -> str:
        k = len(self.shown_elsewhere)
        if not k:
            return ""
        return f" ({'' if k == count else f'{k} '}shown above: every cluster has {'it' if k == 1 else 'them'})"

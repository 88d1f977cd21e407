"""What every section of the resolver shares: the parsed policy, the diagnostics found so far, where a list's items
are in the document, and the one way a reference to a named thing is resolved ("unknown name, did you mean")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from policyc import ir
from policyc.diagnostics import Diagnostic, Path, diag, did_you_mean
from policyc.language.parse import Parsed


class Context:
    """The policy being resolved and what the sections report about it."""

    def __init__(self, parsed: Parsed):
        assert parsed.policy is not None
        self.parsed = parsed
        self.policy = parsed.policy
        self.spec = parsed.policy.spec
        self.keys = ir.LabelKeys(self.spec.domain)
        self.out: list[Diagnostic] = []

    def report(self, d: Diagnostic) -> None:
        self.out.append(d)

    def path(self, list_name: str, index: int, *rest: str | int) -> Path:
        """The document path of item `index` of `spec.<list_name>` as parsed (items dropped for errors shift none)."""
        return (*self.parsed.source_path(list_name, index), *rest)

    def unique(self, list_name: str, items: Sequence[Any], what: str) -> list[tuple[int, Any]]:
        """Items with a name not seen before, with their index (duplicates are reported and skipped)."""
        seen: dict[str, int] = {}
        out = []
        for i, item in enumerate(items):
            if item.name in seen:
                first = self.path(list_name, seen[item.name], "name")
                self.report(
                    diag(
                        "duplicate-name",
                        f"{what} '{item.name}' is already defined",
                        self.path(list_name, i, "name"),
                        hint="it is first defined on line {line}; names must be unique: rename one of them, or remove "
                        "the copy",
                        related=first,
                    )
                )
                continue
            seen[item.name] = i
            out.append((i, item))
        return out

    def reference(
        self,
        name: str,
        defined: Iterable[str],
        rule: str,
        message: str,
        path: Path,
        *,
        among: str | None = None,
        at_key: bool = False,
        otherwise: str | None = None,
    ) -> bool:
        """Whether `name` is one of `defined`. If not, a diagnostic of `rule` at `path`, hinting at the defined name
        it most likely means (else `otherwise`); none when `among`, the list of the spec that would define it, lost
        an item of that name to errors already reported."""
        options = set(defined)
        if name in options:
            return True
        if among is None or not self.parsed.was_dropped(among, name):
            self.report(diag(rule, message, path, at_key=at_key, hint=did_you_mean(name, options) or otherwise))
        return False

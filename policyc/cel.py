"""CEL literals of JSON-like data, for the admission policies policyc writes (`policyc.tenancy`,
`policyc.injection`). Strings are single-quoted, so that the YAML around them needs no escapes. A map whose values
are not all of one kind is wrapped in `dyn()`: the CEL type checker takes a heterogeneous literal as dyn-valued only
when told so (cel-spec, "Gradual Type Checking")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        text = "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
        return text if len({_kind(v) for v in value.values()}) <= 1 else f"dyn({text})"
    return "[" + ", ".join(literal(v) for v in value) + "]"


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, (str, bool, int)):
        return type(value).__name__
    return "list"

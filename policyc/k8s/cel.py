"""CEL literals of JSON-like data, for the CEL policyc writes (the tenants' admission policies, `policyc.tenancy`;
DRA device selectors, `policyc.gpu.dra`). Strings are single-quoted, so that the YAML around them needs no escapes.

The API server's CEL environment requires homogeneous aggregate literals: every element of a list literal, and
every key and every value of a map literal, must have the type of the first one, where `dyn` matches only `dyn`
(cel-go's ValidateHomogeneousAggregateLiterals; wrapping the whole literal in `dyn()` does not help). So a list or
map whose items differ in type has each item wrapped in `dyn()`: a node selector requirement is written
`{'key': dyn('zone'), 'operator': dyn('In'), 'values': dyn(['a'])}`, and a toleration, all strings, is written
plain. An empty list or map takes the type of its siblings, as the type checker unifies it with them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

Type = str | tuple | None
"""A literal's CEL type: 'string', 'int', 'bool' or 'dyn'; ('list', element) or ('map', key, value); None for the
still free element type of an empty list or map."""


def literal(value: Any) -> str:
    return _literal(value)[0]


def _literal(value: Any) -> tuple[str, Type]:
    if isinstance(value, str):
        return "'" + value.translate(_ESCAPES) + "'", "string"
    if isinstance(value, bool):
        return ("true" if value else "false"), "bool"
    if isinstance(value, int):
        return str(value), "int"
    if isinstance(value, Mapping):
        keys, key_type = _homogeneous([_literal(k) for k in value])
        values, value_type = _homogeneous([_literal(v) for v in value.values()])
        entries = ", ".join(f"{k}: {v}" for k, v in zip(keys, values, strict=True))
        return "{" + entries + "}", ("map", key_type, value_type)
    items, item_type = _homogeneous([_literal(v) for v in value])
    return "[" + ", ".join(items) + "]", ("list", item_type)


_ESCAPES = {ord("\\"): "\\\\", ord("'"): "\\'"} | {code: f"\\u{code:04x}" for code in (*range(0x20), 0x7F)}
"""How a character is written within a single-quoted CEL string, where it cannot stand as itself: backslash and quote
escaped, control characters (which the CEL grammar does not take raw) by code point."""


def _homogeneous(typed: list[tuple[str, Type]]) -> tuple[list[str], Type]:
    """The items' texts and common type; when their types differ, each wrapped in dyn(), and 'dyn'."""
    try:
        return [text for text, _ in typed], functools.reduce(_unify, (t for _, t in typed), None)
    except _Mismatch:
        return [f"dyn({text})" for text, _ in typed], "dyn"


class _Mismatch(Exception):
    pass


def _unify(a: Type, b: Type) -> Type:
    """The type both are, a free (None) part taking the other's."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        return (a[0], *(_unify(x, y) for x, y in zip(a[1:], b[1:], strict=True)))
    if a != b:
        raise _Mismatch
    return a

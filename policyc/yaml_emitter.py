"""Canonical YAML for generated manifests.

A deliberately small emitter for the data policyc generates (mappings with string keys, lists, strings,
integers, booleans, null), in the layout kubectl and kustomize print: block style, two-space indent,
list items at their parent key's column, keys in the order the builders give. ruamel.yaml's emitter
would do the job at about 25 times the cost (0.5 ms a document here), which alone would spend the
build's time budget on a large cluster; the tests read every emitted file back with ruamel.yaml and
compare it with the objects it came from.

Strings are written plain when no YAML 1.1 or 1.2 reader could take them for anything else (a
number, a boolean, null, a date, an indicator), and double-quoted otherwise, as kubectl does, with
escapes for what is not printable. Multi-line strings become literal blocks (``|``).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable
from typing import Any

# Plain scalars: a conservative alphabet, no leading indicator, nothing a resolver would read as non-string.
_PLAIN = re.compile(r"^[A-Za-z0-9_./(][A-Za-z0-9_./()@=+,:-]*(?: [A-Za-z0-9_./()@=+,:-]+)*$")
_NUMBER_LIKE = re.compile(r"^[-+]?[0-9.][0-9a-fA-FxXoObB_.:eE+-]*$")
_SPECIAL = frozenset(
    [
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "~",
        "null",
        "Null",
        "NULL",
        ".inf",
        ".Inf",
        ".INF",
        "-.inf",
        "-.Inf",
        "-.INF",
        "+.inf",
        "+.Inf",
        "+.INF",
        ".nan",
        ".NaN",
        ".NAN",
        "=",
    ]
)
_PRINTABLE = re.compile(r"^[\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*$")


def is_plain_safe(text: str) -> bool:
    """Can `text` be written unquoted and still read back as this exact string by YAML 1.1 and 1.2?"""
    return (
        bool(_PLAIN.match(text))
        and text not in _SPECIAL
        and not _NUMBER_LIKE.match(text)
        and ": " not in text
        and not text.endswith(":")
        and "<<" not in text
    )


@functools.lru_cache(maxsize=1 << 16)
def _string(value: str) -> str:
    """A string scalar (cached: generated files repeat the same keys and values thousands of times)."""
    return value if is_plain_safe(value) else _double_quoted(value)


def scalar(value: Any) -> str:
    """A scalar in its canonical one-line form."""
    if isinstance(value, str):
        return _string(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    raise TypeError(f"cannot emit {type(value).__name__} {value!r} as canonical YAML")


def _float(value: float) -> str:
    """The shortest text that reads back as the same float, with a '.' in it: YAML 1.1 readers (Go's yaml.v2,
    which several cluster components use) take '1e+20' for a string, '1.0e+20' for a float."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "." not in text:
        mantissa, e, exponent = text.partition("e")
        text = f"{mantissa}.0{e}{exponent}"
    return text


def _double_quoted(value: str) -> str:
    out = json.dumps(value, ensure_ascii=False)
    # json leaves these unescaped, but YAML 1.1 readers treat them as line breaks or a byte-order mark.
    for ch in ("\x85", "\u2028", "\u2029", "\ufeff"):
        out = out.replace(ch, f"\\u{ord(ch):04x}")
    return "".join(c if _PRINTABLE.match(c) or c == '"' else f"\\u{ord(c):04x}" for c in out)


def _literal_block(value: str, indent: str) -> str | None:
    """`value` as a literal block scalar (``|``), or None when a block cannot hold it exactly."""
    if not _PRINTABLE.match(value.replace("\n", "")) or value.startswith((" ", "\n")) or "\r" in value:
        return None
    body = value.rstrip("\n")
    trailing = len(value) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    lines = body.split("\n") + [""] * (trailing - 1 if trailing > 1 else 0)
    if any(line != line.rstrip(" ") for line in lines):
        return None
    return "|" + chomp + "".join("\n" + (indent + line if line else "") for line in lines)


def _emit(value: Any, indent: str, out: list[str]) -> None:
    """Append the lines of a block collection at `indent`."""
    if isinstance(value, dict):
        for key, item in value.items():
            _emit_entry(indent + scalar(key) + ":", item, indent, out, nested_indent=indent + "  ")
    else:
        for item in value:
            _emit_entry(indent + "-", item, indent, out, nested_indent=indent + "  ", in_list=True)


def _emit_entry(
    head: str, item: Any, indent: str, out: list[str], *, nested_indent: str, in_list: bool = False
) -> None:
    if isinstance(item, dict) and item:
        if in_list:  # "- key: value" with the rest of the mapping aligned under the first key
            lines: list[str] = []
            _emit(item, nested_indent, lines)
            out.append(head + " " + lines[0][len(nested_indent) :])
            out.extend(lines[1:])
        else:
            out.append(head)
            _emit(item, nested_indent, out)
    elif isinstance(item, list) and item:
        if in_list:
            lines = []
            _emit(item, nested_indent, lines)
            out.append(head + " " + lines[0][len(nested_indent) :])
            out.extend(lines[1:])
        else:
            out.append(head)
            _emit(item, indent, out)  # kubectl style: list items at the key's column
    elif isinstance(item, dict):
        out.append(head + " {}")
    elif isinstance(item, list):
        out.append(head + " []")
    elif isinstance(item, str) and "\n" in item:
        block = _literal_block(item, nested_indent)
        out.append(head + " " + (block if block is not None else _double_quoted(item)))
    else:
        out.append(head + " " + scalar(item))


def dump(value: dict | list) -> str:
    """One document (a mapping or a list) as canonical YAML text ending in a newline."""
    if not value:
        return ("{}" if isinstance(value, dict) else "[]") + "\n"
    out: list[str] = []
    _emit(value, "", out)
    return "\n".join(out) + "\n"


def dump_all(documents: Iterable[dict | list]) -> str:
    """Several documents separated by ``---``."""
    return "---\n".join(dump(d) for d in documents)

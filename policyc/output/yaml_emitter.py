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
_NOT_PRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff]")
"""The characters never written as they are: C0 and C1 controls and DEL (tab and line breaks included), surrogates,
U+FEFF (a byte-order mark) and the non-characters U+FFFE and U+FFFF. (The class of the characters written as they
are, with its range beyond the BMP, takes milliseconds to compile.)"""


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
    if value.isascii() and value.isprintable():  # what json escapes of it, and nothing else to escape
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    out = json.dumps(value, ensure_ascii=False)
    # json leaves these unescaped, but YAML 1.1 readers treat them as line breaks or a byte-order mark.
    for ch in ("\x85", "\u2028", "\u2029", "\ufeff"):
        out = out.replace(ch, f"\\u{ord(ch):04x}")
    # json escapes what is below U+0020, '"' and '\\'; YAML wants the rest of what it cannot print escaped too.
    return _NOT_PRINTABLE.sub(_escape, out)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _literal_block(value: str, indent: str) -> str | None:
    """`value` as a literal block scalar (``|``), or None when a block cannot hold it exactly."""
    if _NOT_PRINTABLE.search(value.replace("\n", "")) or value.startswith((" ", "\n")) or "\r" in value:
        return None
    body = value.rstrip("\n")
    trailing = len(value) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    lines = body.split("\n") + [""] * (trailing - 1 if trailing > 1 else 0)
    if any(line != line.rstrip(" ") for line in lines):
        return None
    return "|" + chomp + "".join("\n" + (indent + line if line else "") for line in lines)


_KEYS: dict[Any, str] = {}
"""Key -> its text with the colon ("key:")."""
_VALUES: dict[str, str] = {}
"""One-line string -> its text after a key or a dash (" value"). Both are filled up to `_CACHED` entries: generated
files repeat the same keys and values thousands of times."""
_CACHED = 1 << 16


def _mapping(value: dict, indent: str, first: str, out: list[str]) -> None:
    """Append the lines of the non-empty mapping `value` at `indent`; its first line starts with `first` instead
    of `indent` (``"- "`` after the indent of a list item that is a mapping: "- key: value", the other keys aligned
    under the first).

    The common cases (a one-line str, a non-empty dict or list) are handled here, by exact type; `_entry` handles
    the others and stays the reference for the layout."""
    child = indent + "  "
    lead = first
    append = out.append
    keys, values = _KEYS, _VALUES
    for key, item in value.items():
        head = keys.get(key) if type(key) is str else None
        if head is None:
            head = _key(key)
        cls = type(item)
        if cls is str and (text := values.get(item) or _value(item)):
            append(lead + head + text)
        elif cls is dict and item:
            append(lead + head)
            _mapping(item, child, child, out)
        elif cls is list and item:
            append(lead + head)
            _sequence(item, indent, indent, out)  # kubectl style: list items at the key's column
        else:
            _entry(lead + head, item, indent, child, out, in_list=False)
        lead = indent


def _sequence(value: Iterable[Any], indent: str, first: str, out: list[str]) -> None:
    """Append the items of a non-empty sequence at `indent`, the first line starting with `first` (see
    `_mapping`)."""
    child = indent + "  "
    lead = first
    append = out.append
    values = _VALUES
    for item in value:
        cls = type(item)
        if cls is str and (text := values.get(item) or _value(item)):
            append(lead + "-" + text)
        elif cls is dict and item:
            _mapping(item, child, lead + "- ", out)
        else:
            _entry(lead + "-", item, indent, child, out, in_list=True)
        lead = indent


def _key(key: Any) -> str:
    text = scalar(key) + ":"
    if type(key) is str and len(_KEYS) < _CACHED:
        _KEYS[key] = text
    return text


def _value(value: str) -> str:
    """`value`'s text after a key or a dash, or "" if it is not on one line."""
    if "\n" in value:
        return ""
    text = " " + _string(value)
    if len(_VALUES) < _CACHED:
        _VALUES[value] = text
    return text


def _entry(head: str, item: Any, indent: str, child: str, out: list[str], *, in_list: bool) -> None:
    """Append a mapping entry or a list item whose line starts with `head` (``"<indent>key:"`` or ``"<...>-"``);
    `child` is the indent of what nests in it."""
    if isinstance(item, dict) and item:
        if in_list:
            _mapping(item, child, head + " ", out)
        else:
            out.append(head)
            _mapping(item, child, child, out)
    elif isinstance(item, list) and item:
        if in_list:
            _sequence(item, child, head + " ", out)
        else:
            out.append(head)
            _sequence(item, indent, indent, out)
    elif isinstance(item, dict):
        out.append(head + " {}")
    elif isinstance(item, list):
        out.append(head + " []")
    elif isinstance(item, str) and "\n" in item:
        block = _literal_block(item, child)
        out.append(head + " " + (block if block is not None else _double_quoted(item)))
    else:
        out.append(head + " " + scalar(item))


def dump(value: dict | list) -> str:
    """One document (a mapping or a list) as canonical YAML text ending in a newline."""
    if not value:
        return ("{}" if isinstance(value, dict) else "[]") + "\n"
    out: list[str] = []
    if isinstance(value, dict):
        _mapping(value, "", "", out)
    else:
        _sequence(value, "", "", out)
    return "\n".join(out) + "\n"


def dump_all(documents: Iterable[dict | list]) -> str:
    """Several documents separated by ``---``."""
    return "---\n".join(dump(d) for d in documents)

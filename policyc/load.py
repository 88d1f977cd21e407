"""Load a policy file: YAML text to plain data plus a source map of positions.

ruamel.yaml composes the document into a node graph (with libyaml when ruamel.yaml.clib is installed);
this module builds plain Python data from the nodes itself, so that it can see and report what a
constructor would hide or choke on: every duplicate key, unsupported tags, non-string keys, alias
bombs, and too-deep nesting. Scalars resolve by YAML 1.2 rules (``yes``/``on`` are strings, ``0123``
is the integer 123). Merge keys (``<<``) are supported.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from policyc.diagnostics import Diagnostic, Path, PolicyError, diag

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Policies above this size are rejected before parsing (a 5,000-node policy is well under 1 MiB)."""
MAX_NODES = 500_000
"""Upper bound on values built from one document, counting each expansion of an alias."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and sequences accepted."""
_PRESCAN_CHARS = MAX_NODES // 2
_LONG_LINE = re.compile(r"[^\n]{257}")
"""Texts longer than `_PRESCAN_CHARS`, or with a line longer than 256 characters, are checked by `_prescan`
before they are composed: ruamel.yaml's composer costs about 20 µs and 250 bytes a node (an 8 MiB file of
4 million tiny values would take minutes and gigabytes before `MAX_NODES` could be counted), and libyaml's
recurses in C once per level of nesting (``- - - ... x`` 40,000 levels deep on one line crashes the
process). Short lines bound the nesting of block collections (each level needs a column), and
`_flow_too_deep` the nesting of flow collections."""
_MAX_INT_DIGITS = 4000
_MAX_INT_BITS = 13_000
"""Integers longer than this are refused, in digits or bits: Python will not print those above 4,300 digits."""

_T = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = _T + "str", _T + "int", _T + "float", _T + "bool", _T + "null"
_MAP, _SEQ, _MERGE, _TIMESTAMP = _T + "map", _T + "seq", _T + "merge", _T + "timestamp"
_NOT_UTF8_HINT = "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 policy.yaml)"


@dataclass
class SourceMap:
    """Positions (1-based line and column) of every key and value of a loaded document."""

    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    texts: dict[Path, str] = field(default_factory=dict)
    """The source text of every number and boolean, for hints such as 'quote it: "1.30"'."""
    rejected: set[Path] = field(default_factory=set)
    """Values already reported as unusable (loaded as null): later stages stay quiet about them."""

    def is_rejected(self, path: Path) -> bool:
        """Whether `path` is, or lies below, a value already reported as unusable."""
        path = tuple(path)
        return any(path[:n] in self.rejected for n in range(len(path) + 1))

    def locate(self, path: Path, *, at_key: bool = False) -> tuple[int, int]:
        """Position of `path`, or of its nearest ancestor present in the document (for missing fields)."""
        path = tuple(path)
        if at_key and path in self.keys:
            return self.keys[path]
        while path:
            if path in self.values:
                return self.values[path]
            if path in self.keys:
                return self.keys[path]
            path = path[:-1]
        return self.values.get((), (1, 1))


@dataclass
class Document:
    """A loaded policy document."""

    file: str
    data: Any
    source_map: SourceMap
    diagnostics: list[Diagnostic]


def _fatal(name: str, message: str, line: int = 1, column: int = 1, hint: str | None = None) -> PolicyError:
    return PolicyError([_located(diag(name, message, hint=hint), line, column)])


def load_file(path: str | os.PathLike[str], display_name: str | None = None) -> Document:
    """Read and load the policy at `path`; raises `PolicyError` when nothing usable can be loaded."""
    name = display_name or os.fspath(path)
    try:
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            hint = "5,000 nodes fit in well under 1 MiB with node ranges such as 'gpu-[001-500]'"
            raise _fatal(
                "input-too-large", f"the file is {size:,} bytes; policyc reads at most {MAX_FILE_BYTES:,}", hint=hint
            )
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise _fatal("unreadable-file", f"cannot read the policy: {e.strerror or e}") from None
    return load_bytes(raw, name)


def load_bytes(raw: bytes, file: str) -> Document:
    """Load a policy from bytes; raises `PolicyError` when nothing usable can be loaded."""
    if len(raw) > MAX_FILE_BYTES:
        raise _fatal("input-too-large", f"the input exceeds {MAX_FILE_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line, column = _line_column(raw, e.start, b"\n")
        raise _fatal(
            "encoding", f"byte 0x{raw[e.start]:02x} is not valid UTF-8", line, column, _NOT_UTF8_HINT
        ) from None
    if "\x00" in text:
        line, column = _line_column(text, text.index("\x00"), "\n")
        raise _fatal("encoding", "the file contains a NUL byte", line, column, "is this a binary file?")
    return _Builder(file).build(text)


def _line_column(text: str | bytes, index: int, newline: str | bytes) -> tuple[int, int]:
    return text.count(newline, 0, index) + 1, index - (text.rfind(newline, 0, index) + 1) + 1


def _located(d: Diagnostic, line: int, column: int) -> Diagnostic:
    return Diagnostic(d.code, d.severity, d.message, d.path, d.hint, d.at_key, None, line, column)


def _pos(node: Any) -> tuple[int, int]:
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


class _Builder:
    def __init__(self, file: str):
        self.file = file
        self.source_map = SourceMap()
        self.diagnostics: list[Diagnostic] = []
        self.count = 0
        self.too_deep = False

    def error(self, node: Any, name: str, message: str, hint: str | None = None) -> None:
        self.diagnostics.append(_located(diag(name, message, hint=hint), *_pos(node)))

    def build(self, text: str) -> Document:
        from ruamel.yaml import YAMLError

        too_deep = _flow_too_deep(text)  # libyaml's composer recurses in C: refuse before it overflows
        if too_deep is not None:
            raise _fatal(
                "input-too-large",
                f"the document nests deeper than policyc accepts ({MAX_DEPTH} levels)",
                *_line_column(text, too_deep, "\n"),
            )
        try:
            if len(text) > _PRESCAN_CHARS or _LONG_LINE.search(text):
                _prescan(text)
            nodes = [n for n in _yaml().compose_all(text) if n is not None]
        except YAMLError as e:
            raise PolicyError([_syntax_error(e, text)]) from None
        if not nodes or (len(nodes) == 1 and nodes[0].tag == _NULL):  # nothing, or only "---"
            raise _fatal("empty-document", "the file holds no policy", hint="start from an example in policies/")
        for extra in nodes[1:]:
            line = _document_start(text, extra.start_mark.index)
            self.diagnostics.append(
                _located(
                    diag(
                        "multiple-documents",
                        "the file holds more than one YAML document",
                        hint="a policy file holds exactly one ClusterPolicy; split the documents into files",
                    ),
                    line,
                    1,
                )
            )
        root = nodes[0]
        self.source_map.values[()] = _pos(root)
        data = self.value(root, (), 0)
        if self.count > MAX_NODES or self.too_deep:
            raise PolicyError([d for d in self.diagnostics if d.code == "PC007"])
        return Document(self.file, data, self.source_map, self.diagnostics)

    def value(self, node: Any, path: Path, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            if self.count == MAX_NODES + 1:
                self.error(
                    node,
                    "input-too-large",
                    f"the document expands to more than {MAX_NODES:,} values",
                    hint="is an alias ('*name') repeated many times over, as in a 'billion laughs' file?",
                )
            return None
        if depth > MAX_DEPTH:
            if not self.too_deep:
                self.too_deep = True
                self.error(
                    node, "input-too-large", f"the document nests deeper than policyc accepts ({MAX_DEPTH} levels)"
                )
            return None
        tag = node.tag
        if tag == _MAP:
            return self.mapping(node, path, depth)
        if tag == _SEQ:
            out = []
            for i, item in enumerate(node.value):
                self.source_map.values[(*path, i)] = _pos(item)
                out.append(self.value(item, (*path, i), depth + 1))
            return out
        return self.scalar(node, path)

    def mapping(self, node: Any, path: Path, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merges = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merges.append(value_node)
                continue
            key = self.key(key_node)
            if key is None:
                continue
            child = (*path, key)
            if key in out:
                first = self.source_map.keys[child][0]
                self.error(
                    key_node,
                    "duplicate-key",
                    f"duplicate key '{key}'",
                    hint=f"it is first defined on line {first}; remove one of them",
                )
                continue
            self.source_map.keys[child] = _pos(key_node)
            self.source_map.values[child] = _pos(value_node)
            out[key] = self.value(value_node, child, depth + 1)
        for merge in merges:
            for source in merge.value if merge.tag == _SEQ else [merge]:
                if source.tag != _MAP:
                    self.error(source, "unsupported-yaml", "a merge key ('<<') must merge a mapping")
                    continue
                for key_node, value_node in source.value:
                    key = self.key(key_node)
                    if key is None or key in out:
                        continue
                    child = (*path, key)
                    self.source_map.keys[child] = _pos(key_node)
                    self.source_map.values[child] = _pos(value_node)
                    out[key] = self.value(value_node, child, depth + 1)
        return out

    def key(self, node: Any) -> str | None:
        if node.tag == _STR:
            return node.value
        if isinstance(node.value, str):
            self.error(
                node, "unsupported-yaml", f"mapping key {node.value} is not a string", hint=f'quote it: "{node.value}"'
            )
        else:
            self.error(node, "unsupported-yaml", "mapping keys must be plain strings")
        return None

    def scalar(self, node: Any, path: Path) -> Any:
        tag, text = node.tag, node.value
        if isinstance(text, list):  # a mapping or sequence with a custom tag
            return self.reject(
                node, path, f"YAML tag '{_short(tag)}' is not supported", "remove the tag; policies use plain YAML"
            )
        if tag == _STR:
            return text
        if tag == _NULL:
            return None
        self.source_map.texts[path] = text
        if tag == _BOOL:
            return text.lower() == "true"
        if tag == _INT:
            digits = text.replace("_", "")
            sign = -1 if digits.startswith("-") else 1
            body = digits.lstrip("+-")
            base = {"0o": 8, "0x": 16, "0b": 2}.get(body[:2].lower(), 10)
            # Python refuses to convert decimal integers of more than 4,300 digits (to or from text).
            number = int(body[2:] if base != 10 else body, base) if len(body) <= _MAX_INT_DIGITS else None
            if number is None or number.bit_length() > _MAX_INT_BITS:
                return self.reject(
                    node,
                    path,
                    f"the integer {text[:16]}... is too large ({len(text):,} characters)",
                    "is it meant to be a string? Quote it",
                )
            return sign * number
        if tag == _FLOAT:
            low = text.lower().replace("_", "")
            if low.lstrip("+-") in (".inf", ".nan"):
                return self.reject(
                    node, path, f"{text} is not a finite number", f'quote it if it is a string: "{text}"'
                )
            number = float(low)
            if math.isinf(number):  # a literal beyond a double's range, such as 1e400
                return self.reject(
                    node,
                    path,
                    f"{text} is too large for a number (it would be read as infinity)",
                    f'write a smaller number, or quote it if it is a string: "{text}"',
                )
            return number
        if tag == _TIMESTAMP:
            return self.reject(node, path, f"{text} is read as a date", f'quote it: "{text}"')
        return self.reject(
            node, path, f"YAML tag '{_short(tag)}' is not supported", f'quote the value if it is a string: "{text}"'
        )

    def reject(self, node: Any, path: Path, message: str, hint: str) -> None:
        self.error(node, "unsupported-yaml", message, hint=hint)
        self.source_map.rejected.add(path)


def _yaml() -> Any:
    """A ruamel.yaml composer (libyaml when ruamel.yaml.clib is there) resolving scalars by YAML 1.2 rules.

    ruamel's resolver looks the YAML version up again for every scalar, through failing attribute lookups
    on the C parser: half of a large policy's parse time. Policies are read as YAML 1.2 whatever they
    declare, so the version is fixed, and resolutions are memoised by value (policies repeat values).
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.resolver import VersionedResolver

    class Yaml12Resolver(VersionedResolver):
        @property
        def processing_version(self) -> tuple[int, int]:
            return (1, 2)

        @functools.cached_property
        def versioned_resolver(self) -> Any:
            return VersionedResolver.versioned_resolver.fget(self)

        @functools.lru_cache(maxsize=4096)  # noqa: B019 - one resolver per load; freed with it
        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            return super().resolve(kind, value, implicit)

    yaml = YAML(typ="safe")
    yaml.Resolver = Yaml12Resolver
    return yaml


def _short(tag: str) -> str:
    return "!!" + tag[len(_T) :] if tag.startswith(_T) else tag


def _document_start(text: str, index: int) -> int:
    """Line of the ``---`` that starts the document whose first node is at `index`."""
    marker = text.rfind("\n---", 0, index)
    return text.count("\n", 0, marker + 1) + 1


_BRACKET = re.compile(r"[\[\]{}]")


def _flow_too_deep(text: str) -> int | None:
    """Index of the first flow bracket beyond `MAX_DEPTH` levels, counting every bracket (an upper bound)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for match in _BRACKET.finditer(text):
        depth = depth + 1 if match.group() in "[{" else max(depth - 1, 0)
        if depth > MAX_DEPTH:
            return match.start()
    return None


def _prescan(text: str) -> None:
    """Refuse `text` if it nests deeper than `MAX_DEPTH` or holds more than `MAX_NODES` values (aliases
    unexpanded), as `_Builder` would, but from the parser's event stream: no recursion, little memory."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, MappingStartEvent, NodeEvent

    count = 0
    open_collections: list[bool | None] = []  # per open collection: None (a sequence), or whether a key is next
    for event in YAML(typ="safe").parse(text):
        if isinstance(event, CollectionEndEvent):
            open_collections.pop()
            continue
        if not isinstance(event, NodeEvent):
            continue
        if len(open_collections) > MAX_DEPTH:
            raise _fatal(
                "input-too-large", f"the document nests deeper than policyc accepts ({MAX_DEPTH} levels)", *_pos(event)
            )
        is_key = bool(open_collections) and open_collections[-1] is True
        if open_collections and open_collections[-1] is not None:
            open_collections[-1] = not is_key
        if not is_key:
            count += 1
            if count > MAX_NODES:
                raise _fatal(
                    "input-too-large",
                    f"the document holds more than {MAX_NODES:,} values",
                    *_pos(event),
                    hint="node ranges such as 'gpu-[001-500]' keep a policy small",
                )
        if isinstance(event, CollectionStartEvent):
            open_collections.append(True if isinstance(event, MappingStartEvent) else None)


# --- YAML syntax errors, in plain words ------------------------------------------------------------------------

_CONFUSABLES: dict[str, tuple[str, str]] = {
    "\uff1a": ("full-width colon", ":"),
    "\uff0c": ("full-width comma", ","),
    "\u3001": ("ideographic comma", ","),
    "\u3000": ("full-width space", " "),
    "\u00a0": ("no-break space", " "),
    "\uff02": ("full-width quotation mark", '"'),
    "\uff07": ("full-width apostrophe", "'"),
    "\u201c": ("curly quotation mark", '"'),
    "\u201d": ("curly quotation mark", '"'),
    "\u2018": ("curly apostrophe", "'"),
    "\u2019": ("curly apostrophe", "'"),
    "\uff3b": ("full-width bracket", "["),
    "\uff3d": ("full-width bracket", "]"),
    "\uff5b": ("full-width brace", "{"),
    "\uff5d": ("full-width brace", "}"),
    "\uff0d": ("full-width hyphen", "-"),
    "\uff03": ("full-width number sign", "#"),
}
"""Characters that CJK input methods and word processors type for YAML's punctuation: name, ASCII character."""
_CONFUSABLE = re.compile(f"[{''.join(_CONFUSABLES)}]")
_COMMENT = re.compile(r"(?:^|\s)#.*")
_SHAPE = re.compile(r"( *)((?:-[ \t]+)*)(?:(.*?):(?:[ \t]|$))?")
"""Indentation, list dashes, and the key (up to the first ': ') of a line without its comment."""
_CLOSERS = {"[": "]", "{": "}"}
_MISPLACED = ("expected key", "'-' indicator", "<block end>", "document start>")
"""libyaml's and ruamel's words when a line starts in a column no open collection expects."""

_Found = tuple[str, str | None, int]
"""What an explanation finds: message, hint, and the text index the mistake is at."""


@dataclass(frozen=True)
class _Syntax:
    """A YAML error as the parser reported it: its words, the text, and indexes of the problem and its context."""

    text: str
    problem: str
    context: str
    at: int
    opened: int | None
    unreadable: bool
    """A character YAML does not allow anywhere (the reader's error, with no context)."""


def _syntax_error(e: Exception, text: str) -> Diagnostic:
    """A PC002 diagnostic saying in plain words what is wrong and where, from the parser's error and the text."""
    from ruamel.yaml.reader import ReaderError

    problem_mark, context_mark = getattr(e, "problem_mark", None), getattr(e, "context_mark", None)
    marks = {m.index: (m.line + 1, m.column + 1) for m in (context_mark, problem_mark) if m is not None}
    mark = problem_mark or context_mark
    position = getattr(e, "position", None)  # a ReaderError (a character YAML does not allow) has no mark
    at = mark.index if mark is not None else position if isinstance(position, int) else 0
    error = _Syntax(
        text,
        getattr(e, "problem", None) or (str(e).splitlines() or ["?"])[0],
        getattr(e, "context", None) or "",
        max(0, min(at, len(text))),
        context_mark.index if context_mark is not None else None,
        isinstance(e, ReaderError),
    )
    message, hint, index = next(found for explain in _EXPLANATIONS if (found := explain(error)))
    line, column = marks.get(index) or _line_column(text, index, "\n")
    return _located(diag("yaml-syntax", message, hint=hint), line, column)


def _tab(e: _Syntax) -> _Found | None:
    if e.text[e.at : e.at + 1] != "\t":
        return None
    if e.text[_line_start(e.text, e.at) : e.at].strip(" "):
        return "a tab character where YAML allows only spaces", "replace the tab with a space", e.at
    return "a tab character indents this line", "indent with spaces, lining the key up with the keys beside it", e.at


def _unclosed_quote(e: _Syntax) -> _Found | None:
    at_end = "quoted scalar" in e.context and ("end of stream" in e.problem or "document" in e.problem)
    closing = set(e.text[_line_start(e.text, e.at) : e.at]) & {'"', "'"}  # a runaway value ends at a quote
    opened = e.opened if at_end else _runaway_quote(e.text, e.at) if closing else None
    if opened is None:
        return None
    quote = e.text[opened]
    return f"the value opened here with {quote} has no closing {quote}", f"add {quote} at the end of the value", opened


def _runaway_quote(text: str, end: int) -> int | None:
    """Index of a quoted value, opened before `end`, running on into a line no deeper than its own line's key."""
    from ruamel.yaml import YAML, YAMLError
    from ruamel.yaml.tokens import ScalarToken

    try:
        for token in YAML(typ="safe").scan(text):
            start = token.start_mark.index
            if start >= end:
                break
            if (
                isinstance(token, ScalarToken)
                and token.style in ('"', "'")
                and token.end_mark.line > token.start_mark.line
            ):
                indent = _shape(text, _line_start(text, start))[1]
                for line in text[start : token.end_mark.index].split("\n")[1:]:
                    if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                        return start
    except YAMLError:
        pass
    return None


def _confusable(e: _Syntax) -> _Found | None:
    """A full-width or curly punctuation mark, on the line of the error or the line with content before it, without
    which (replaced on that line with its ASCII character) the parser does not fail where it did."""
    start = _previous_line(e.text, e.at)
    start = _line_start(e.text, e.at) if start is None else start
    failed_at = None
    for line in e.text[start : e.at + 1].split("\n"):
        content = _content(line)
        for char in list(dict.fromkeys(_CONFUSABLE.findall(content)))[:3]:
            name, ascii_char = _CONFUSABLES[char]
            failed_at = _error_index(e.text) if failed_at is None else failed_at
            if _error_index(e.text[:start] + line.replace(char, ascii_char) + e.text[start + len(line) :]) == failed_at:
                continue
            index = start + content.index(char)
            if not char.isspace():
                hint = f"replace it (and any other {name}) with '{ascii_char}'"
                return f"{name} '{char}' (U+{ord(char):04X}) where YAML expects '{ascii_char}'", hint, index
            if content[: index - start].strip():
                hint = f"replace it (and any other {name}) with a plain space"
            else:
                hint = "indent with plain spaces only, lining the key up with the keys beside it"
            return f"{name} (U+{ord(char):04X}) where YAML expects a plain space", hint, index
        start += len(line) + 1
    return None


def _error_index(text: str) -> int | None:
    """Where the YAML parser fails on `text`, if it does."""
    from ruamel.yaml import YAML, YAMLError

    try:
        for _ in YAML(typ="safe").parse(text):
            pass
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        return mark.index if mark is not None else -1
    return None


def _bad_escape(e: _Syntax) -> _Found | None:
    backslash = e.text.rfind("\\", _line_start(e.text, e.at), e.at + 1)
    if "quoted scalar" not in e.context or "escape" not in e.problem or backslash < 0:
        return None
    escape = re.match(r"\\(?:u\w{0,4}|U\w{0,8}|x\w{0,2}|.?)", e.text[backslash:]).group()
    hint = "write a backslash as '\\\\', or use single quotes, in which '\\' is an ordinary character"
    return f"'{escape}' is not a valid escape in a double-quoted value", hint, e.at


def _unclosed_flow(e: _Syntax) -> _Found | None:
    """A '[' or '{' left open, closed with the other bracket, or holding items without a ',' between them."""
    if e.opened is None or not e.context.startswith("while parsing a flow"):
        return None
    opener, char = e.text[e.opened : e.opened + 1], e.text[e.at : e.at + 1]
    if char in ("]", "}") and opener not in _CLOSERS:  # a closing bracket where a value should be
        return (
            f"'{char}' where a value is expected",
            "remove it, or fix the bracket: '[' ends with ']', '{' with '}'",
            e.at,
        )
    if opener not in _CLOSERS:
        return None
    closer, kind = _CLOSERS[opener], "list" if opener == "[" else "mapping"
    column = e.opened - _line_start(e.text, e.opened) + 1
    if char in ("]", "}"):
        return f"'{char}' cannot close the '{opener}' opened in column {column}", f"end it with '{closer}'", e.at
    if "\n" in e.text[e.opened : e.at]:
        return (
            f"the '{opener}' that starts this {kind} is never closed",
            f"add '{closer}' after its last item",
            e.opened,
        )
    hint = f"separate its items with ', ' and end it with '{closer}'"
    return f"expected ',' or '{closer}' here, in the {kind} opened in column {column}", hint, e.at


def _key_without_colon(e: _Syntax) -> _Found | None:
    return _missing_colon(e.text, e.opened) if "simple key" in e.context and e.opened is not None else None


def _missing_colon(text: str, index: int) -> _Found:
    """The line starting at `index` holds no 'key: value' pair."""
    entry = _content(text[index : _line_end(text, index)]).strip()
    glued = re.fullmatch(r"([^\s:]+):(\S.*)", entry)
    if glued:
        return f"'{_clip(entry)}' has no space after ':'", f"write '{glued[1]}: {_clip(glued[2])}'", index
    key, _, value = entry.partition(" ")
    if re.match(r"-[^\s-]", key):
        hint = f"write '- {_clip(entry[1:])}' for a list item, or '{_clip(key)}: <value>'"
    elif value.strip():
        hint = f"write '{_clip(key)}: {_clip(value.strip())}'"
    else:
        hint = f"write '{_clip(key)}: <value>', or remove the line"
    return f"'{_clip(entry)}' is not a 'key: value' pair: the ':' is missing", hint, index


def _glued_flow_colon(e: _Syntax) -> _Found | None:
    """'key:value' in a '{...}' or '[...]': libyaml wants a space after the ':' (ruamel's parser reads one value)."""
    if "unexpected ':'" not in e.problem or e.opened is None:
        return None
    entry = re.match(r"[^\s,\[\]{}]*", e.text[e.opened :]).group()
    key, _, value = entry.partition(":")
    hint = f"write '{_clip(key)}: {_clip(value)}', or quote it if the ':' is part of a value"
    return f"'{_clip(entry)}' has no space after ':'", hint, e.opened


def _list_on_key_line(e: _Syntax) -> _Found | None:
    if "sequence entries are not allowed" not in e.problem:
        return None
    key = _shape(e.text, _line_start(e.text, e.at))[2] or "key"
    item = _clip(_content(e.text[e.at + 1 : _line_end(e.text, e.at)]).strip(), 30)
    hint = f"put '- {item}' on a line of its own, indented under '{_clip(key)}:'"
    return f"a list item ('-') on the same line as its key '{_clip(key)}'", hint, e.at


def _mapping_value(e: _Syntax) -> _Found | None:
    """A ': ' YAML cannot take as a key: inside a plain value, or after a line YAML reads as continuing."""
    if not e.problem.startswith("mapping values are not allowed"):
        return None
    start = _line_start(e.text, e.at)
    _, key_at, key, value = _shape(e.text, start)
    if key is None:
        return None
    if start + key_at + len(key) < e.at:
        hint = f"quote the whole value: {_clip(key)}: {_quoted(_clip(value.strip(), 80))}"
        return f"the unquoted value of '{_clip(key)}' contains ': ', which YAML reads as another key", hint, e.at
    above = _previous_line(e.text, start)
    if above is None:
        return None
    dash, above_key_at, above_key, above_value = _shape(e.text, above)
    number = e.text.count("\n", 0, above) + 1
    if above_key is None:
        return _missing_colon(e.text, above + above_key_at)
    if re.match(r"-[^\s-]", above_key):
        hint = f"write '- {_clip(above_key[1:])}:'"
        return f"'{_clip(above_key)}' needs a space after '-' to start a list item", hint, above + above_key_at
    if key_at <= above_key_at or not above_value.strip():
        return None
    key, above_key = _clip(key), _clip(above_key)
    message = f"'{key}' is indented more than '{above_key}' on line {number}, so YAML reads it as part of that value"
    hint = f"start it in column {above_key_at + 1}, like '{above_key}'"
    if dash is not None:
        hint += f", or indent line {number} by {key_at - above_key_at} to move '{above_key}' to column {key_at + 1}"
    return message, hint, start + key_at


def _misplaced(e: _Syntax) -> _Found | None:
    """A line starting in a column that no open mapping or list expects, or text after a closed value."""
    if not any(words in e.problem for words in _MISPLACED):
        return None
    char, start = e.text[e.at : e.at + 1], _line_start(e.text, e.at)
    before = e.text[start : e.at].rstrip()
    if char in ("]", "}"):
        opener = "[" if char == "]" else "{"
        return f"'{char}' closes nothing: no '{opener}' is open", f"remove it, or add the missing '{opener}'", e.at
    if before.endswith(('"', "'")):
        return "text follows the closing quote of this value", "put the whole value inside the quotes", e.at
    if before.endswith(("]", "}")):
        hint = "remove it, or put it on a line of its own if it is another key"
        return f"text follows the '{before[-1]}' that ends this value", hint, e.at
    if before:
        return None
    column, is_dash = e.at - start, char == "-"
    anchors = _anchors(e.text, start)
    owner = next((a for a in anchors if a[0] == column and not a[3]), None) if is_dash else None
    if owner is not None:
        _, key, number, _ = owner
        hint = f"if the list belongs to '{key}', leave nothing after '{key}:' and indent the items under it"
        return f"a list item ('-') among the keys of a mapping, below '{key}' on line {number}", hint, e.at
    fitting = [a for a in anchors if a[3] == is_dash and a[0] != column]
    deeper = min((a for a in fitting if a[0] > column), default=None)
    shallower = max((a for a in fitting if a[0] < column), default=None)
    nearest = sorted(filter(None, (deeper, shallower)), key=lambda a: abs(a[0] - column))
    if not nearest:
        return None
    like = " or ".join(f"column {c + 1} (like {'the ' if d else ''}'{w}' on line {n})" for c, w, n, d in nearest)
    what = "this list item ('-')" if is_dash else f"'{_clip(_shape(e.text, start)[2] or '...')}'"
    return f"{what} in column {column + 1} is not aligned with anything above it", f"move it to {like}", e.at


def _anchors(text: str, start: int) -> list[tuple[int, str, int, bool]]:
    """Where a line at `start` could start: (0-based column, key or '-', line number, is a dash) of each key and
    list dash above it that is left of every one below it."""
    anchors: list[tuple[int, str, int, bool]] = []
    leftmost, number = None, text.count("\n", 0, start) + 1
    above = _previous_line(text, start)
    while above is not None and leftmost != 0:
        number -= text.count("\n", above, start)
        dash, key_at, key, _ = _shape(text, above)
        for column, what, is_dash in ((key_at, key, False), (dash, "-", True)):
            if what is not None and column is not None and (leftmost is None or column < leftmost):
                anchors.append((column, _clip(what), number, is_dash))
        if key is not None or dash is not None:
            leftmost = min(c for c in (leftmost, key_at, dash) if c is not None)
        start, above = above, _previous_line(text, above)
    return anchors


def _unusual_character(e: _Syntax) -> _Found | None:
    char = e.text[e.at : e.at + 1]
    if e.unreadable and char:
        hint = "delete it (control characters often come from copying out of a terminal)"
        return f"the character U+{ord(char):04X} is not allowed in a YAML file", hint, e.at
    if "cannot start any token" in e.problem and char and char in "@`":
        value = _content(e.text[e.at : _line_end(e.text, e.at)]).strip()
        return f"an unquoted value cannot start with '{char}'", f"quote it: {_quoted(_clip(value, 80))}", e.at
    return None


def _anchor_or_alias(e: _Syntax) -> _Found | None:
    if "found duplicate anchor" in e.context and e.opened is not None:
        anchor = re.match(r"&[^\s,\]}]*", e.text[e.at :])
        name, first = anchor.group() if anchor else "&", e.text.count("\n", 0, e.opened) + 1
        return f"the anchor '{name}' is already defined on line {first}", "give each anchor a different name", e.at
    if "found undefined alias" not in e.problem:
        return None
    alias = re.match(r"\*[^\s,\]}]+", e.text[e.at :])
    name = alias.group() if alias else "*name"
    return f"'{name}' refers to no anchor", f"define the anchor ('&{name[1:]}') before the alias that uses it", e.at


def _any_other(e: _Syntax) -> _Found:
    hint = "check the indentation, quotes and brackets of this line and the line above"
    return f"this is not valid YAML ({e.problem.removeprefix('found ')})", hint, e.at


_EXPLANATIONS = (
    _tab,
    _unclosed_quote,
    _confusable,
    _bad_escape,
    _unclosed_flow,
    _key_without_colon,
    _glued_flow_colon,
    _list_on_key_line,
    _mapping_value,
    _misplaced,
    _unusual_character,
    _anchor_or_alias,
    _any_other,
)
"""Tried in order: the first that recognises the error explains it."""


def _shape(text: str, start: int) -> tuple[int | None, int, str | None, str]:
    """The line at `start`: column of its first list dash (or None), column of what follows, its key, its value."""
    line = _content(text[start : _line_end(text, start)])
    match = _SHAPE.match(line)
    indent, dashes, key = match.group(1, 2, 3)
    return (
        (len(indent) if dashes else None),
        len(indent) + len(dashes),
        key,
        line[match.end() :] if key is not None else "",
    )


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def _previous_line(text: str, index: int) -> int | None:
    """Start of the last line with content (not blank, not only a comment) before the line holding `index`."""
    end = _line_start(text, index) - 1
    while end >= 0:
        start = _line_start(text, end)
        if _content(text[start:end]).strip():
            return start
        end = start - 1
    return None


def _content(line: str) -> str:
    """`line` without its comment and trailing blanks."""
    return _COMMENT.sub("", line).rstrip()


def _clip(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _quoted(value: str) -> str:
    return f'"{value}"' if '"' not in value and "\\" not in value else "'" + value.replace("'", "''") + "'"

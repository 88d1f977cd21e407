"""Load a policy file: YAML text to plain data plus a source map of positions.

ruamel.yaml composes the document into a node graph: with libyaml when ruamel.yaml.clib is installed, and, for a
text libyaml refuses, again with ruamel's own parser, which follows the YAML 1.2 grammar where libyaml does not
(a plain scalar holding ':' in a flow collection, such as ``{maxTime: 7-00:00:00}``; an anchor defined twice).
This module builds plain Python data from the nodes itself, so that it can see and report what a
constructor would hide or choke on: every duplicate key, unsupported tags, non-string keys, alias
bombs, and too-deep nesting. Scalars resolve by YAML 1.2 rules (``yes``/``on`` are strings, ``0123``
is the integer 123). Merge keys (``<<``) are supported.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

from policyc.diagnostics import Diagnostic, Path, PolicyError, diag

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Policies above this size are rejected before parsing (a 5,000-node policy is well under 1 MiB)."""
MAX_NODES = 500_000
"""Upper bound on values built from one document, counting each expansion of an alias."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and sequences accepted."""
_PRESCAN_CHARS = MAX_NODES // 2
_LONG_LINE = 256
"""Texts longer than `_PRESCAN_CHARS`, or with a line longer than 256 characters, are checked by `_prescan`
before they are composed: ruamel.yaml's composer costs about 20 µs and 250 bytes a node (an 8 MiB file of
4 million tiny values would take minutes and gigabytes before `MAX_NODES` could be counted), and libyaml's
recurses in C once per level of nesting (``- - - ... x`` 40,000 levels deep on one line crashes the
process). Short lines bound the nesting of block collections (each level needs a column), and
`_flow_too_deep` the nesting of flow collections."""
CONFORMING_MAX_CHARS = _PRESCAN_CHARS
"""Texts libyaml refuses are read again by ruamel's pure-Python parser up to this size (the 5,000-node policy of
the benchmark has 222,000 characters): it takes 5 to 10 µs a character, and 20 to 40 µs a value, so that 8 MiB of
tiny values would take minutes, and a text this long a few seconds at most."""
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
    files: dict[Path, tuple[str, Path]] = field(default_factory=dict)
    """For a policy merged from a directory (`policyc.language.teams`): the file each subtree was written in and its
    path there, by the path of its root in the merged policy; empty for a policy of one file."""

    def file_of(self, path: Path) -> tuple[str, Path, Path] | None:
        """The file `path` (or its nearest ancestor listed in `files`) was written in, that ancestor's path in the
        merged policy and in that file; None for a policy of one file."""
        path = tuple(path)
        while path not in self.files and path:
            path = path[:-1]
        found = self.files.get(path)
        return None if found is None else (found[0], path, found[1])

    def graft(self, target: Path, file: str, source: SourceMap, prefix: Path) -> None:
        """Make `target` the subtree at `prefix` of `source`, a document of `file`: its positions replace the ones
        below `target`, and `target` is known to be written in `file` (a merged policy directory)."""
        n, m = len(target), len(prefix)
        mappings = ((self.keys, source.keys), (self.values, source.values), (self.texts, source.texts))
        if target in self.values or target in self.keys:  # a replaced subtree (an appended one is new)
            for mapping in (self.keys, self.values, self.texts, self.files):
                for path in [p for p in mapping if p[:n] == target]:
                    del mapping[path]
            self.rejected = {p for p in self.rejected if p[:n] != target}
        for mapping, own in mappings:
            mapping.update(((*target, *p[m:]), v) for p, v in own.items() if p[:m] == prefix)
        self.rejected.update((*target, *p[m:]) for p in source.rejected if p[:m] == prefix)
        self.files[target] = (file, prefix)

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
    return load_bytes(_read(path), display_name or os.fspath(path))


def load_documents(path: str | os.PathLike[str], display_name: str) -> list[Document]:
    """Read and load every YAML document of the file at `path` (a policy directory's files may hold several); raises
    `PolicyError` when nothing usable can be loaded. The documents share their data and source map with every other
    load of the same bytes (a fleet's build reads its directory once per cluster, and to list its clusters, under
    other names): callers do not change them."""
    return [replace(doc, file=display_name) for doc in _documents(_read(path))]


@functools.lru_cache(maxsize=8192)  # a fleet of 2,000 team files and its clusters fits
def _documents(raw: bytes) -> list[Document]:
    text = _decode(raw)
    nodes = [n for n in _Builder.compose(text) if n.tag != _NULL]
    if not nodes:
        raise _fatal("empty-document", "the file holds no document", hint="remove the file, or write a policy in it")
    return [_Builder("").document(node) for node in nodes]


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            hint = "5,000 nodes fit in well under 1 MiB with node ranges such as 'gpu-[001-500]'"
            raise _fatal(
                "input-too-large", f"the file is {size:,} bytes; policyc reads at most {MAX_FILE_BYTES:,}", hint=hint
            )
        with open(path, "rb") as f:
            return f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise _fatal("unreadable-file", f"cannot read the policy: {e.strerror or e}") from None


def load_bytes(raw: bytes, file: str) -> Document:
    """Load a policy from bytes; raises `PolicyError` when nothing usable can be loaded."""
    return _Builder(file).build(_decode(raw))


def _decode(raw: bytes) -> str:
    if len(raw) > MAX_FILE_BYTES:
        raise _fatal("input-too-large", f"the input exceeds {MAX_FILE_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        from policyc.language.yaml_errors import line_column  # error paths only import it

        line, column = line_column(raw, e.start, b"\n")
        raise _fatal(
            "encoding", f"byte 0x{raw[e.start]:02x} is not valid UTF-8", line, column, _NOT_UTF8_HINT
        ) from None
    if "\x00" in text:
        from policyc.language.yaml_errors import line_column

        line, column = line_column(text, text.index("\x00"), "\n")
        raise _fatal("encoding", "the file contains a NUL byte", line, column, "is this a binary file?")
    return text


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

    @staticmethod
    def compose(text: str) -> list[Any]:
        """The documents of `text` as node graphs, refused first if they nest too deep."""
        too_deep = _flow_too_deep(text)  # libyaml's composer recurses in C: refuse before it overflows
        if too_deep is not None:
            from policyc.language.yaml_errors import line_column

            raise _fatal(
                "input-too-large",
                f"the document nests deeper than policyc accepts ({MAX_DEPTH} levels)",
                *line_column(text, too_deep, "\n"),
            )
        return _compose(text)

    def build(self, text: str) -> Document:
        nodes = self.compose(text)
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
        return self.document(nodes[0])

    def document(self, root: Any) -> Document:
        """The document whose root node is `root`."""
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
        tag = node.tag  # a property of ruamel's nodes that builds the string each time: read once per node
        if tag == _MAP:
            return self.mapping(node, path, depth)
        if tag == _SEQ:
            out = []
            values = self.source_map.values
            for i, item in enumerate(node.value):
                child = (*path, i)
                mark = item.start_mark  # `_pos`, inlined in the loops: a large policy has 30,000 nodes
                values[child] = mark.line + 1, mark.column + 1
                out.append(self.value(item, child, depth + 1))
            return out
        return self.scalar(node, path, tag)

    def mapping(self, node: Any, path: Path, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merges = []
        keys, values = self.source_map.keys, self.source_map.values
        for key_node, value_node in node.value:
            key_tag = key_node.tag
            if key_tag == _MERGE:
                merges.append(value_node)
                continue
            key = self.key(key_node, key_tag)
            if key is None:
                continue
            child = (*path, key)
            if key in out:
                first = keys[child][0]
                self.error(
                    key_node,
                    "duplicate-key",
                    f"duplicate key '{key}'",
                    hint=f"it is first defined on line {first}; remove one of them",
                )
                continue
            mark = key_node.start_mark
            keys[child] = mark.line + 1, mark.column + 1
            mark = value_node.start_mark
            values[child] = mark.line + 1, mark.column + 1
            out[key] = self.value(value_node, child, depth + 1)
        for merge in merges:
            for source in merge.value if merge.tag == _SEQ else [merge]:
                if source.tag != _MAP:
                    self.error(source, "unsupported-yaml", "a merge key ('<<') must merge a mapping")
                    continue
                for key_node, value_node in source.value:
                    key = self.key(key_node, key_node.tag)
                    if key is None or key in out:
                        continue
                    child = (*path, key)
                    self.source_map.keys[child] = _pos(key_node)
                    self.source_map.values[child] = _pos(value_node)
                    out[key] = self.value(value_node, child, depth + 1)
        return out

    def key(self, node: Any, tag: str) -> str | None:
        if tag == _STR:
            return node.value
        if isinstance(node.value, str):
            self.error(
                node, "unsupported-yaml", f"mapping key {node.value} is not a string", hint=f'quote it: "{node.value}"'
            )
        else:
            self.error(node, "unsupported-yaml", "mapping keys must be plain strings")
        return None

    def scalar(self, node: Any, path: Path, tag: str) -> Any:
        text = node.value
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


def _compose(text: str) -> list[Any]:
    """The documents of `text` as node graphs: libyaml's, or, where it refuses the text, the YAML 1.2 parser's.

    When both refuse it, the error explained is the one further into the text: the parser that got past the other's
    failure read that part as valid, so the other's error is not the mistake.
    """
    from ruamel.yaml import YAMLError

    prescan = len(text) > _PRESCAN_CHARS or _has_long_line(text)
    try:
        return _compose_with(_yaml(), text, prescan=prescan)
    except YAMLError as e:
        error = e
    if len(text) <= CONFORMING_MAX_CHARS:
        try:
            nodes = _compose_with(_yaml(pure_python=True), text, prescan=prescan)
        except YAMLError as e:
            if _error_index(e) > _error_index(error):
                error = e
        except PolicyError:
            raise
        except Exception:  # ruamel's parser asserts on what it cannot read (%YAML 1.3), or recurses too deep
            pass
        else:
            if not _holds_surrogate(nodes):  # libyaml's error stands (an escape such as "\ud800")
                return nodes
    from policyc.language.yaml_errors import explain

    message, hint, line, column = explain(error, text)
    raise PolicyError([_located(diag("yaml-syntax", message, hint=hint), line, column)]) from None


def _compose_with(yaml: Any, text: str, *, prescan: bool) -> list[Any]:
    import warnings

    from ruamel.yaml.error import ReusedAnchorWarning

    if prescan:
        _prescan(yaml, text)
    with warnings.catch_warnings():  # YAML 1.2 lets an anchor be defined again: an alias takes the latest
        warnings.simplefilter("ignore", ReusedAnchorWarning)
        return [n for n in yaml.compose_all(text) if n is not None]


def _holds_surrogate(nodes: list[Any]) -> bool:
    """Whether a scalar holds half of a UTF-16 surrogate pair, which an escape such as "\\ud800" writes: ruamel's
    parser takes it, but it is no character (YAML allows none), and no file could be written with it."""
    seen: set[int] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias: the same node again
            continue
        seen.add(id(node))
        if isinstance(node.value, str):
            if _SURROGATE.search(node.value):
                return True
            continue
        for item in node.value:  # a sequence's nodes, or a mapping's (key, value) pairs
            stack.extend(item if isinstance(item, tuple) else (item,))
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def _error_index(e: Exception) -> int:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    if mark is not None:
        return mark.index
    position = getattr(e, "position", None)  # a ReaderError's
    return position if isinstance(position, int) else 0


def _yaml(pure_python: bool = False) -> Any:
    """A ruamel.yaml composer resolving scalars by YAML 1.2 rules: libyaml's when ruamel.yaml.clib is there, or
    ruamel's own (`pure_python`).

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

    yaml = YAML(typ="safe", pure=pure_python)
    yaml.Resolver = Yaml12Resolver
    return yaml


def _short(tag: str) -> str:
    return "!!" + tag[len(_T) :] if tag.startswith(_T) else tag


def _document_start(text: str, index: int) -> int:
    """Line of the ``---`` that starts the document whose first node is at `index`."""
    marker = text.rfind("\n---", 0, index)
    return text.count("\n", 0, marker + 1) + 1


def _has_long_line(text: str) -> bool:
    """Whether a line of `text` is longer than `_LONG_LINE` characters (split in C: a regex searching for a run of
    257 characters would try each of the text's positions)."""
    return len(text) > _LONG_LINE and max(map(len, text.split("\n"))) > _LONG_LINE


_BRACKET = re.compile(r"[\[\]{}]")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _flow_too_deep(text: str) -> int | None:
    """Index of the first flow bracket beyond `MAX_DEPTH` levels, counting every bracket (an upper bound)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for bracket in _NOT_BRACKET.sub("", text):  # the brackets alone: a large flow-style policy has thousands
        if bracket in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                break
        elif depth:
            depth -= 1
    else:
        return None
    depth = 0
    for match in _BRACKET.finditer(text):
        depth = depth + 1 if match.group() in "[{" else max(depth - 1, 0)
        if depth > MAX_DEPTH:
            return match.start()
    return None


def _prescan(yaml: Any, text: str) -> None:
    """Refuse `text` if it nests deeper than `MAX_DEPTH` or holds more than `MAX_NODES` values (aliases
    unexpanded), as `_Builder` would, but from `yaml`'s event stream: no recursion, little memory."""
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, MappingStartEvent, NodeEvent

    count = 0
    open_collections: list[bool | None] = []  # per open collection: None (a sequence), or whether a key is next
    for event in yaml.parse(text):
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

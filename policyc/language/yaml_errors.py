"""YAML syntax errors in plain words (PC002): what is wrong, where it really is, and a hint that fixes it.

The parser's error (libyaml's, or ruamel's pure-Python one with its own wording) goes through an ordered list of
small explanations (`_EXPLANATIONS`); the first that recognises it wins, and a last one keeps the parser's words
for what none knows. Characters that input methods type for YAML's punctuation (a full-width colon ...) are one
table, blamed only when swapping them for the ASCII character moves where parsing fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True, eq=False)
class _Syntax:
    """A YAML error as the parser reported it: its words, the text, and indexes of the problem and its context."""

    text: str
    problem: str
    context: str
    at: int
    opened: int | None
    unreadable: bool
    """A character YAML does not allow anywhere (the reader's error, with no context)."""


def explain(e: Exception, text: str) -> tuple[str, str | None, int, int]:
    """What is wrong, in plain words, with a hint, and its line and column: from the parser's error and the text."""
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
    line, column = marks.get(index) or line_column(text, index, "\n")
    return message, hint, line, column


def line_column(text: str | bytes, index: int, newline: str | bytes) -> tuple[int, int]:
    """1-based line and column of `index`."""
    return text.count(newline, 0, index) + 1, index - (text.rfind(newline, 0, index) + 1) + 1


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
            # Only this one: another may be part of a value (a description in Japanese); the next run shows the next.
            if not char.isspace():
                hint = f"replace it with '{ascii_char}'"
                return f"{name} '{char}' (U+{ord(char):04X}) where YAML expects '{ascii_char}'", hint, index
            if content[: index - start].strip():
                hint = "replace it with a plain space"
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
    # Not "use single quotes": the value's other escapes (\n, \") would then be read as plain text.
    hint = f"to keep the backslash, write it twice: '\\{escape}'"
    return f"'{escape}' is not a valid escape in a double-quoted value", hint, backslash


def _comment_in_flow(e: _Syntax) -> _Found | None:
    """A '[' or '{' left open because ' #' in a value started a comment, which hides its closing bracket."""
    if e.opened is None or e.text[e.opened : e.opened + 1] not in _CLOSERS:
        return None
    end = _line_end(e.text, e.opened)
    comment = re.search(r"\s#", e.text[e.opened : end])
    if comment is None or _CLOSERS[e.text[e.opened]] not in e.text[e.opened + comment.end() : end]:
        return None
    at = e.opened + comment.start() + 1
    start = max(e.text.rfind(",", e.opened, at), e.text.rfind(": ", e.opened, at) + 1, e.opened) + 1
    stop = re.search(r"[,\]}]", e.text[at:end])
    value = e.text[start : at + stop.start() if stop else end].strip()
    message = "' #' starts a comment, which hides the rest of the line, the closing bracket too"
    return message, f"quote the value that holds the '#': {_quoted(_clip(value, 80))}", at


def _colon_in_flow_entry(e: _Syntax) -> _Found | None:
    """A second ': ' in one entry of a '{...}': a ',' left out before a key, or a value holding ': '."""
    if e.opened is None or e.text[e.opened : e.opened + 1] != "{" or e.text[e.at : e.at + 1] != ":":
        return None
    if "\n" in e.text[e.opened : e.at]:  # a '{' left open above: `_unclosed_flow`
        return None
    start = max(e.text.rfind(",", e.opened, e.at), e.opened) + 1
    stop = re.search(r"[,\]}\n]", e.text[e.at :])
    key, colon, value = e.text[start : e.at + stop.start() if stop else len(e.text)].strip().partition(": ")
    if not colon or ": " not in value:
        return None
    column = e.opened - _line_start(e.text, e.opened) + 1
    message = f"a second ': ' in one entry of the mapping opened in column {column}"
    quote = f"quote the value if ': ' is part of it: {_clip(key)}: {_quoted(_clip(value, 60))}"
    words, rest = value.split(": ", 1)
    if " " not in words:
        return message, quote, e.at
    before, last = words.rsplit(" ", 1)
    split = f"{_clip(key)}: {_clip(before)}, {_clip(last)}: {_clip(rest)}"
    return message, f"if '{_clip(last)}' is a key, put ', ' before it ({split}); {quote}", e.at


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
    if glued and value_like(entry):
        hint = f"put it after the key it belongs to, quoted: <key>: {_quoted(_clip(entry, 80))}"
        return f"'{_clip(entry)}' stands where a key is expected, and holds no ': '", hint, index
    if glued:
        return f"'{_clip(entry)}' has no space after ':'", f"write '{glued[1]}: {_clip(glued[2])}'", index
    above = _previous_line(text, index)
    continued = _shape(text, above) if above is not None and " " in entry and ":" not in entry else None
    if continued and continued[2] and " " in continued[3].strip() and continued[3].strip()[0] not in "\"'[{|>":
        column, key = continued[1], _clip(continued[2])
        if index - _line_start(text, index) <= column:  # not indented under the value: it cannot continue it
            number = text.count("\n", 0, above) + 1
            first, _, rest = entry.partition(" ")
            hint = f"if it continues the value of '{key}' (line {number}), indent it further than '{key}'; if not, "
            return (
                f"'{_clip(entry)}' is not a 'key: value' pair",
                hint + f"write '{_clip(first)}: {_clip(rest)}'",
                index,
            )
    key, _, value = entry.partition(" ")
    if re.match(r"-[^\s-]", key):
        hint = f"write '- {_clip(entry[1:])}' for a list item, or '{_clip(key)}: <value>'"
    elif value.strip():
        hint = f"write '{_clip(key)}: {_clip(value.strip())}'"
    else:
        hint = f"write '{_clip(key)}: <value>', or remove the line"
    return f"'{_clip(entry)}' is not a 'key: value' pair: the ':' is missing", hint, index


def _glued_flow_colon(e: _Syntax) -> _Found | None:
    """'a:b' in a '{...}' or '[...]': one plain value in YAML 1.2, which libyaml refuses. Only reached when the YAML 1.2
    parser does not read the file (over `policyc.language.load.CONFORMING_MAX_CHARS`, or refused earlier in the
    text)."""
    if "unexpected ':'" not in e.problem or e.opened is None:
        return None
    entry = re.match(r"[^\s,\[\]{}]*", e.text[e.opened :]).group()
    key, _, value = entry.partition(":")
    message = f"'{_clip(entry)}' holds a ':' inside '{{...}}' or '[...]', valid YAML 1.2 that libyaml refuses"
    hint = f"quote it: {_quoted(_clip(entry, 80))}"
    if not value_like(entry):
        hint += f"; or, if '{_clip(key)}' is a key, write '{_clip(key)}: {_clip(value)}'"
    return message, hint, e.opened


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
        return _quote_inside(e.text, start, e.at, before[-1])
    if before.endswith(("]", "}")):
        hint = "remove it, or put it on a line of its own if it is another key"
        return f"text follows the '{before[-1]}' that ends this value", hint, e.at
    if before:
        return None
    return _unaligned(e, start, char == "-")


def _unaligned(e: _Syntax, start: int, is_dash: bool) -> _Found | None:
    """A key or list item first on its line, in a column no open mapping or list above it expects."""
    column = e.at - start
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


def _quote_inside(text: str, start: int, at: int, quote: str) -> _Found:
    """Text after the closing `quote` of a value: when the line's value ends with that quote too, a quote mark inside
    the value closed it early, and the hint writes the value with that mark escaped."""
    _, _, key, value = _shape(text, start)
    value = value.strip()
    if key is None or len(value) < 2 or value[0] != quote or value[-1] != quote:
        return "text follows the closing quote of this value", "put the whole value inside the quotes", at
    inner = value[1:-1]
    fixed = "'" + inner.replace("'", "''") + "'" if quote == "'" else '"' + re.sub(r'(?<!\\)"', r'\\"', inner) + '"'
    how = "a ' inside single quotes is written ''" if quote == "'" else 'a " inside double quotes is written \\"'
    message = f"the {quote} inside the value of '{_clip(key)}' closes it early: text follows"
    return message, f"write {_clip(key)}: {_clip(fixed, 80)} ({how})", at


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
        # Only reached when the YAML 1.2 parser does not read the file: YAML 1.2 allows it (an alias takes the latest).
        hint = f"rename this one, and the aliases after it that mean this value ('*{name[1:]}')"
        return f"the anchor '{name}' is already defined on line {first}, which libyaml refuses", hint, e.at
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
    _comment_in_flow,
    _colon_in_flow_entry,
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


def value_like(text: str) -> bool:
    """A time (7-00:00:00, 12:30) or a URL: a value with ':' in it, not a key glued to its value."""
    return bool(re.match(r"[0-9][0-9-]*:[0-9]|[A-Za-z][A-Za-z0-9+.-]*://", text))


def _clip(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _quoted(value: str) -> str:
    return f'"{value}"' if '"' not in value and "\\" not in value else "'" + value.replace("'", "''") + "'"

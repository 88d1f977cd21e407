"""Loading YAML: positions, YAML 1.2 scalars, and every way a file can be unfit, as located diagnostics."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

import policyc.language.load as load_module
from policyc.diagnostics import PolicyError
from policyc.language.load import MAX_NODES, load_bytes


def load(text: str):
    return load_bytes(text.encode(), "p.yaml")


def codes(doc) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.column) for d in doc.diagnostics]


def fatal(raw: bytes) -> list[tuple[str, int, int]]:
    with pytest.raises(PolicyError) as e:
        load_bytes(raw, "p.yaml")
    return [(d.code, d.line, d.column) for d in e.value.diagnostics]


def test_positions_of_keys_and_values() -> None:
    doc = load("a:\n  b: [x, {c: 1}]\n")
    assert doc.data == {"a": {"b": ["x", {"c": 1}]}}
    assert doc.source_map.locate(("a", "b"), at_key=True) == (2, 3)
    assert doc.source_map.locate(("a", "b")) == (2, 6)
    assert doc.source_map.locate(("a", "b", 1, "c")) == (2, 14)
    assert doc.source_map.locate(("a", "b", 1, "missing")) == (2, 10)  # nearest ancestor


def test_yaml_12_scalars() -> None:
    doc = load("a: [yes, on, 0123, 0x1f, 1_000, 1.5, null, '8', true]\n")
    assert doc.data["a"] == ["yes", "on", 123, 31, 1000, 1.5, None, "8", True]


def test_every_duplicate_key_is_reported() -> None:
    doc = load("a: 1\nb: 2\na: 3\nb: 4\n")
    assert codes(doc) == [("PC003", 3, 1), ("PC003", 4, 1)]
    assert doc.data == {"a": 1, "b": 2}
    assert "line 1" in doc.diagnostics[0].hint


def test_tags_and_non_string_keys_are_refused() -> None:
    doc = load("a: !!python/object:os.system x\nb: !custom {x: 1}\n1: one\nd: 2001-12-14\n")
    assert codes(doc) == [("PC006", 1, 4), ("PC006", 2, 4), ("PC006", 3, 1), ("PC006", 4, 4)]


def test_merge_keys_are_supported() -> None:
    doc = load("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n")
    assert doc.data["c"] == {"x": 1, "y": 3}
    assert not doc.diagnostics


def test_syntax_error_is_located_with_a_hint_for_tabs() -> None:
    assert fatal(b"a:\n\tb: 1\n") == [("PC002", 2, 1)]
    with pytest.raises(PolicyError) as e:
        load_bytes(b"a:\n\tb: 1\n", "p.yaml")
    assert "spaces" in e.value.diagnostics[0].hint


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"", "PC005"),
        (b"# only a comment\n", "PC005"),
        (b"a: \xff\xfe\n", "PC008"),
        (b"a: b\x00\n", "PC008"),
    ],
)
def test_unusable_files(raw: bytes, code: str) -> None:
    assert fatal(raw)[0][0] == code


def test_several_documents() -> None:
    doc = load("a: 1\n---\nb: 2\n")
    assert codes(doc) == [("PC004", 2, 1)]  # the "---" that starts it
    assert doc.data == {"a": 1}


def test_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    found = fatal("\n".join(lines).encode())
    assert found[0][0] == "PC007"
    assert MAX_NODES < 10**9


@pytest.mark.parametrize("depth", [100, 100_000, 2_000_000])
def test_deep_flow_nesting_is_refused_before_parsing(depth: int) -> None:
    # located at the 65th opening bracket
    assert fatal(("a: " + "[" * depth + "]" * depth + "\n").encode()) == [("PC007", 1, 68)]


def test_deep_block_nesting_is_refused() -> None:
    assert fatal(("".join(" " * i + "k:\n" for i in range(200)) + " " * 200 + "x\n").encode()) == [("PC007", 66, 66)]


SYNTAX_ERRORS = [
    # (YAML text, line and column, what the message says, what the hint says)
    pytest.param(
        "a:\n  b: 1\n   c: 2\n",
        (3, 4),
        "'c' is indented more than 'b' on line 2, so YAML reads it as part of that value",
        "start it in column 3, like 'b'",
        id="key-indented-too-far",
    ),
    pytest.param(
        "spec:\n  domain: x\n gpuTiers: 1\n",
        (3, 2),
        "'gpuTiers' in column 2 is not aligned with anything above it",
        "move it to column 3 (like 'domain' on line 2) or column 1 (like 'spec' on line 1)",
        id="key-indented-too-little",
    ),
    pytest.param(
        "pools:\n  - name: a\n    usage: x\n  nodes: 1\n",
        (4, 3),
        "'nodes' in column 3 is not aligned with anything above it",
        "move it to column 5 (like 'usage' on line 3) or column 1 (like 'pools' on line 1)",
        id="key-at-the-column-of-a-dash",
    ),
    pytest.param(
        "pools:\n - name: a\n    usage: x\n",
        (3, 5),
        "'usage' is indented more than 'name' on line 2",
        "start it in column 4, like 'name', or indent line 2 by 1 to move 'name' to column 5",
        id="list-item-indented-too-little",
    ),
    pytest.param(
        "a:\n  - x\n - y\n",
        (3, 2),
        "this list item ('-') in column 2 is not aligned with anything above it",
        "move it to column 3 (like the '-' on line 2)",
        id="list-item-misaligned",
    ),
    pytest.param(
        "a:\n  b: 1\n  - y\n",
        (3, 3),
        "a list item ('-') among the keys of a mapping, below 'b' on line 2",
        "if the list belongs to 'b', leave nothing after 'b:' and indent the items under it",
        id="list-item-among-keys",
    ),
    pytest.param(
        "items:\n  -name: a\n    x: 1\n",
        (2, 3),
        "'-name' needs a space after '-' to start a list item",
        "write '- name:'",
        id="dash-without-space",
    ),
    pytest.param(
        "a:\n  b: 1\n  usage training\n  c: 2\n",
        (3, 3),
        "'usage training' is not a 'key: value' pair: the ':' is missing",
        "write 'usage: training'",
        id="missing-colon",
    ),
    pytest.param(
        "a:\n  usage\n  c: 2\n",
        (2, 3),
        "'usage' is not a 'key: value' pair: the ':' is missing",
        "write 'usage: <value>', or remove the line",
        id="key-without-value",
    ),
    pytest.param(
        "a:\n  usage:training\n  c: 2\n",
        (2, 3),
        "'usage:training' has no space after ':'",
        "write 'usage: training'",
        id="no-space-after-colon",
    ),
    pytest.param(
        "a:\n\tb: 1\n", (2, 1), "a tab character indents this line", "indent with spaces", id="tab-indentation"
    ),
    pytest.param(
        "a:\n  -\tb: 1\n",
        (2, 4),
        "a tab character where YAML allows only spaces",
        "replace the tab with a space",
        id="tab-after-dash",
    ),
    pytest.param(
        'a:\n  v: "1.33\n  d: x\n  n: ["y"]\n',
        (2, 6),
        'the value opened here with " has no closing "',
        'add " at the end of the value',
        id="unclosed-double-quote",
    ),
    pytest.param(
        "a:\n  b: 'x\n  c: 2\n",
        (2, 6),
        "the value opened here with ' has no closing '",
        "add ' at the end of the value",
        id="unclosed-single-quote",
    ),
    pytest.param(
        'a: "x\n---\nb: 1\n',
        (1, 4),
        'the value opened here with " has no closing "',
        'add " at the end of the value',
        id="unclosed-quote-before-document-marker",
    ),
    pytest.param(
        " a: 1\nb: 2\n",
        (2, 1),
        "'b' in column 1 is not aligned with anything above it",
        "move it to column 2 (like 'a' on line 1)",
        id="first-key-indented",
    ),
    pytest.param(
        "a:\n  b: {x: 1, y: 2\n  c: 2\n",
        (2, 6),
        "the '{' that starts this mapping is never closed",
        "add '}' after its last item",
        id="unclosed-flow-mapping",
    ),
    pytest.param(
        "a: [x, y\nb: 1\n",
        (1, 4),
        "the '[' that starts this list is never closed",
        "add ']' after its last item",
        id="unclosed-flow-sequence",
    ),
    pytest.param(
        "a: {x: 1 y: 2}\n",
        (1, 11),
        "a second ': ' in one entry of the mapping opened in column 4",
        "if 'y' is a key, put ', ' before it (x: 1, y: 2); quote the value if ': ' is part of it: x: \"1 y: 2\"",
        id="flow-items-without-comma",
    ),
    pytest.param(
        'a: {x: "1" y: 2}\n',
        (1, 12),
        "expected ',' or '}' here, in the mapping opened in column 4",
        "separate its items with ', ' and end it with '}'",
        id="flow-items-without-comma-after-a-quoted-value",
    ),
    pytest.param(
        "a: {b: c: d}\n",
        (1, 9),
        "a second ': ' in one entry of the mapping",
        "quote the value if ': ' is part of it: b: \"c: d\"",
        id="colon-space-in-flow-value",
    ),
    pytest.param(
        "a: {note: see #5}\nb: 1\n",
        (1, 15),
        "' #' starts a comment, which hides the rest of the line, the closing bracket too",
        "quote the value that holds the '#': \"see #5\"",
        id="comment-in-flow-mapping",
    ),
    pytest.param(
        "a: [x, y #z]\n",
        (1, 10),
        "' #' starts a comment",
        "quote the value that holds the '#': \"y #z\"",
        id="comment-in-flow-sequence",
    ),
    pytest.param("a: [x]]\n", (1, 7), "']' closes nothing", "remove it", id="stray-closing-bracket"),
    pytest.param(
        "a: {x: 1]\n", (1, 9), "']' cannot close the '{' opened in column 4", "end it with '}'", id="wrong-closer"
    ),
    pytest.param(
        'a: {"b": [}\n', (1, 11), "'}' where a value is expected", "'[' ends with ']'", id="closer-for-a-value"
    ),
    pytest.param(
        "a: [ml],\nb: 1\n",
        (1, 8),
        "text follows the ']' that ends this value",
        "remove it, or put it on a line of its own",
        id="text-after-flow-list",
    ),
    pytest.param(
        "a:\n  ns: - ml\n",
        (2, 7),
        "a list item ('-') on the same line as its key 'ns'",
        "put '- ml' on a line of its own, indented under 'ns:'",
        id="list-item-on-key-line",
    ),
    pytest.param(
        "a:\n  url: http://host: 8080/x\n",
        (2, 19),
        "the unquoted value of 'url' contains ': ', which YAML reads as another key",
        'quote the whole value: url: "http://host: 8080/x"',
        id="colon-in-plain-value",
    ),
    pytest.param(
        "metadata:\n  name: a\nspec:\n  domain\uff1a x.org\n  tiers: []\n",
        (4, 9),
        "full-width colon '\uff1a' (U+FF1A) where YAML expects ':'",
        "replace it with ':'",
        id="full-width-colon",
    ),
    pytest.param(
        "a:\n  b: 1\n  gpus\uff1a 8\n",
        (3, 7),
        "full-width colon '\uff1a' (U+FF1A)",
        "with ':'",
        id="full-width-colon-on-the-last-line",
    ),
    pytest.param(
        "a: {x: 1\uff0c y: 2}\n",
        (1, 9),
        "full-width comma '\uff0c' (U+FF0C) where YAML expects ','",
        "with ','",
        id="full-width-comma",
    ),
    pytest.param(
        "a:\n  b:\u30001\n  c: 2\n",
        (2, 5),
        "full-width space (U+3000) where YAML expects a plain space",
        "replace it with a plain space",
        id="full-width-space-after-colon",
    ),
    pytest.param(
        "a:\n  b: 1\n\u3000\u3000c: 2\n  d: 3\n",
        (3, 1),
        "full-width space (U+3000)",
        "indent with plain spaces only",
        id="full-width-space-indentation",
    ),
    pytest.param(
        "a:\n  note: チーム、A\n  b: c: d\n",
        (3, 7),
        "the unquoted value of 'b' contains ': '",
        'quote the whole value: b: "c: d"',
        id="innocent-full-width-character-nearby",
    ),
    pytest.param('a: "x" y\n', (1, 8), "text follows the closing quote", "inside the quotes", id="text-after-quote"),
    pytest.param(
        "a: 'it's here'\n",
        (1, 8),
        "the ' inside the value of 'a' closes it early",
        "write a: 'it''s here' (a ' inside single quotes is written '')",
        id="single-quote-inside-single-quotes",
    ),
    pytest.param(
        'a: "say "hi" now"\n',
        (1, 10),
        "the \" inside the value of 'a' closes it early",
        'write a: "say \\"hi\\" now"',
        id="double-quote-inside-double-quotes",
    ),
    pytest.param(
        "slurm:\n  maxTime:\n  7-00:00:00\n",
        (3, 3),
        "'7-00:00:00' stands where a key is expected",
        'put it after the key it belongs to, quoted: <key>: "7-00:00:00"',
        id="time-where-a-key-is-expected",
    ),
    pytest.param(
        "description: Large memory cards for\npre-training and fine tunes\nb: 1\n",
        (2, 1),
        "'pre-training and fine tunes' is not a 'key: value' pair",
        "if it continues the value of 'description' (line 1), indent it further than 'description'; if not, write",
        id="continuation-line-not-indented",
    ),
    pytest.param("a: @x\n", (1, 4), "an unquoted value cannot start with '@'", 'quote it: "@x"', id="reserved-at"),
    pytest.param("a: \x07\n", (1, 4), "the character U+0007 is not allowed", "delete it", id="control-character"),
    pytest.param("a: *\n", (1, 5), "this is not valid YAML (", "check the indentation", id="anything-else"),
]


@pytest.mark.parametrize("parser", ["libyaml", "pure-python"])
@pytest.mark.parametrize(("text", "position", "message", "hint"), SYNTAX_ERRORS)
def test_syntax_errors_are_explained(monkeypatch, parser, text, position, message, hint) -> None:
    if parser == "pure-python":  # as on PyPy, where ruamel.yaml words its errors differently
        pure = load_module._yaml
        monkeypatch.setattr(load_module, "_yaml", lambda pure_python=False: pure(pure_python=True))
    with pytest.raises(PolicyError) as e:
        load_bytes(text.encode(), "p.yaml")
    [found] = e.value.diagnostics
    assert (found.code, found.line, found.column) == ("PC002", *position)
    assert message in found.message
    assert hint in found.hint
    assert "\n" not in found.message + found.hint and len(found.message + found.hint) < 200


LIBYAML_SYNTAX_ERRORS = [  # ruamel.yaml's own parser reads these differently, or only warns
    pytest.param(
        'a: "C:\\q\\n"\n',
        (1, 7),
        "'\\q' is not a valid escape in a double-quoted value",
        "to keep the backslash, write it twice: '\\\\q'",  # not "use single quotes", which would change the \n
        id="invalid-escape",
    ),
]


@pytest.mark.skipif(YAML(typ="safe").Parser.__name__ != "CParser", reason="libyaml (ruamel.yaml.clib) is not installed")
@pytest.mark.parametrize(("text", "position", "message", "hint"), LIBYAML_SYNTAX_ERRORS)
def test_syntax_errors_only_libyaml_reports_are_explained(text, position, message, hint) -> None:
    with pytest.raises(PolicyError) as e:
        load_bytes(text.encode(), "p.yaml")
    [found] = e.value.diagnostics
    assert (found.code, found.line, found.column) == ("PC002", *position)
    assert message in found.message
    assert hint in found.hint

"""Loading YAML: positions, YAML 1.2 scalars, and every way a file can be unfit, as located diagnostics."""

from __future__ import annotations

import pytest

from policyc.diagnostics import PolicyError
from policyc.load import MAX_NODES, load_bytes


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

"""Every hint works when followed: each invalid case carries the fix its diagnostics tell the user to make.

Right after its ``# expect:`` line a case in tests/cases/invalid/ has one or more lines

    # fix: <old text> => <new text>

each applied in order as a literal replacement of the single occurrence of <old text> in the case's body (the
file without its leading ``# expect:``/``# fix:`` lines and its ``# output`` block). ``\\n`` in either side stands
for a newline, ``\\t`` for a tab and ``\\xNN`` for the byte NN (a file that is not UTF-8 has bytes no text can
name); an empty <new text> deletes. After all fixes the policy must build, with no error and none of the codes the
case expects (nor any code the unfixed case did not already have). A case whose fix is not mechanical says instead

    # fix: none — <why>
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from policyc.codes import Severity
from policyc.compiler import compile_file
from policyc.output.formats import render_text
from tests.test_invalid_cases import CASES, expected_codes, read_case

FIX = "# fix: "
NONE = re.compile(r"# fix: none — \S")
ESCAPE = re.compile(r"\\(n|t|x[0-9a-fA-F]{2})")


@dataclass(frozen=True)
class Fix:
    old: str
    new: str


def unescape(text: str) -> str:
    r"""A side of a fix line as text: ``\n``, ``\t`` and ``\xNN`` (a byte, as the body's undecodable bytes read)."""

    def one(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape == "n":
            return "\n"
        if escape == "t":
            return "\t"
        byte = int(escape[1:], 16)
        return chr(byte) if byte < 0x80 else chr(0xDC00 + byte)

    return ESCAPE.sub(one, text)


def header_and_body(case: Path) -> tuple[list[str], str]:
    """The case's leading ``# expect:``/``# fix:`` lines and its body, the policy below them up to its ``# output``
    block, undecodable bytes kept as surrogates."""
    lines = read_case(case).policy.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
    header = 0
    while header < len(lines) and lines[header].startswith(("# expect:", FIX)):
        header += 1
    return [line.rstrip("\r\n") for line in lines[:header]], "".join(lines[header:])


def parse_fixes(case: Path, header: list[str]) -> list[Fix] | None:
    """The case's fixes in order; None for a case that says its fix is not mechanical."""
    lines = [line for line in header if line.startswith(FIX)]
    assert lines, f"{case.name}: no '# fix: <old> => <new>' line (or '# fix: none — <why>') after '# expect:'"
    if any(NONE.match(line) for line in lines):
        assert len(lines) == 1, f"{case.name}: '# fix: none' stands alone"
        return None
    fixes = []
    for line in lines:
        old, arrow, new = line.removeprefix(FIX).partition(" =>")
        assert arrow and new[:1] in ("", " ") and old, f"{case.name}: {line!r} is not '# fix: <old> => <new>'"
        fixes.append(Fix(unescape(old), unescape(new[1:])))
    return fixes


def apply_fixes(case: Path, body: str, fixes: list[Fix]) -> str:
    for fix in fixes:
        count = body.count(fix.old)
        assert count == 1, f"{case.name}: {fix.old!r} occurs {count} times in the body, not once"
        body = body.replace(fix.old, fix.new)
    return body


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_following_the_hint_fixes_the_case(case: Path, tmp_path: Path) -> None:
    header, body = header_and_body(case)
    fixes = parse_fixes(case, header)
    if fixes is None:
        return
    before = {d.code for d in compile_file(case, case.name).report.diagnostics}
    fixed = tmp_path / case.name
    fixed.write_bytes(apply_fixes(case, body, fixes).encode("utf-8", errors="surrogateescape"))
    result = compile_file(fixed, case.name)
    codes = {d.code for d in result.report.diagnostics}
    errors = {d.code for d in result.report.diagnostics if d.severity is Severity.ERROR}
    unwanted = errors | (codes & set(expected_codes(case))) | (codes - before)
    assert not unwanted, f"{case.name} after its fixes:\n{render_text(result.report)}"
    assert result.ok and result.files, f"{case.name} after its fixes builds nothing"


def test_fix_lines_are_read_as_written(tmp_path: Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_bytes(
        b"# expect: PC008\n# fix: a\\tb => a b\n# fix: M\\xfcller => M\xc3\xbcller\n# fix: x:\\n  y => \n"
        b"name: M\xfcller\nk: a\tb\nx:\n  y: 1\n"
    )
    header, body = header_and_body(case)
    fixes = parse_fixes(case, header)
    assert fixes == [Fix("a\tb", "a b"), Fix("M\udcfcller", "Müller"), Fix("x:\n  y", "")]
    assert apply_fixes(case, body, fixes) == "name: Müller\nk: a b\n: 1\n"


def test_a_case_without_fix_lines_fails(tmp_path: Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_text("# expect: PC101\nspec: {}\n")
    with pytest.raises(AssertionError, match="no '# fix: <old> => <new>' line"):
        parse_fixes(case, header_and_body(case)[0])


def test_a_fix_whose_old_text_is_not_unique_fails(tmp_path: Path) -> None:
    case = tmp_path / "case.yaml"
    with pytest.raises(AssertionError, match="occurs 2 times"):
        apply_fixes(case, "gpu: 8\ngpu: 8\n", [Fix("gpu: 8", "gpu: 4")])


def test_a_fix_is_not_matched_in_the_output_block(tmp_path: Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_bytes(
        b"# expect: PC101\n# fix: usgae: => usage:\nspec:\n  usgae: x\n\n# output\n"
        b"# case.yaml:4:3: error PC101: unknown field 'usgae' in 'spec'; did you mean 'usage:'? usgae:\n"
    )
    header, body = header_and_body(case)
    assert header == ["# expect: PC101", "# fix: usgae: => usage:"]
    assert body == "spec:\n  usgae: x\n"
    assert apply_fixes(case, body, parse_fixes(case, header)) == "spec:\n  usage: x\n"

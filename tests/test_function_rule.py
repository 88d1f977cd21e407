"""No function in `policyc/` longer than 60 lines or of cyclomatic complexity above 20, unless its body says why it
must be: a comment starting ``# long:`` or ``# complex:`` with the reason (issue 25, point 2).

Complexity is radon's (McCabe's, counting each boolean operator and comprehension as radon does; `radon cc -s
policyc` shows it). Length is the lines of the function's body without its docstring, nested functions included;
a nested function is measured on its own too, and only a comment in its own body excuses it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest
from radon.visitors import ComplexityVisitor

from tests.conftest import REPO

PACKAGE = REPO / "policyc"
MAX_LINES = 60
MAX_COMPLEXITY = 20
MIN_REASON_WORDS = 4
"""A reason, not a label: '# complex: one branch per quota scope, as the API server's evaluator has them'."""

BEING_REWRITTEN: dict[str, str] = {}
"""Files and folders the rule skips while another branch rewrites them: the integrator empties this after merging."""


@dataclass(frozen=True)
class Function:
    name: str
    line: int
    lines: int
    complexity: int
    reasons: dict[str, str]
    """'long' / 'complex' -> the reason its body's comment gives."""


def functions(source: str) -> list[Function]:
    """Every function and method of `source`, nested ones included, measured."""
    tree = ast.parse(source)
    comments = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    lines = source.splitlines()
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        assert node.end_lineno is not None
        if _docstring(node) and len(node.body) > 1:
            start = (node.body[0].end_lineno or node.body[0].lineno) + 1
        else:  # the first statement, and the lines of comment above it
            start = node.body[0].lineno
            while start - 1 > node.lineno and lines[start - 2].lstrip().startswith("#"):
                start -= 1
        nested = [
            (inner.lineno, inner.end_lineno)
            for inner in ast.walk(node)
            if inner is not node and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        own = [
            text
            for line, text in comments
            if node.lineno < line <= node.end_lineno and not any(a <= line <= b for a, b in nested)
        ]
        out.append(
            Function(
                node.name,
                node.lineno,
                node.end_lineno - start + 1,
                _complexity(node),
                _reasons(own),
            )
        )
    return out


def _complexity(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """radon's cyclomatic complexity of the function (its nested functions not included, as radon counts)."""
    visitor = ComplexityVisitor()
    visitor.visit(node)
    return visitor.functions[0].complexity


def _docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = node.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _reasons(comments: list[str]) -> dict[str, str]:
    out = {}
    for comment in comments:
        text = comment.lstrip("#").strip()
        for label in ("long", "complex"):
            if text.startswith(label + ":"):
                out[label] = text[len(label) + 1 :].strip()
    return out


def breaches(source: str) -> list[str]:
    """What `source` breaks of the rule: each function too long or too complex without a reason for it."""
    out = []
    for f in functions(source):
        for label, measured, limit, unit in (
            ("long", f.lines, MAX_LINES, "lines"),
            ("complex", f.complexity, MAX_COMPLEXITY, "complexity"),
        ):
            if measured <= limit:
                continue
            reason = f.reasons.get(label)
            if reason is None:
                out.append(f"{f.name} (line {f.line}): {unit} {measured} > {limit}, and no '# {label}:' says why")
            elif len(reason.split()) < MIN_REASON_WORDS:
                out.append(f"{f.name} (line {f.line}): '# {label}: {reason}' is a label, not a reason")
    return out


def _skipped(path: Path) -> bool:
    relative = path.relative_to(REPO).as_posix()
    return any(relative == entry or (entry.endswith("/") and relative.startswith(entry)) for entry in BEING_REWRITTEN)


MODULES = [p for p in sorted(PACKAGE.rglob("*.py")) if not _skipped(p)]


@pytest.mark.parametrize("path", MODULES, ids=[p.relative_to(REPO).as_posix() for p in MODULES])
def test_no_function_too_long_or_too_complex_without_its_reason(path: Path) -> None:
    assert breaches(path.read_text(encoding="utf-8")) == []


def test_the_files_skipped_exist() -> None:
    """An entry of the allow-list that names nothing is a typo, or one the integrator forgot to remove."""
    for entry in BEING_REWRITTEN:
        assert (REPO / entry).exists(), entry


def _function(lines: int, branches: int = 0, comment: str = "") -> str:
    """A function of `lines` body lines, after a docstring, of which `branches` are `if`s (complexity 1 + branches)."""
    body = [f"    if x == {i}:  # {i}\n        x += 1\n" for i in range(branches)]
    filler = lines - 2 * branches - (1 if comment else 0)
    return (
        'def f(x):\n    """A docstring of\n    two lines."""\n'
        + (f"    {comment}\n" if comment else "")
        + "".join(body)
        + "    x += 1\n" * filler
    )


def test_the_measures() -> None:
    """60 lines pass and 61 do not (the docstring does not count); complexity 20 passes and 21 does not (1 for the
    function, 1 per if); a reason excuses, a bare label does not, nor a reason in a nested function."""
    assert breaches(_function(60)) == []
    assert breaches(_function(61)) == ["f (line 1): lines 61 > 60, and no '# long:' says why"]
    assert breaches(_function(30, branches=19)) == []
    assert breaches(_function(40, branches=20)) == ["f (line 1): complexity 21 > 20, and no '# complex:' says why"]
    reason = "# long: one line per field of the API object, which has that many"
    assert breaches(_function(61, comment=reason)) == []
    assert breaches(_function(61, comment="# long: table")) == ["f (line 1): '# long: table' is a label, not a reason"]
    nested = "def g():\n    def f(x):\n        " + reason + "\n        return x\n" + "    y = 1\n" * 60
    assert breaches(nested) == ["g (line 1): lines 63 > 60, and no '# long:' says why"]

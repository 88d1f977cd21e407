"""`policyc codes`: the catalogue of diagnostic codes, and one code's explanation, example and fix.

The examples and fixes are package data (``code_examples.json``, written by ``tools/gen_code_examples.py`` from the
invalid cases of the tests). The Markdown form of the catalogue is the reference in ``docs/codes/``: an index and a
page per code, written by `write_pages` (the documentation site's navigation lists them by `nav`). Nothing here
imports the compiler: the command starts as fast as the catalogue loads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from policyc import codes
from policyc.codes import Rule
from policyc.diagnostics import closest

FORMATS = ("text", "json", "markdown")
EXAMPLES = Path(__file__).with_name("code_examples.json")


class UnknownName(ValueError):
    """A code or family the catalogue does not hold; its message is one line, with a did-you-mean."""


@cache
def _examples() -> dict[str, dict]:
    return json.loads(EXAMPLES.read_text(encoding="utf-8"))


def find(text: str) -> Rule:
    """The rule `text` names (its code, identity or name, in any case)."""
    found = codes.lookup(text)
    if found is None:
        names = [n for r in codes.RULES.values() for n in (str(r.code), r.id, r.name)]
        raise UnknownName(_unknown("code", text, names))
    return found


def rules_of(family: str | None) -> list[Rule]:
    """The catalogue's rules, in its order; only `family`'s when given."""
    if family is not None and family not in codes.FAMILIES:
        raise UnknownName(_unknown("family", family, codes.FAMILIES))
    return [r for r in codes.RULES.values() if family is None or r.family == family]


def _unknown(what: str, text: str, known: Iterable[str]) -> str:
    match = closest(text, known)
    return f"no {what} '{text}' in the catalogue" + (f"; did you mean '{match}'?" if match else "")


def render_list(rules: list[Rule], fmt: str) -> str:
    """The rules as a table (text), a JSON list, or the Markdown reference's index."""
    if fmt == "json":
        return json.dumps([_fields(r) for r in rules], indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return _index(rules)
    code = max(len(str(r.code)) for r in rules)
    ident = max(len(r.id) for r in rules)
    return "".join(f"{r.code:<{code}}  {r.id:<{ident}}  {r.severity:<7}  {r.summary}\n" for r in rules)


def render_one(rule: Rule, fmt: str) -> str:
    """One rule: what it means, an example that triggers it and the fix, as text, JSON or Markdown."""
    example = _examples().get(str(rule.code), {})
    if fmt == "json":
        return json.dumps({**_fields(rule), "example": example}, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return _page(rule, example)
    out = [f"{_title(rule)}: {rule.id + ', ' if rule.numbered else ''}{rule.severity}", "", rule.summary, ""]
    for heading, lines, language in _parts(example):
        if language:
            out += [heading, "", *(f"    {line}" for line in lines), ""]
        else:
            out += [" ".join([heading, *lines]).strip(), ""]
    return "\n".join(out)


def _fields(rule: Rule) -> dict[str, str]:
    return {
        "code": str(rule.code),
        "id": rule.id,
        "name": rule.name,
        "family": rule.family,
        "severity": str(rule.severity),
        "summary": rule.summary,
    }


def _title(rule: Rule) -> str:
    """``PC414 guarantee-exceeds-capacity``; a rule without a number is its identity alone."""
    return f"{rule.code} {rule.name}" if rule.numbered else rule.id


def _parts(example: dict) -> list[tuple[str, list[str], str | None]]:
    """The explanation after the summary, as (heading, lines, the language of the lines if they are code, else None:
    then heading and lines are one paragraph)."""
    if not example:  # a rule added since tools/gen_code_examples.py last ran (a test sees to it before a release)
        return []
    if "note" in example:
        return [("", [example["note"]], None)]
    parts = [
        (f"Example: {example['about']}", example["policy"], "yaml"),
        ("policyc says:", example["says"], "text"),
    ]
    if "fix" in example:
        parts.append(("The fix its hint gives:", example["fix"], "diff"))
    else:
        parts.append(("No mechanical fix:", [example["manual"]], None))
    parts.append(("The whole policy:", [f"`{example['case']}` in policyc's repository."], None))
    return parts


def write_pages(rules: list[Rule], directory: Path) -> list[Path]:
    """The Markdown reference as files: ``index.md`` and a page per rule (`page_name`); the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    pages = {"index.md": render_list(rules, "markdown")} | {page_name(r): render_one(r, "markdown") for r in rules}
    for name, text in pages.items():
        (directory / name).write_text(text, encoding="utf-8")
    return [directory / name for name in pages]


def page_name(rule: Rule) -> str:
    """The file of a rule's page, its title in lower case: ``pc414-guarantee-exceeds-capacity.md``, or
    ``meaning-guarantee-waits-for-scale-up.md`` for a rule without a number."""
    return _title(rule).lower().replace("/", "-").replace(" ", "-") + ".md"


def nav(directory: str) -> list[dict[str, list[str]]]:
    """The site's navigation of the code pages under `directory` (relative to docs/): a section per family."""
    sections: dict[str, list[str]] = {}
    for r in codes.RULES.values():
        sections.setdefault(r.family, []).append(f"{directory}/{page_name(r)}")
    return [{family: sections[family]} for family in codes.FAMILIES if family in sections]


def _page(rule: Rule, example: dict) -> str:
    out = [f"# {_title(rule)}", "", f"`{rule.id}` · {rule.severity}", "", _md(rule.summary), ""]
    for heading, lines, language in _parts(example):
        if language:
            out += [_md(heading), "", f"```{language}", *lines, "```", ""]
        else:
            out += [_md(" ".join([heading, *lines]).strip()), ""]
    return "\n".join(out)


def _index(rules: list[Rule]) -> str:
    """The Markdown reference's index: the scheme, the families, and a table of every code linking its page."""
    families = {r.family for r in rules}
    out = [
        "# Diagnostic codes",
        "",
        "<!-- Generated by `policyc codes --format markdown --output-dir docs/codes`; do not edit"
        " (tests/test_codes.py checks it). -->",
        "",
        "Every diagnostic has a code, printed in each line (`error PC414: ...`), and an identity,"
        " `<family>/<name>`: a family is a stage of the compiler or a backend. The rules numbered PC001 to PC902"
        " keep their number as their code for good; a rule added since has its identity as its code. `policyc codes"
        " CODE` prints a code's page, and takes a code, an identity or a name.",
        "",
        "| family | what its rules are about |",
        "|---|---|",
        *(f"| `{f}` | {_md(about)} |" for f, about in codes.FAMILIES.items() if f in families),
        "",
        "| code | identity | severity | summary |",
        "|---|---|---|---|",
        *(f"| [{r.code}]({page_name(r)}) | `{r.id}` | {r.severity} | {_md(r.summary)} |" for r in rules),
    ]
    return "\n".join(out) + "\n"


_MARKDOWN_SPECIAL = re.compile(r"([\\*_<>\[\]|])")


def _md(text: str) -> str:
    """Prose as Markdown shows it as written: special characters escaped outside `code spans`."""
    parts = text.split("`")
    return "`".join(part if i % 2 else _MARKDOWN_SPECIAL.sub(r"\\\1", part) for i, part in enumerate(parts))

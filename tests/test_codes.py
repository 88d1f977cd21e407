"""The catalogue's two names per rule (code and identity), `policyc codes`, and the files generated from it: the
examples and fixes (package data, from the invalid cases) and the reference in docs/codes/, a page per code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from types import ModuleType

import pytest
from click.testing import CliRunner

from policyc import codes
from policyc.codes import Rule, Severity
from policyc.commands import codes as code_pages
from policyc.commands.cli import main
from policyc.diagnostics import Report, diag
from policyc.output import formats
from tests.conftest import REPO, repo_script

NUMBERED = (
    "PC001-PC008 PC101-PC105 PC201-PC207 PC301-PC312 PC401-PC453 PC460-PC477 PC480-PC491 PC493-PC494 PC496 "
    "PC501-PC509 PC601-PC608 PC699 PC701-PC708 PC801-PC805 PC901-PC902"
)
"""Every PCnnn there is, for good: no number is dropped (users match on it), and no new rule takes one."""


def numbered() -> set[str]:
    out = set()
    for span in NUMBERED.split():
        first, _, last = span.partition("-")
        out.update(f"PC{n:03}" for n in range(int(first[2:]), int((last or first)[2:]) + 1))
    return out


def test_the_numbered_codes_are_kept_and_no_new_one_is_given() -> None:
    assert len(numbered()) == 151  # 8 + 5 + 7 + 12 + 53 + 18 + 12 + 2 + 1 + 9 + 8 + 1 + 8 + 5 + 2
    assert {c for c, r in codes.RULES.items() if r.numbered} == numbered()


def test_every_rule_has_a_unique_identity_of_its_family_and_name() -> None:
    rules = list(codes.RULES.values())
    assert len({r.id for r in rules}) == len({r.name for r in rules}) == len(codes.BY_NAME) == len(rules)
    assert all(r.id == f"{r.family}/{r.name}" and r.family in codes.FAMILIES for r in rules)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name) for r in rules)


def test_families() -> None:
    # the shared families by hundred; a backend's rules in the family of its name, whatever their number
    assert codes.RULES["PC002"].id == "file/yaml-syntax"
    assert codes.RULES["PC101"].id == "shape/unknown-field"
    assert codes.RULES["PC204"].id == "kubernetes/invalid-quantity"
    assert codes.RULES["PC302"].id == "reference/unknown-gpu-tier"
    assert codes.RULES["PC496"].id == "meaning/quota-below-queue"
    assert codes.RULES["PC509"].id == "proof/toleration-beyond-grant"
    assert codes.RULES["PC701"].id == "scheduler/kind-not-supported-by-backend"
    assert codes.RULES["PC703"].id == "kueue/queue-field-ignored-by-kueue"
    assert codes.RULES["PC901"].id == "verify/output-schema"
    assert codes.RULES["PC417"].id == "volcano/queue-tree-too-deep"
    volcano = {c for c, r in codes.RULES.items() if r.family == "volcano"}
    assert volcano == {"PC408", "PC417", "PC421", "PC423", "PC424", "PC699", *(f"PC60{n}" for n in range(1, 9))}
    assert list(codes.FAMILIES)[:8] == ["file", "shape", "kubernetes", "reference", "meaning", "proof", "scheduler",
                                        "verify"]  # fmt: skip


@pytest.mark.parametrize("text", ["PC414", "pc414", " PC414 ", "meaning/guarantee-exceeds-capacity",
                                  "guarantee-exceeds-capacity", "Meaning/Guarantee-Exceeds-Capacity"])  # fmt: skip
def test_a_rule_is_found_by_code_identity_or_name(text: str) -> None:
    assert codes.lookup(text) is codes.RULES["PC414"]


def test_lookup_of_no_rule() -> None:
    assert codes.lookup("PC999") is None
    assert codes.lookup("meaning/unknown-field") is None  # a name, but of another family


@pytest.fixture
def a_new_rule(monkeypatch: pytest.MonkeyPatch):
    """The catalogue with a rule added as new rules are: without a number, in a family it states."""
    new = Rule(None, "some-new-check", Severity.WARNING, "A check added after the numbers.", family="meaning")
    monkeypatch.setattr(codes, "_RULES", (*codes._RULES, new))
    codes._catalogue.cache_clear()
    yield codes.rule("some-new-check")
    monkeypatch.undo()
    codes._catalogue.cache_clear()


def test_a_new_rule_is_printed_by_its_identity_everywhere(a_new_rule: Rule) -> None:
    assert (a_new_rule.code, a_new_rule.id, a_new_rule.numbered) == ("meaning/some-new-check",) * 2 + (False,)
    order = list(codes.RULES.values())
    assert order.index(a_new_rule) > max(i for i, r in enumerate(order) if r.numbered)  # after every numbered code
    report = Report("p.yaml")
    report.extend([diag("some-new-check", "it happened", ("spec",), hint="do this")])
    assert formats.render_text(report) == "p.yaml:1:1: warning meaning/some-new-check: it happened; do this"
    item = json.loads(formats.to_json([report]))["diagnostics"][0]
    assert (item["code"], item["id"], item["rule"]) == ("meaning/some-new-check",) * 2 + ("some-new-check",)
    assert "title=meaning/some-new-check::" in formats.to_github([report])
    sarif = json.loads(formats.to_sarif([report]))["runs"][0]
    assert sarif["results"][0]["ruleId"] == "meaning/some-new-check"
    assert codes.lookup("some-new-check") is a_new_rule
    assert codes_cli("some-new-check").stdout == (
        "meaning/some-new-check: warning\n\nA check added after the numbers.\n"
    )


def codes_cli(*args: str):
    return CliRunner().invoke(main, ["codes", *args])


def test_the_list_has_every_code_once_in_order() -> None:
    result = codes_cli()
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(codes.RULES)
    assert lines[0].split(None, 3) == ["PC001", "file/unreadable-file", "error", "The policy file cannot be read."]


def test_the_list_of_a_family() -> None:
    result = codes_cli("--family", "kai")
    assert result.exit_code == 0, result.output
    assert [line.split()[:3] for line in result.stdout.splitlines()] == [
        ["PC801", "kai/resource-not-in-kai-queues", "error"],
        ["PC802", "kai/queue-field-ignored-by-kai", "warning"],
        ["PC803", "kai/kai-queue-name-taken", "error"],
        ["PC804", "kai/non-preemptible-above-quota", "error"],
        ["PC805", "kai/gpu-resource-not-in-kai-queues", "warning"],
    ]


def test_the_list_as_json() -> None:
    result = codes_cli("--format", "json", "--family", "scheduler")
    assert json.loads(result.stdout) == [
        {
            "code": "PC701",
            "id": "scheduler/kind-not-supported-by-backend",
            "name": "kind-not-supported-by-backend",
            "family": "scheduler",
            "severity": "error",
            "summary": "A workload kind the chosen scheduler backend cannot run.",
        },
        {
            "code": "PC702",
            "id": "scheduler/setting-not-supported-by-backend",
            "name": "setting-not-supported-by-backend",
            "family": "scheduler",
            "severity": "error",
            "summary": "A scheduler setting of another backend than the one the policy selects.",
        },
    ]


def test_one_code_explained_with_its_example_and_fix() -> None:
    result = codes_cli("PC101")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("PC101 unknown-field: shape/unknown-field, error\n\nA field that the policy language ")
    example = _examples()["PC101"]
    # the example's policy, what policyc says, and the fix, each indented as a block
    for line in [*example["policy"], *example["says"], *example["fix"]]:
        assert f"\n    {line}\n" in text
    assert f"The whole policy: `{example['case']}` in policyc's repository." in text
    assert all(codes_cli(alias).stdout == text for alias in ("pc101", "shape/unknown-field", "unknown-field"))


def test_the_example_of_a_code_without_a_case_is_a_note() -> None:
    result = codes_cli("PC901")
    assert result.exit_code == 0
    assert result.stdout.startswith("PC901 output-schema: verify/output-schema, error\n\n")
    assert "A policyc bug" in result.stdout and "Example" not in result.stdout


def test_one_code_as_json() -> None:
    doc = json.loads(codes_cli("PC414", "--format", "json").stdout)
    assert (doc["code"], doc["id"]) == ("PC414", "meaning/guarantee-exceeds-capacity")
    assert doc["example"] == _examples()["PC414"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["meaning/quota-below-queu"], "no code 'meaning/quota-below-queu' in the catalogue; did you mean "
         "'meaning/quota-below-queue'?"),
        (["toleration-byond-grant"], "no code 'toleration-byond-grant' in the catalogue; did you mean "
         "'toleration-beyond-grant'?"),
        (["--family", "meanin"], "no family 'meanin' in the catalogue; did you mean 'meaning'?"),
        (["zzzzzz"], "no code 'zzzzzz' in the catalogue"),
    ],
)  # fmt: skip
def test_an_unknown_code_or_family_is_one_line_and_a_usage_error(args: list[str], message: str) -> None:
    result = codes_cli(*args)
    assert result.exit_code == 2
    assert result.stderr == f"policyc: {message}\n" and not result.stdout


def test_a_code_and_a_family_together_are_a_usage_error() -> None:
    result = codes_cli("PC414", "--family", "meaning")
    assert result.exit_code == 2 and "give a CODE or --family, not both" in result.output


def test_codes_does_not_load_the_compiler() -> None:
    """`policyc codes` starts as fast as the catalogue loads: no pipeline, no pydantic, no YAML library."""
    script = (
        "import sys\n"
        "from policyc.commands.cli import main\n"
        "try:\n"
        "    main(['codes', 'PC414'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'ruamel', 'jsonschema_rs')\n"
        "               or m in ('policyc.compiler', 'policyc.language.model'))\n"
        "print(heavy, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True)
    assert result.stderr == "[]\n"
    assert result.stdout.startswith("PC414 ")


def _generator() -> ModuleType:
    """``tools/gen_code_examples.py`` as a module (``tools`` is not a package)."""
    return repo_script("tools/gen_code_examples.py")


def _examples() -> dict[str, dict]:
    return json.loads((REPO / "policyc" / "commands" / "code_examples.json").read_text(encoding="utf-8"))


def test_the_packaged_examples_agree_with_the_invalid_cases() -> None:
    assert _generator().OUT.read_text(encoding="utf-8") == _generator().generate(), (
        "policyc/commands/code_examples.json is not what the invalid cases give: run python tools/gen_code_examples.py"
    )


def test_every_code_has_an_example_or_a_note() -> None:
    examples = _examples()
    assert list(examples) == list(codes.RULES)
    for code, example in examples.items():
        assert set(example) in ({"note"}, {"case", "about", "policy", "says", "fix"},
                                {"case", "about", "policy", "says", "manual"}), code  # fmt: skip
        assert all(code in said.split(":")[0] for said in example.get("says", [])), code


def test_an_example_shows_the_lines_the_diagnostic_and_the_fix_are_on_under_their_keys() -> None:
    gen = _generator()
    lines = ["spec:", "  tenants:", "    - name: a", "      queue: {}", "    - name: b", "      namespaces: [b]",
             "      queue: {guarantee: {gpu: 9}}", "  workloads: []"]  # fmt: skip
    shown = gen.excerpt(lines, {6})
    assert shown == [0, 1, 4, 6]
    assert gen.with_gaps(lines, shown) == ["spec:", "  tenants:", "    ...", "    - name: b", "      namespaces: [b]",
                                           "      queue: {guarantee: {gpu: 9}}"]  # fmt: skip
    fixed = [*lines[:6], "      queue: {guarantee: {gpu: 8}}", lines[7]]
    assert gen.changed(lines, fixed) == {6}
    assert gen.diff(lines, fixed) == ["     - name: b", "       namespaces: [b]", "-      queue: {guarantee: {gpu: 9}}",
                                      "+      queue: {guarantee: {gpu: 8}}", "   workloads: []"]  # fmt: skip
    assert gen.visible("a\tb\udcfc\x00") == "a\\tb\\xfc\\x00"


def test_the_reference_in_docs_is_what_the_generator_writes(tmp_path) -> None:
    result = codes_cli("--format", "markdown", "--output-dir", str(tmp_path / "codes"))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    written = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "codes").iterdir()}
    checked_in = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "docs" / "codes").iterdir()}
    assert checked_in == written, (
        "docs/codes/ differs from the catalogue: run policyc codes --format markdown --output-dir docs/codes"
        f" (stale: {sorted(checked_in.keys() - written.keys())})"
    )


def test_every_code_has_its_page_linked_from_the_index() -> None:
    pages = REPO / "docs" / "codes"
    index = (pages / "index.md").read_text(encoding="utf-8")
    assert len(list(pages.glob("*.md"))) == len(codes.RULES) + 1  # a page per rule, and the index
    for r in codes.RULES.values():
        title = f"{r.code} {r.name}" if r.numbered else r.id
        page = pages / (title.lower().replace("/", "-").replace(" ", "-") + ".md")
        text = page.read_text(encoding="utf-8")
        assert text.startswith(f"# {title}\n\n`{r.id}` · {r.severity}\n"), page
        assert f"| [{r.code}]({page.name}) | `{r.id}` | {r.severity} |" in index
    pc414 = (pages / "pc414-guarantee-exceeds-capacity.md").read_text(encoding="utf-8")
    assert "```yaml\n" in pc414 and "```text\nerror PC414: " in pc414 and "The fix its hint gives:" in pc414


def test_a_code_in_markdown_is_its_page() -> None:
    result = codes_cli("PC414", "--format", "markdown")
    assert result.exit_code == 0
    assert result.stdout == (REPO / "docs" / "codes" / "pc414-guarantee-exceeds-capacity.md").read_text("utf-8")


@pytest.mark.parametrize("args", [["PC414", "--format", "markdown"], ["--format", "json"], []])
def test_pages_are_written_only_as_the_whole_markdown_reference(args: list[str], tmp_path) -> None:
    result = codes_cli(*args, "--output-dir", str(tmp_path / "codes"))
    assert result.exit_code == 2
    assert "--output-dir writes the whole Markdown reference" in result.output
    assert not (tmp_path / "codes").exists()


def test_the_site_lists_every_code_page_by_family() -> None:
    """The navigation tools/mkdocs_hooks.py adds: each family's pages, in the catalogue's order."""
    sections = {family: pages for entry in code_pages.nav("codes") for family, pages in entry.items()}
    assert list(sections)[:3] == ["file", "shape", "kubernetes"]
    assert sections["file"][:2] == ["codes/pc001-unreadable-file.md", "codes/pc002-yaml-syntax.md"]
    assert "codes/meaning-guarantee-waits-for-scale-up.md" in sections["meaning"]
    listed = [page for pages in sections.values() for page in pages]
    assert sorted(listed) == sorted(f"codes/{p.name}" for p in (REPO / "docs" / "codes").glob("*.md")
                                    if p.name != "index.md")  # fmt: skip


def test_the_readme_points_to_the_reference() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/codes/index.md)" in readme and "`policyc codes" in readme

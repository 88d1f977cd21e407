"""Diagnostic formats: GitHub annotations, SARIF 2.1.0, JSON; colour only on a terminal."""

from __future__ import annotations

import json

import jsonschema
from click.testing import CliRunner

from policyc.commands.cli import main
from tests.conftest import REPO

FIVE = str(REPO / "tests" / "cases" / "five-mistakes.yaml")
WARNING = str(REPO / "tests" / "cases" / "invalid" / "pc410-default-class-forbidden.yaml")


def validate(*args: str):
    return CliRunner().invoke(main, ["validate", *args])


def test_github_annotations_most_severe_first_then_the_full_list() -> None:
    result = validate("--format", "github", WARNING, FIVE)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    annotations = [line for line in lines if line.startswith("::")]
    assert annotations[0].startswith("::error file=")
    assert annotations[-1].startswith("::warning file=")
    first = annotations[0]
    assert ",line=14,col=47,title=PC102 wrong-type::" in first
    assert "remove the quotes" in first
    assert any(line.startswith(f"{FIVE}:14:47: error PC102") for line in lines), "the full list follows"


def test_github_escaping() -> None:
    from policyc.diagnostics import Report, diag
    from policyc.output.formats import to_github

    report = Report("a,b:c.yaml")
    report.extend([diag("invalid-value", "100% wrong\nreally", ("spec",))])
    first = to_github([report]).splitlines()[0]
    # a line break in a message is escaped everywhere, so that each diagnostic stays on one line
    assert first.startswith("::error file=a%2Cb%3Ac.yaml,line=1,col=1,title=PC104 invalid-value::100%25 wrong\\nreally")


def test_sarif_log() -> None:
    result = validate("--format", "sarif", FIVE)
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    schema = json.loads((REPO / "tests" / "data" / "sarif-2.1.0.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)  # OASIS's schema (tests/data/README.md)
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["PC302"]["defaultConfiguration"]["level"] == "error"
    assert rules["PC302"]["shortDescription"]["text"]
    # the id stays the code the text prints (code scanning keys alerts on it); the identity is a property
    assert rules["PC302"]["properties"] == {"identity": "reference/unknown-gpu-tier", "tags": ["reference"]}
    assert rules["PC302"]["help"]["text"].endswith("`policyc codes PC302` explains it.")
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["PC102", "PC203", "PC101", "PC204", "PC302"]
    loc = results[0]["locations"][0]["physicalLocation"]
    assert loc["region"] == {"startLine": 14, "startColumn": 47}
    assert not loc["artifactLocation"]["uri"].startswith("/"), "repository-relative"
    assert all(run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in results)


def test_json_and_text_have_no_colour_off_a_terminal() -> None:
    result = validate(FIVE)
    assert "\x1b[" not in result.output
    assert ": error PC102:" in result.stderr

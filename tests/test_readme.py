"""The README's and the documentation's examples work, and CI runs the README's test command."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO

DOCS = REPO / "docs"


@pytest.mark.parametrize(
    ("page", "template"),
    [("README.md", "templates/llm-training.yaml"), ("docs/language.md", "templates/llm-training.yaml")],
)
def test_the_example_policy_of_a_page_compiles(compile_text, page: str, template: str) -> None:
    """The README's short example and the language page's full one: the first YAML block of each."""
    text = (REPO / page).read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    assert example.startswith(("apiVersion:", "# yaml-language-server:")), example[:80]
    result = compile_text(example.replace("← editors validate and explain as you type", ""))
    assert result.ok and not result.report.diagnostics, [
        f"{d.line}:{d.column} {d.message}" for d in result.report.diagnostics
    ]
    assert template in result.files


def test_the_library_example_runs(monkeypatch) -> None:
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    monkeypatch.chdir(REPO)
    scope: dict = {}
    exec(compile(example, "docs/commands.md", "exec"), scope)  # the documented five lines, as a user would run them
    assert scope["result"].ok and "kustomization.yaml" in scope["manifests"]


def test_ci_runs_the_readme_test_command_in_parallel() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = re.search(r"## Set-up\n.*?```sh\n(.*?)```", readme, re.S).group(1).splitlines()
    test_command = commands[1].partition("#")[0].strip()  # the second: install with the test extra, run the tests
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == test_command, "the last step of .ci/run is the README's test command"
    assert test_command.endswith("pytest -n auto"), test_command

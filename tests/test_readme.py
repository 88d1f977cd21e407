"""The README's and the documentation's examples work, and CI runs the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

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


def setup_commands(checkout: Path = REPO) -> list[str]:
    """The README's two set-up commands, as written (each line of the block under "Set-up", less its comment): the
    first builds the example, the second runs the tests."""
    readme = (checkout / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Set-up\n.*?```sh\n(.*?)```", readme, re.S).group(1)
    commands = [line.partition("  #")[0].strip() for line in block.splitlines()]
    assert len(commands) == 2, commands
    return commands


def test_ci_runs_the_readme_commands_and_the_tests_in_parallel() -> None:
    build, test = setup_commands()
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-2:] == [build, test], "the last two steps of .ci/run are the README's set-up commands"
    assert test.endswith("pytest -n auto"), test

"""The GitHub Action (action.yml): its metadata passes SchemaStore's schema, it shares its entry with the pre-commit
hook, and its steps, run as the runner runs a composite action's, validate, write SARIF and fail on errors.

tests/data/github-action.schema.json is SchemaStore's github-action.json (https://json.schemastore.org/github-action.json,
src/schemas/json/github-action.json of github.com/SchemaStore/schemastore, as stored from the fork
muzimuzhi/schemastore at commit 62c076befde6a17a03871a53099ff589c26cfcb1; only the icon list is laid out denser).

How the runner runs a composite action's steps (GitHub's metadata syntax and expression documentation): a `run`
step runs `bash --noprofile --norc -eo pipefail {0}` on a file holding the script, in the workspace, with the step's
`env`; a composite action gets no INPUT_* variables (actions/runner issue 665), so the Action passes its inputs
through `env` (`${{ inputs.x }}`), never into a script's text; a step's `if` without a status function is
`success() && (...)`; a step writes its outputs to the file $GITHUB_OUTPUT names. `uses` steps (the SARIF upload)
are recorded with their inputs, not run.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO, policyc_command
from tests.test_node_script import require

ACTION = YAML(typ="safe", pure=True).load((REPO / "action.yml").read_text())
HOOKS = {h["id"]: h for h in YAML(typ="safe", pure=True).load((REPO / ".pre-commit-hooks.yaml").read_text())}
SCHEMA = json.loads((REPO / "tests" / "data" / "github-action.schema.json").read_text())
GOOD = (REPO / "policies" / "minimal.yaml").read_text()
BROKEN = GOOD.replace("gpuTier: a100", "gpuTier: a10")  # PC302, an unknown GPU tier
KYVERNO = (REPO / "tests" / "test_precommit.py").read_text().split('KYVERNO = """', 1)[1].split('"""', 1)[0]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Run:
    """One run of the Action: each step's fate, outputs and log, and the `uses` steps it would have called."""

    workspace: Path
    inputs: dict[str, str]
    path: str
    temp: Path
    failed: bool = False
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    fate: dict[str, str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    called: list[dict] = field(default_factory=list)

    def value(self, expression: str) -> str:
        if m := re.fullmatch(r"inputs\.([\w-]+)", expression):
            return self.inputs[m[1]]
        if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression):
            return self.outputs.get(m[1], {}).get(m[2], "")
        if expression == "github.action_path":
            return str(REPO)
        raise AssertionError(f"an expression this test does not evaluate: {expression}")

    def substitute(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.value(m[1]), text)

    def condition(self, expression: str | None) -> bool:
        """`if:` with the implied success(): the comparisons the Action uses, and nothing else."""
        if expression is None:
            return not self.failed
        m = re.fullmatch(r"([\w.-]+) (==|!=) '([^']*)'", expression)
        assert m, f"a condition this test does not evaluate: {expression}"
        equal = self.value(m[1]) == m[3]
        return not self.failed and (equal if m[2] == "==" else not equal)

    def step(self, number: int, step: dict) -> None:
        name = step.get("id") or step["name"]
        if not self.condition(step.get("if")):
            self.fate[name] = "skipped"
            return
        if "uses" in step:
            self.called.append({"uses": step["uses"], **{k: self.substitute(v) for k, v in step["with"].items()}})
            self.fate[name] = "called"
            return
        assert step["shell"] == "bash" and "${{" not in step["run"], "inputs reach a script through env only"
        script = self.temp / f"step-{number}.sh"
        script.write_text(step["run"])
        files = {key: self.temp / f"{key.lower()}-{number}" for key in ("GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_ENV")}
        for f in files.values():
            f.write_text("")
        env = {"PATH": self.path, "HOME": str(self.temp), "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true",
               "GITHUB_WORKSPACE": str(self.workspace), "GITHUB_ACTION_PATH": str(REPO),
               "RUNNER_TEMP": str(self.temp), **{k: str(v) for k, v in files.items()},
               **{k: self.substitute(v) for k, v in step.get("env", {}).items()}}  # fmt: skip
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                cwd=self.workspace, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
        self.logs[name] = result.stdout + result.stderr
        if "id" in step:
            lines = files["GITHUB_OUTPUT"].read_text().splitlines()
            self.outputs[step["id"]] = dict(line.split("=", 1) for line in lines)
        for added in files["GITHUB_PATH"].read_text().splitlines():
            self.path = f"{added}:{self.path}"
        self.fate[name] = "failed" if result.returncode else "succeeded"
        self.failed = self.failed or result.returncode != 0


def run_action(workspace: Path, path: str, tmp_path: Path, **given: str) -> Run:
    """Run the Action's steps with the inputs `given` (with `install: 'false'` unless given: `path` has policyc)."""
    defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()} | {"install": "false"}
    assert set(given) <= set(defaults), "inputs the Action does not take"
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    run = Run(workspace, defaults | given, path, temp)
    for number, step in enumerate(ACTION["runs"]["steps"]):
        run.step(number, step)
    return run


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A checked-out repository: a policy without errors, one with an error (once committed), Kyverno, Helm values."""
    require("git")
    repo = tmp_path / "workspace"
    for rel, text in {"policies/good.yaml": GOOD, "k8s/kyverno.yaml": KYVERNO, "values.yaml": "replicas: 2\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    return repo


@pytest.fixture
def path(tmp_path) -> str:
    return policyc_command(tmp_path / "bin")


def test_metadata_passes_the_schema() -> None:
    validator = jsonschema.Draft7Validator(SCHEMA)
    validator.validate(ACTION)
    assert ACTION["runs"]["using"] == "composite"
    broken = copy.deepcopy(ACTION)  # the schema does check steps: a run step without its shell is refused
    del broken["runs"]["steps"][1]["shell"]
    assert not validator.is_valid(broken)


def test_the_action_and_the_pre_commit_hook_share_their_entry() -> None:
    """Both run `policyc validate --only-policies` on the files: a policy passes one just when it passes the other."""
    entry = HOOKS["policyc-validate"]["entry"]
    assert entry == "policyc validate --only-policies"
    invocations = [line.strip() for step in ACTION["runs"]["steps"] for line in step.get("run", "").splitlines()
                   if re.match(r"\s*policyc\b", line)]  # fmt: skip
    assert len(invocations) == 2
    for line in invocations:
        assert line.startswith(entry + " --format ") and line.count('"${files[@]}"') == 1


def _sarif(run: Run) -> dict:
    return json.loads((run.workspace / run.outputs["validate"]["sarif-file"]).read_text())


def test_no_errors(workspace, path, tmp_path) -> None:
    run = run_action(workspace, path, tmp_path, files="policies/*.yaml k8s/**/*.yaml values.yaml")
    assert not run.failed, run.logs
    assert run.outputs["validate"] == {"status": "0", "sarif-file": "policyc.sarif"}
    log = _sarif(run)
    assert log["version"] == "2.1.0" and log["runs"][0]["tool"]["driver"]["name"] == "policyc"
    assert not [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    assert run.called == [{"uses": "github/codeql-action/upload-sarif@v3", "sarif_file": "policyc.sarif",
                           "category": "policyc"}]  # fmt: skip
    assert run.fate["Fail on errors"] == "skipped"


def test_errors_are_uploaded_and_fail_the_check(workspace, path, tmp_path) -> None:
    (workspace / "policies" / "broken.yaml").write_text(BROKEN)
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    # no files given: every tracked YAML file, the non-policies skipped by content as the hook skips them
    run = run_action(workspace, path, tmp_path, **{"sarif-file": "out/policyc.sarif", "category": "gpu"})
    assert run.failed
    assert run.fate == {"Install policyc": "skipped", "validate": "succeeded",
                        "Upload to code scanning": "called", "Fail on errors": "failed"}  # fmt: skip
    assert run.outputs["validate"]["status"] == "1"
    results = _sarif(run)["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results if r["level"] == "error"] == [("PC302", "error")]
    location = next(r for r in results if r["ruleId"] == "PC302")["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "policies/broken.yaml"
    assert run.called[0]["sarif_file"] == "out/policyc.sarif" and run.called[0]["category"] == "gpu"
    # the failing step annotates the line in the pull request
    assert "::error file=policies/broken.yaml,line=" in run.logs["Fail on errors"]
    assert "PC302" in run.logs["Fail on errors"]


def test_no_upload_when_asked(workspace, path, tmp_path) -> None:
    run = run_action(workspace, path, tmp_path, files="policies/good.yaml", **{"upload-sarif": "false"})
    assert not run.failed and run.called == [] and run.fate["Upload to code scanning"] == "skipped"


def test_files_that_match_nothing_fail(workspace, path, tmp_path) -> None:
    run = run_action(workspace, path, tmp_path, files="nowhere/*.yaml")
    assert run.failed and run.fate["validate"] == "failed"
    assert "::error title=policyc::no file to validate: 'nowhere/*.yaml' matches none" in run.logs["validate"]
    assert run.fate["Upload to code scanning"] == run.fate["Fail on errors"] == "skipped"


def test_scripts_pass_shellcheck(tmp_path) -> None:
    require("shellcheck")
    for number, step in enumerate(s for s in ACTION["runs"]["steps"] if "run" in s):
        script = tmp_path / f"step-{number}.sh"
        script.write_text("#!/bin/bash\n" + step["run"])
        subprocess.run(["shellcheck", "--severity=style", str(script)], check=True)


@pytest.mark.slow
def test_the_action_installs_policyc_from_its_own_source(workspace, tmp_path) -> None:
    """With the default `install: 'true'` the Action installs policyc from its checkout (here this one) into a
    virtual environment and puts it on PATH for its later steps: the runner's PATH has no policyc of its own."""
    interpreter = tmp_path / "interpreter"  # the runner's python3: this one's base interpreter, without policyc
    interpreter.mkdir()
    (interpreter / "python3").symlink_to(Path(sys.base_prefix) / "bin" / "python3")
    run = run_action(workspace, f"{interpreter}:/usr/bin:/bin", tmp_path, install="true", files="policies/good.yaml")
    assert run.fate["Install policyc"] == "succeeded", run.logs
    assert not run.failed and run.outputs["validate"]["status"] == "0"
    assert run.path.startswith(f"{run.temp / 'policyc' / 'bin'}:")


def test_the_docs_show_the_action_in_the_workflow() -> None:
    """docs/github-action.md shows docs/github-workflow.yaml as it is, and documents every input and output."""
    page = (REPO / "docs" / "github-action.md").read_text()
    workflow_text = (REPO / "docs" / "github-workflow.yaml").read_text()
    assert f"```yaml\n{workflow_text}```\n" in page
    workflow = YAML(typ="safe", pure=True).load(workflow_text)
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["policy"]["steps"]
    assert [s for s in steps if s.get("uses", "").startswith("<org>/policyc@")]
    for section, names in (("## Inputs", ACTION["inputs"]), ("## Outputs", ACTION["outputs"])):
        table = page.split(section, 1)[1].split("\n## ", 1)[0]
        assert re.findall(r"^\| `([\w-]+)` \|", table, re.M) == list(names), section

"""What keeps policyc quick to start (issue 25, point 7): its structure, not its timings (`bench/bench.py` measures
those, against the bare import of the packages policyc uses).

- `--version` and `--help` import none of those packages, nor the language, the pipeline or a backend;
- defining the language builds no validator (pydantic's deferred build);
- a compile builds the policy's validator once, whole; a model of the language gets its own only where the policy
  takes a default that is an instance of it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import POLICIES, REPO

HEAVY = ("pydantic", "pydantic_core", "ruamel", "jsonschema_rs", "kubernetes_validate")
"""Top-level packages a command that only prints what it knows must not import."""

COMMAND_LINE = {"policyc", "policyc.commands", "policyc.commands.cli"}
"""The modules of policyc that the command line needs before it knows which command runs."""


def imported(*args: str) -> set[str]:
    """Every module `python -m policyc ARGS` imports, as the interpreter reports them (-X importtime)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "policyc", *args], capture_output=True, text=True, cwd=REPO
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [line for line in run.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # the first line is the table's header


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["validate", "--help"]])
def test_version_and_help_import_nothing_heavy(args: list[str]) -> None:
    modules = imported(*args)
    assert modules >= COMMAND_LINE, "the report of imports was read"
    assert {m for m in modules if m.split(".")[0] in HEAVY} == set()
    assert {m for m in modules if m.split(".")[0] == "policyc"} == COMMAND_LINE


def test_validate_imports_what_the_others_do_not() -> None:
    """The counterpart of the test above: the report shows the packages when a command needs them."""
    modules = imported("validate", str(POLICIES / "minimal.yaml"))
    assert {"pydantic", "ruamel.yaml", "jsonschema_rs", "policyc.language.model.policy"} <= modules


_BUILT = """
import json, sys
from pathlib import Path
import policyc
from policyc import registry
from policyc.commands import cli
from policyc.language.model.base import Model

def built():
    out, todo = [], [Model]
    while todo:
        model = todo.pop()
        todo += model.__subclasses__()
        if model.__dict__.get("__pydantic_complete__"):
            out.append(model.__qualname__)
    return sorted(out)

import policyc.compiler, policyc.language.parse
registry.every_settings()
defined = built()
compilation = policyc.compile(Path(sys.argv[1]))
print(json.dumps({"defined": defined, "compiled": built(), "ok": compilation.ok}))
"""


def test_a_compile_builds_the_policy_validator_once_and_no_other() -> None:
    """In a fresh interpreter (the test process has built models for other tests): the language, every backend's
    settings included, defined and nothing built; then the minimal policy compiled."""
    run = subprocess.run(
        [sys.executable, "-c", _BUILT, str(POLICIES / "minimal.yaml")], capture_output=True, text=True, cwd=REPO
    )
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout)
    assert found["ok"]
    assert found["defined"] == []
    assert found["compiled"] == [
        "ClusterPolicy",  # the policy's validator, built whole (it holds every model below it, the subclasses
        # policy_model makes for what the registered backends define included: spec.scheduler, workloads[].kind,
        # spec.provisioning, nodePools[])
        "PodLimits",  # workloads[].limits left out: its default is a PodLimits()
        "VolcanoSettings",  # spec.scheduler left out: its default is the first backend's settings
    ]

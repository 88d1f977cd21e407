"""Shared test fixtures: repository paths and a helper that compiles policy text."""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

from policyc.compiler import Compilation, compile_file

REPO = Path(__file__).resolve().parents[1]
POLICIES = REPO / "policies"
GOLDEN = Path(os.environ.get("POLICYC_GOLDEN", REPO / "golden"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-cases",
        action="store_true",
        help="write each invalid case's diagnostics into its '# output' block (tests/test_invalid_cases.py)",
    )


def shared_dir() -> Path:
    """`../shared` beside the checkout (CI puts it there), or POLICYC_SHARED."""
    return Path(os.environ.get("POLICYC_SHARED", REPO.parent / "shared"))


def missing_shared_data(what: Path) -> NoReturn:
    """Skip the calling test, saying which shared data is absent; under CI=true fail instead (CI has it beside the
    checkout, so its absence there is a broken set-up, not a reason to test less)."""
    unavailable(f"{what} not found: put shared/ beside the checkout or set POLICYC_SHARED")


def in_ci() -> bool:
    """Whether the tests run under CI: `CI` set to anything but empty, `0` or `false` (GitHub, GitLab and `.ci/run`
    set `CI=true`)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def unavailable(reason: str) -> NoReturn:
    """Skip the calling test for what this machine lacks; under CI fail it instead (`.ci/run` installs every tool and
    puts the shared data beside the checkout, so an absence there is a broken set-up, not a reason to test less)."""
    if in_ci():
        pytest.fail(reason)
    pytest.skip(reason)


def require_tool(tool: str, install: str) -> str:
    """The path of `tool`, or the calling test skipped (failed under CI) saying how to install it."""
    path = shutil.which(tool)
    if path is None:
        unavailable(f"{tool} is not installed ({install}; .ci/run installs it)")
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first: under -n their worker waits on pip while the others run the rest, rather than at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session", autouse=True)
def build_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's directory of build records (`policyc.output.records`), for every build it runs, in this process
    or a child: no test reads or writes the real home's cache."""
    directory = tmp_path_factory.mktemp("policyc-cache")
    os.environ["POLICYC_CACHE_DIR"] = str(directory)
    return directory


def inner_pytest_env(**extra: str) -> dict[str, str]:
    """The environment for a pytest run in a subprocess: this one's, less what pytest-xdist sets for its workers.

    The inner run is a session of its own; inheriting PYTEST_XDIST_WORKER would make syrupy there take itself for
    a worker and skip its check for unused snapshots.
    """
    worker = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
    return {**{k: v for k, v in os.environ.items() if k not in worker}, **extra}


@functools.cache
def repo_script(relative: str) -> ModuleType:
    """A script of the repository outside any package (`tools/gen_crd_schemas.py`) as a module, named by its stem."""
    path = REPO / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def example_policies() -> list[Path]:
    return sorted(POLICIES.glob("*.yaml"))


@pytest.fixture
def compile_text(tmp_path):
    """Compile policy text written to a temporary policy.yaml (diagnostics name it 'policy.yaml')."""

    def run(text: str, name: str = "policy.yaml") -> Compilation:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return compile_file(path, name)

    return run


def policyc_command(directory: Path) -> str:
    """A `policyc` command in `directory`, as an installed console script is, running this checkout's policyc with
    this interpreter (for tests that run what a user's tools run: Argo CD's plugin, the GitHub Action); a PATH
    with it first."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "policyc"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m policyc "$@"\n')
    script.chmod(0o755)
    return f"{directory}{os.pathsep}{os.environ['PATH']}"

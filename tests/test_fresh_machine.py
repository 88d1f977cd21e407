"""The README's set-up works on a fresh Debian or Ubuntu machine (issue 30, point 1), whose python3 refuses
`pip install` outside a virtual environment (PEP 668: the EXTERNALLY-MANAGED marker in its standard library).

`.ci/run` installs Debian's python3 and its venv module and runs the README's two commands under it, in CI's clean
checkout; these tests check that the Python they ran under enforces PEP 668, and run the first command again in a
clean clone, read from the README as a user would copy it, with that python3 first on the path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO, in_ci, unavailable
from tests.test_readme import setup_commands

DEBIAN_PYTHON = Path("/usr/bin/python3")
"""The python3 of Debian's (and Ubuntu's) package, the one a fresh machine has."""

MARKER = "EXTERNALLY-MANAGED"

_DEFEATING = {"VIRTUAL_ENV", "PIP_BREAK_SYSTEM_PACKAGES", "PIP_USER", "PIP_PREFIX", "PIP_TARGET"}
"""Variables of this process's environment that a fresh machine has not and that would change where pip installs
(beside every PYTHON* one)."""


def marker_of(python: Path) -> Path:
    """Where PEP 668 puts the marker of `python`: its standard library's directory (sysconfig's stdlib path)."""
    run = subprocess.run(
        [python, "-I", "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    return Path(run.stdout.strip()) / MARKER


def debian_python() -> Path:
    """Debian's python3, when it is here and enforces PEP 668."""
    if not DEBIAN_PYTHON.exists():
        unavailable(f"{DEBIAN_PYTHON} is not installed (.ci/run installs Debian's python3 and python3-venv)")
    if not marker_of(DEBIAN_PYTHON).is_file():
        unavailable(f"{DEBIAN_PYTHON} does not carry the {MARKER} marker (.ci/run installs Debian's python3)")
    return DEBIAN_PYTHON


def test_ci_runs_the_tests_in_a_virtual_environment_of_a_python_that_enforces_pep_668() -> None:
    """The README's second command, as `.ci/run` runs it: this process is in the virtual environment the first one made
    from Debian's python3 (a developer's own run may use another Python: under CI only)."""
    if not in_ci():
        pytest.skip("CI runs the tests under Debian's python3; a developer's run may use any Python 3.11+")
    assert sys.prefix != sys.base_prefix, "the tests run in a virtual environment"
    assert (Path(sysconfig.get_path("stdlib")) / MARKER).is_file(), f"{sys.base_prefix} does not enforce PEP 668"


def test_debian_s_venv_module_needs_the_package_the_readme_names() -> None:
    """Debian leaves ensurepip, which `python3 -m venv` runs to put pip in the environment, out of python3: its
    python3.X-venv package (python3-venv depends on it) has it. The README says to install it."""
    python = debian_python()
    ensurepip = marker_of(python).parent / "ensurepip" / "__init__.py"
    owner = subprocess.run(["dpkg", "-S", ensurepip], capture_output=True, text=True)
    assert owner.returncode == 0, owner.stderr
    package = owner.stdout.partition(":")[0]
    assert package.startswith("python3.") and package.endswith("-venv"), package
    set_up = (REPO / "README.md").read_text(encoding="utf-8").partition("## Set-up")[2].partition("```sh")[0]
    assert "`sudo apt install python3-venv`" in set_up


@pytest.mark.slow
def test_the_readme_first_command_builds_the_example_in_a_clean_clone(tmp_path: Path) -> None:
    """The README's first command, verbatim, with Debian's python3 first on the path, builds the example in a clean
    clone byte for byte as its golden files have it; there, `pip install -e .` outside the virtual environment (the
    README's command before issue 30) is refused: the marker is in force."""
    python = debian_python()
    if shutil.which("git") is None:
        unavailable("git is not installed")
    clone = tmp_path / "policyc"
    cloned = subprocess.run(["git", "clone", "--quiet", REPO, clone], capture_output=True, text=True)
    assert cloned.returncode == 0, cloned.stderr
    first_bin = tmp_path / "bin"
    first_bin.mkdir()
    (first_bin / "python3").symlink_to(python)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k not in _DEFEATING},
        "PATH": f"{first_bin}{os.pathsep}{os.environ['PATH']}",
    }
    build = setup_commands(clone)[0]
    run = subprocess.run(["sh", "-c", build], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    golden = _tree(clone / "golden" / "ai-prod")
    assert run.stderr.endswith(f"policies/ai-prod.yaml: wrote {len(golden)} files to out\n"), run.stderr[-2000:]
    assert _tree(clone / "out") == golden

    # pip run for Debian's python3 (the virtual environment's pip: a fresh machine has no other)
    refused = subprocess.run(
        [clone / ".venv" / "bin" / "pip", "--python", python, "install", "-e", "."],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0
    assert "externally-managed-environment" in refused.stderr, refused.stderr[-2000:]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

"""The pre-commit hooks, run by the real pre-commit against temporary git repositories.

Slow the first time (pre-commit installs policyc into its own environment); the environment is shared by
the tests of this module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    return {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home"))}


def _git(repo: Path, *args: str, env: dict) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _repo(tmp_path: Path, env: dict, files: dict[str, str]) -> Path:
    repo = tmp_path / "work"
    repo.mkdir()
    _git(repo, "init", "-q", env=env)
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A", env=env)
    _git(repo, "commit", "-qm", "policy", env=env)
    return repo


def _pre_commit(repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip


def test_hooks_file_settings() -> None:
    hooks = {h["id"]: h for h in YAML(typ="safe", pure=True).load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["policyc-validate"]["pass_filenames"] is True
    assert hooks["policyc-check"]["pass_filenames"] is False and hooks["policyc-check"]["require_serial"] is True
    assert hooks["policyc-check"]["entry"] == "policyc build --check"


def test_validate_hook_passes_a_good_policy_and_catches_a_broken_one(tmp_path, env) -> None:
    good = (REPO / "policies" / "minimal.yaml").read_text()
    repo = _repo(tmp_path, env, {"policies/good.yaml": good})
    result = _pre_commit(repo, env, "try-repo", str(REPO), "policyc-validate", "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    (repo / "policies" / "bad.yaml").write_text(good.replace("gpuTier: a100", "gpuTier: a10"))
    _git(repo, "add", "-A", env=env)
    result = _pre_commit(repo, env, "try-repo", str(REPO), "policyc-validate", "--all-files")
    assert result.returncode == 1
    assert (
        "policies/bad.yaml:" in result.stdout and "PC302" in result.stdout and "did you mean 'a100'?" in result.stdout
    )


def test_check_hook_catches_a_policy_edit_without_regenerating(tmp_path, env) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("the checkout has no commit to install the hook from")
    policy = (REPO / "policies" / "minimal.yaml").read_text()
    config = (f"repos:\n- repo: {REPO}\n  rev: {head.stdout.strip()}\n  hooks:\n  - id: policyc-check\n"
              "    args: [policies/minimal.yaml, -o, manifests]\n")  # fmt: skip
    repo = _repo(tmp_path, env, {"policies/minimal.yaml": policy, ".pre-commit-config.yaml": config})
    subprocess.run([sys.executable, "-m", "policyc", "build", "policies/minimal.yaml", "-o", "manifests"], cwd=repo,
                   check=True, capture_output=True)  # fmt: skip
    _git(repo, "add", "-A", env=env)
    _git(repo, "commit", "-qm", "manifests", env=env)
    assert _pre_commit(repo, env, "run", "--all-files").returncode == 0
    (repo / "policies" / "minimal.yaml").write_text(policy.replace("gpus: 8\n", "gpus: 4\n"))
    result = _pre_commit(repo, env, "run", "--all-files")
    assert result.returncode == 1
    assert "--- a/templates/train-job.yaml" in result.stdout

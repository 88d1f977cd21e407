"""The pre-commit hooks, run by the real pre-commit against temporary git repositories.

The hooks come from a snapshot of this checkout's files as they are on disk, so uncommitted changes are
tested. Each repository names the snapshot in its .pre-commit-config.yaml, as a user's does, so pre-commit
installs policyc into its own environment once (slow) and every test of this module reuses it (`try-repo`
would install it afresh on every call). Under pytest-xdist they run on one worker (`--dist loadfile`), sharing it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from policyc.commands.cli import main
from tests.conftest import REPO, in_ci

# Without git the tests are skipped, but not under CI, which installs it: there they run, and fail.
pytestmark = pytest.mark.skipif(shutil.which("git") is None and not in_ci(), reason="git is not installed")
slow = pytest.mark.slow  # the real pre-commit installs policyc into its own environment

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
GOOD = (REPO / "policies" / "minimal.yaml").read_text()
BROKEN = GOOD.replace("gpuTier: a100", "gpuTier: a10")
KYVERNO = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team-label
spec:
  validationFailureAction: Enforce
  rules:
    - name: team-label
      match: {any: [{resources: {kinds: [Namespace]}}]}
      validate: {message: a team label is required, pattern: {metadata: {labels: {team: "?*"}}}}
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    return {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home"))}


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory, env) -> str:
    """A one-commit repository of this checkout's files as they are on disk, ignored files aside.

    Unlike `try-repo`, it takes untracked files too: new modules not yet added would break the install.
    """
    snapshot = tmp_path_factory.mktemp("policyc-snapshot")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout  # fmt: skip
    for rel in filter(None, listed.decode().split("\0")):
        if (REPO / rel).is_file():
            (snapshot / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, snapshot / rel)
    _git(snapshot, "init", "-q", env=env)
    _git(snapshot, "add", "-A", env=env)
    _git(snapshot, "commit", "-qm", "snapshot", env=env)
    return str(snapshot)


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


def _config(hooks_repo: str, hook: str, *settings: str) -> dict[str, str]:
    """A .pre-commit-config.yaml taking `hook` from the snapshot at its commit, as a user's takes it from a tag."""
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hooks_repo, capture_output=True, text=True).stdout
    config = f"repos:\n- repo: {hooks_repo}\n  rev: {rev.strip()}\n  hooks:\n  - id: {hook}\n"
    return {".pre-commit-config.yaml": config + "".join(f"    {line}\n" for line in settings)}


def _pre_commit(repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip


def test_hooks_file_settings() -> None:
    hooks = {h["id"]: h for h in YAML(typ="safe", pure=True).load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["policyc-validate"]["pass_filenames"] is True
    assert hooks["policyc-check"]["pass_filenames"] is False and hooks["policyc-check"]["require_serial"] is True
    assert hooks["policyc-check"]["entry"] == "policyc build --check"


@slow
def test_validate_hook_passes_a_good_policy_and_catches_a_broken_one(tmp_path, env, hooks_repo) -> None:
    repo = _repo(tmp_path, env, {"policies/good.yaml": GOOD, **_config(hooks_repo, "policyc-validate")})
    result = _pre_commit(repo, env, "run", "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    (repo / "policies" / "bad.yaml").write_text(BROKEN)
    _git(repo, "add", "-A", env=env)
    result = _pre_commit(repo, env, "run", "--all-files")
    assert result.returncode == 1
    assert (
        "policies/bad.yaml:" in result.stdout and "PC302" in result.stdout and "did you mean 'a100'?" in result.stdout
    )


@slow
def test_validate_hook_picks_policies_by_content_not_by_path(tmp_path, env, hooks_repo) -> None:
    files = {"policies/require-team-label.yaml": KYVERNO, "infra/gpu.yaml": GOOD,
             "charts/values.yaml": "replicas: {{ .Values.replicas }}\n"}  # fmt: skip
    repo = _repo(tmp_path, env, {**files, **_config(hooks_repo, "policyc-validate")})
    result = _pre_commit(repo, env, "run", "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    (repo / "infra" / "gpu.yaml").write_text(BROKEN)
    _git(repo, "add", "-A", env=env)
    result = _pre_commit(repo, env, "run", "--all-files")
    assert result.returncode == 1
    assert "infra/gpu.yaml:" in result.stdout and "PC302" in result.stdout
    assert "require-team-label" not in result.stdout and "values.yaml" not in result.stdout


@slow
def test_validate_hook_validates_the_policy_directory_of_a_changed_file(tmp_path, env, hooks_repo) -> None:
    """A team's file changed: the whole policy directory is validated, so a clash with a file that did not change
    shows (docs/teams.md)."""
    from tests.test_teams import PLATFORM, TEAM_A, TEAM_B

    files = {"cluster/platform.yaml": PLATFORM, "cluster/teams/a.yaml": TEAM_A, "cluster/teams/b.yaml": TEAM_B}
    repo = _repo(tmp_path, env, {**files, **_config(hooks_repo, "policyc-validate")})
    result = _pre_commit(repo, env, "run", "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    (repo / "cluster" / "teams" / "b.yaml").write_text(TEAM_B.replace("[ml-b]", "[ml-a]"))
    _git(repo, "add", "-A", env=env)
    result = _pre_commit(repo, env, "run", "--files", "cluster/teams/b.yaml")
    assert result.returncode == 1
    assert (
        "cluster/teams/b.yaml:7:20: error reference/team-claim-clash: namespace 'ml-a' is already claimed in "
        "cluster/teams/a.yaml:7" in result.stdout
    ), result.stdout


def _check_repo(tmp_path: Path, env: dict, hooks_repo: str) -> Path:
    """A repository with the minimal policy, its build in manifests/ and the policyc-check hook, committed.

    The snapshot builds the manifests: the checkout itself may change meanwhile (others edit it).
    """
    config = _config(hooks_repo, "policyc-check", "args: [policies/minimal.yaml, -o, manifests]")
    repo = _repo(tmp_path, env, {"policies/minimal.yaml": GOOD, **config})
    subprocess.run([sys.executable, "-m", "policyc", "build", "policies/minimal.yaml", "-o", "manifests"], cwd=repo,
                   env={**env, "PYTHONPATH": hooks_repo}, check=True, capture_output=True)  # fmt: skip
    _git(repo, "add", "-A", env=env)
    _git(repo, "commit", "-qm", "manifests", env=env)
    assert _pre_commit(repo, env, "run", "--all-files").returncode == 0
    return repo


@slow
def test_check_hook_catches_a_policy_edit_without_regenerating(tmp_path, env, hooks_repo) -> None:
    repo = _check_repo(tmp_path, env, hooks_repo)
    (repo / "policies" / "minimal.yaml").write_text(GOOD.replace("gpus: 8\n", "gpus: 4\n"))
    result = _pre_commit(repo, env, "run", "--all-files")
    assert result.returncode == 1
    assert "--- a/templates/train-job.yaml" in result.stdout


@slow
def test_check_hook_runs_when_only_the_output_changes(tmp_path, env, hooks_repo) -> None:
    repo = _check_repo(tmp_path, env, hooks_repo)
    job = repo / "manifests" / "templates" / "train-job.yaml"
    built = job.read_text()
    job.write_text(built.replace("minAvailable: 1\n", "minAvailable: 2\n"))
    _git(repo, "add", "manifests", env=env)
    result = _pre_commit(repo, env, "run")  # the staged files only: the hand edit, not the policy
    assert result.returncode == 1, result.stdout + result.stderr
    assert "--- a/templates/train-job.yaml" in result.stdout and "-  minAvailable: 2" in result.stdout
    job.write_text(built)
    _git(repo, "add", "manifests", env=env)
    _git(repo, "rm", "-q", "manifests/tenants/ml.yaml", env=env)  # a deletion alone stages no file to check
    result = _pre_commit(repo, env, "run")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "missing in manifests (the build would add them):\n  tenants/ml.yaml" in result.stdout


def test_validate_only_policies_skips_other_files_by_content(tmp_path) -> None:
    files = {
        "kyverno.yaml": KYVERNO.encode(),
        "values.yaml": b"replicas: {{ .Values.replicas }}\n",  # not YAML, and no policyc.io apiVersion
        "binary.yaml": bytes(range(256)) * 64,  # neither UTF-8 nor text
        "plan.json": b'{"apiVersion": "policyc.io/v1alpha1", "kind": "NodePlan"}',  # policyc's, not a policy
        "nested.yaml": b"kind: ConfigMap\ndata:\n  policy:\n    apiVersion: policyc.io/v1alpha1\n",
        "good.yaml": GOOD.encode(),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    paths = [str(tmp_path / name) for name in files]
    result = CliRunner().invoke(main, ["validate", "--only-policies", *paths])
    assert result.exit_code == 0 and result.stderr == "", result.output
    assert CliRunner().invoke(main, ["validate", str(tmp_path / "kyverno.yaml")]).exit_code == 1, "no flag: all"
    broken = tmp_path / "broken.yaml"
    broken.write_text('{"apiVersion": "policyc.io/v1alpha1", "kind": "ClusterPolicy", "spec": [}\n')
    result = CliRunner().invoke(main, ["validate", "--only-policies", *paths, str(broken)])
    assert result.exit_code == 1
    assert "broken.yaml:1:" in result.stderr and "error PC002" in result.stderr
    assert not any(name in result.stderr for name in files), "only broken.yaml is reported"

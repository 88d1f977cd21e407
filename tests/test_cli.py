"""The command line: exit codes, output directory handling, and no traceback ever."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from policyc import __version__
from policyc.commands.cli import main
from tests.conftest import REPO

AI_PROD = str(REPO / "policies" / "ai-prod.yaml")
MINIMAL = str(REPO / "policies" / "minimal.yaml")


def build(*args: str):
    return CliRunner().invoke(main, ["build", *args])


def tree(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_writes_the_tree(tmp_path) -> None:
    out = tmp_path / "out"
    result = build(AI_PROD, "-o", str(out))
    assert result.exit_code == 0, result.output
    files = tree(out)
    for expected in (
        "kustomization.yaml",
        "nodes/apply.sh",
        "nodes/plan.json",
        "cluster/priorityclasses.yaml",
        "tenants/team-a.yaml",
        "volcano/queues.yaml",
        "volcano/scheduler-configmap.yaml",
        "templates/llm-pretraining.yaml",
        "templates/llm-finetune.yaml",
        "templates/chat-serving.yaml",
    ):
        assert expected in files
    assert os.access(out / "nodes" / "apply.sh", os.X_OK)
    assert not os.access(out / "kustomization.yaml", os.X_OK)
    assert [p.name for p in tmp_path.iterdir()] == ["out"], "no staging directory is left behind"


def test_rebuild_replaces_the_whole_tree(tmp_path) -> None:
    out = tmp_path / "out"
    assert build(AI_PROD, "-o", str(out)).exit_code == 0
    assert build(MINIMAL, "-o", str(out)).exit_code == 0
    fresh = tmp_path / "fresh"
    assert build(MINIMAL, "-o", str(fresh)).exit_code == 0
    assert tree(out) == tree(fresh), "files of the previous policy are gone"


def test_refuses_to_replace_a_directory_it_did_not_write(tmp_path) -> None:
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    result = build(MINIMAL, "-o", str(precious))
    assert result.exit_code == 2
    assert "refusing to replace" in result.stderr
    assert tree(precious) == {"notes.txt": b"keep me"}


def test_failed_build_leaves_previous_output_intact(tmp_path) -> None:
    out = tmp_path / "out"
    assert build(AI_PROD, "-o", str(out)).exit_code == 0
    before = tree(out)
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO / "policies" / "ai-prod.yaml").read_text().replace("usage: inference", "usage: inferense"))
    result = build(str(bad), "-o", str(out))
    assert result.exit_code == 1
    assert "did you mean 'inference'?" in result.stderr
    assert tree(out) == before


def test_missing_policy_file_is_a_located_error(tmp_path) -> None:
    result = build(str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "error PC001" in result.stderr
    assert not (tmp_path / "out").exists()


def test_usage_errors_exit_2() -> None:
    assert CliRunner().invoke(main, ["build", MINIMAL]).exit_code == 2  # no -o
    assert CliRunner().invoke(main, ["frobnicate"]).exit_code == 2


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.stdout


def test_internal_errors_exit_3_without_traceback(tmp_path, monkeypatch) -> None:
    # A policyc bug, simulated by making a backend fail, must not show a traceback to the user.
    script = (
        "import sys, policyc.emit as e\n"
        "def boom(cluster, backend, provisioners): raise RuntimeError('simulated bug')\n"
        "e.emit = boom\n"
        "from policyc.commands.cli import run\n"
        f"sys.argv = ['policyc', 'build', {MINIMAL!r}, '-o', {str(tmp_path / 'out')!r}]\n"
        "run()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 3
    assert "internal error: RuntimeError: simulated bug" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("entry", [["-m", "policyc"]])
def test_module_entry_point(entry) -> None:
    result = subprocess.run([sys.executable, *entry, "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "build" in result.stdout


def policyc_process(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "policyc", *args], capture_output=True, text=True, **kwargs)


def test_process_flushes_its_output_before_it_ends(tmp_path) -> None:
    # The process ends without the interpreter's shutdown: everything printed and written must still be there.
    schema = policyc_process("schema")
    assert schema.returncode == 0, schema.stderr
    assert schema.stdout.rstrip().endswith("}") and len(schema.stdout) > 10_000
    out = tmp_path / "out"
    built = policyc_process("build", MINIMAL, "-o", str(out))
    assert built.returncode == 0, built.stderr
    assert tree(out) == tree_of_library_build(MINIMAL)


def tree_of_library_build(policy: str) -> dict[str, bytes]:
    import policyc

    return {name: f.data for name, f in policyc.compile(REPO / policy).files.items()}


def test_failed_process_keeps_its_exit_code_and_diagnostics(tmp_path) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("apiVersion: policyc.io/v1alpha1\nkind: ClusterPolicy\nspec: {}\n")
    result = policyc_process("validate", str(bad))
    assert result.returncode == 1
    assert f"{bad}:" in result.stderr and "error PC" in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [["--version"], ["schema"]])
def test_standard_output_on_a_full_disk_is_an_error_not_a_bug(args) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "policyc", *args], stdout=full, stderr=subprocess.PIPE)
    stderr = result.stderr.decode()
    assert result.returncode == 2
    assert stderr.strip() == "policyc: cannot write the output: No space left on device"


def test_a_reader_that_leaves_early_is_not_an_error_message() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "policyc", "schema"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # as `policyc schema | head -c 0` would
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert stderr == b""
    assert proc.returncode in (0, 1)  # 0 if the pipe took it all before closing, 1 as click reports EPIPE

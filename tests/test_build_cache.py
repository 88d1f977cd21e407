"""A rebuild compiles only the clusters a change touches (issue 29, point 4; policyc.output.records): the others'
previous output is reused, byte for byte what a compile would write, with the diagnostics it showed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import policyc.commands.cli
import policyc.output.records
from policyc.codes import Severity
from policyc.commands.cli import main
from policyc.diagnostics import Diagnostic, ObjectRef
from policyc.output.records import _decoded, _encoded, installed
from tests.conftest import REPO
from tests.test_fleet import EAST, WEST
from tests.test_teams import PLATFORM, TEAM_A, TEAM_B, fixed, write

REPO_URL = "https://git.example.com/fleet.git"
UNUSED_TIER = "    - {name: small, products: [NVIDIA-L4]}\n"
SPARE_TIER = UNUSED_TIER + "    - {name: spare, products: [NVIDIA-A100-80GB]}\n"
"""A tier no pool provides: a warning (tier-without-pools) in the platform's file, on every cluster."""
TEAM_C = TEAM_B.replace("-b", "-c").replace("{name: b}", "{name: c}")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    """The test's own directory of build records: the records in it are its builds'."""
    monkeypatch.setenv("POLICYC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch, cache: Path) -> Path:
    """Two clusters: east hosts team a only, west every team (a and b); the current directory is the fleet's parent,
    so that diagnostics name it 'pol'."""
    monkeypatch.chdir(tmp_path)
    files = {"platform.yaml": PLATFORM, "teams/a.yaml": TEAM_A, "teams/b.yaml": TEAM_B}
    return write(tmp_path / "pol", {**files, "clusters/east.yaml": EAST, "clusters/west.yaml": WEST})


@pytest.fixture
def compiled(monkeypatch) -> list[str | None]:
    """The clusters each build compiles (calls of the compile function the command line calls), in order."""
    calls: list[str | None] = []
    real = policyc.commands.cli.compile_policy

    def counted(*args, **kwargs):
        calls.append(kwargs.get("cluster"))
        return real(*args, **kwargs)

    monkeypatch.setattr(policyc.commands.cli, "compile_policy", counted)
    return calls


def build(*extra: str, output: str = "out") -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["build", "pol", "-o", output, "--repo-url", REPO_URL, *extra])
    return result.exit_code, result.stdout, result.stderr


def tree(root: Path) -> dict[str, tuple[bytes, bool]]:
    """Every file under `root`: its bytes and whether its owner may run it."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def rebuilt(compiled: list, *extra: str) -> list[str | None]:
    """The clusters a build of the fleet into out/ compiles; it must succeed."""
    compiled.clear()
    code, _, err = build(*extra)
    assert code == 0, err
    return list(compiled)


def test_a_second_build_of_an_unchanged_fleet_compiles_nothing(fleet: Path, tmp_path: Path, compiled: list) -> None:
    assert rebuilt(compiled) == ["east", "west"]
    first = tree(tmp_path / "out")
    inodes = {p: p.stat().st_ino for p in (tmp_path / "out").rglob("*") if p.is_file()}
    code, _, err = build()
    assert code == 0 and compiled == ["east", "west"], err  # not one more compile
    assert err == (
        f"pol: wrote {len(first)} files to out (the ApplicationSet deploys out/<cluster> of {REPO_URL}; every cluster "
        "unchanged since the last build: reused)\n"
    )
    assert tree(tmp_path / "out") == first
    assert all(p.stat().st_ino == inode for p, inode in inodes.items())  # linked as unchanged, not rewritten
    code, _, err = build("--check")
    assert code == 0 and err == "out is up to date with pol (every cluster unchanged since the last build: reused)\n"
    assert compiled == ["east", "west"]


def test_a_policy_file_is_a_fleet_of_one(tmp_path: Path, monkeypatch, cache: Path, compiled: list) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text((REPO / "policies" / "minimal.yaml").read_text())
    runner = CliRunner()
    assert runner.invoke(main, ["build", "policy.yaml", "-o", "out"]).exit_code == 0
    result = runner.invoke(main, ["build", "policy.yaml", "-o", "out"])
    assert result.exit_code == 0 and compiled == [None]
    assert result.stderr.endswith(" files to out (unchanged since the last build: reused)\n")
    assert runner.invoke(main, ["build", "policy.yaml", "-o", "out", "--no-cache"]).exit_code == 0
    assert compiled == [None, None]


def test_a_changed_team_recompiles_exactly_the_clusters_that_host_it(
    fleet: Path, tmp_path: Path, compiled: list
) -> None:
    rebuilt(compiled)
    write(fleet, {"teams/b.yaml": fixed(TEAM_B, "gpus: 8", "gpus: 4")})  # b: west only
    assert rebuilt(compiled) == ["west"]
    partly_reused = tree(tmp_path / "out")
    code, _, err = build("--no-cache", output="cold")
    assert code == 0, err
    cold = tree(tmp_path / "cold")
    set_file = "applicationset.yaml"  # it names its directory: out/ or cold/
    assert partly_reused.pop(set_file)[0] == cold.pop(set_file)[0].replace(b"path: cold/", b"path: out/")
    assert partly_reused == cold
    write(fleet, {"teams/a.yaml": fixed(TEAM_A, "gpus: 8", "gpus: 4")})  # a: both
    assert rebuilt(compiled) == ["east", "west"]


def test_a_change_in_a_team_file_hosted_by_one_cluster_and_the_final_line(
    fleet: Path, tmp_path: Path, compiled: list
) -> None:
    rebuilt(compiled)
    write(fleet, {"teams/b.yaml": fixed(TEAM_B, "gpus: 8", "gpus: 4")})
    compiled.clear()
    code, _, err = build()
    assert code == 0 and compiled == ["west"]
    files = len(tree(tmp_path / "out"))
    assert err == (
        f"pol: wrote {files} files to out (the ApplicationSet deploys out/<cluster> of {REPO_URL}; cluster east "
        "unchanged since the last build: reused)\n"
    )
    assert 'nvidia.com/gpu: "4"' in (tmp_path / "out" / "west" / "templates" / "train-b.yaml").read_text()


@pytest.mark.parametrize(
    ("change", "recompiled"),
    [
        pytest.param({"platform.yaml": fixed(PLATFORM, "value: 1000", "value: 1001")}, ["east", "west"], id="platform"),
        pytest.param({"clusters/east.yaml": fixed(EAST, '"1.34"', '"1.33"')}, ["east"], id="east"),
        pytest.param({"clusters/west.yaml": WEST + "  quotaScale: 2\n"}, ["west"], id="west"),
        pytest.param({"teams/c.yaml": TEAM_C}, ["west"], id="a new team: west hosts every team, east only a"),
    ],
)
def test_a_change_recompiles_the_clusters_that_read_it(
    fleet: Path, compiled: list, change: dict, recompiled: list
) -> None:
    rebuilt(compiled)
    write(fleet, change)
    assert rebuilt(compiled) == recompiled
    assert rebuilt(compiled) == []


def test_policyc_s_identity_and_the_policy_s_name_are_in_the_key(
    fleet: Path, tmp_path: Path, compiled: list, monkeypatch
) -> None:
    rebuilt(compiled)
    monkeypatch.setattr(policyc.output.records, "identity", lambda: "another policyc")
    assert rebuilt(compiled) == ["east", "west"]
    assert rebuilt(compiled) == []
    # The same files named otherwise ('./pol/teams/a.yaml' in diagnostics): every cluster again.
    compiled.clear()
    result = CliRunner().invoke(main, ["build", "./pol", "-o", "out", "--repo-url", REPO_URL])
    assert result.exit_code == 0 and compiled == ["east", "west"], result.stderr


def test_a_hand_edited_deleted_or_added_output_file_recompiles_its_cluster(
    fleet: Path, tmp_path: Path, compiled: list
) -> None:
    rebuilt(compiled)
    written = tree(tmp_path / "out")
    edited = tmp_path / "out" / "east" / "templates" / "train-a.yaml"
    edited.write_text(edited.read_text().replace("gpu", "gpu "))
    assert rebuilt(compiled) == ["east"]
    assert tree(tmp_path / "out") == written
    (tmp_path / "out" / "west" / "templates" / "train-b.yaml").unlink()
    assert rebuilt(compiled) == ["west"]
    (tmp_path / "out" / "west" / "notes.txt").write_text("mine")
    assert rebuilt(compiled) == ["west"]
    os.chmod(tmp_path / "out" / "east" / "kustomization.yaml", 0o755)  # the same bytes, another executable bit
    assert rebuilt(compiled) == ["east"]
    assert tree(tmp_path / "out") == written


def test_check_of_a_hand_edited_output_says_it_differs(fleet: Path, tmp_path: Path, compiled: list) -> None:
    rebuilt(compiled)
    edited = tmp_path / "out" / "west" / "kustomization.yaml"
    edited.write_text(edited.read_text() + "# mine\n")
    compiled.clear()
    code, out, _ = build("--check")
    assert code == 1 and compiled == ["west"] and "+# mine" not in out and "-# mine" in out


RECORD_DAMAGE = {
    "cut short": lambda path: path.write_bytes(path.read_bytes()[:-20]),
    "not UTF-8": lambda path: path.write_bytes(b"\xff" + path.read_bytes()),
    "not a file": lambda path: (path.unlink(), path.mkdir()),
    "another shape": lambda path: path.write_text(json.dumps([json.loads(path.read_text())])),
    "a file without its digest": lambda path: _edited(path, lambda r: r["files"][0].pop()),
    "a diagnostic of a wrong type": lambda path: _edited(path, lambda r: r["diagnostics"].append({"message": 1})),
}


def _edited(path: Path, change) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize("damage", RECORD_DAMAGE)
def test_a_record_that_cannot_be_read_is_a_miss(fleet: Path, tmp_path: Path, cache: Path, compiled: list, damage):
    rebuilt(compiled)
    written = tree(tmp_path / "out")
    records = sorted((cache / "builds").iterdir())
    assert len(records) == 2  # a record per cluster
    for record in records:
        RECORD_DAMAGE[damage](record)
    assert rebuilt(compiled) == ["east", "west"]
    assert tree(tmp_path / "out") == written
    # written again, but where a directory stands in for the record
    assert rebuilt(compiled) == ([] if damage != "not a file" else ["east", "west"])


def test_an_unwritable_cache_directory_never_fails_a_build(
    fleet: Path, tmp_path: Path, compiled: list, monkeypatch
) -> None:
    (tmp_path / "taken").write_text("a file where the cache directory would be")
    monkeypatch.setenv("POLICYC_CACHE_DIR", str(tmp_path / "taken"))
    assert rebuilt(compiled) == ["east", "west"]
    code, _, err = build()
    assert code == 0 and compiled == ["east", "west", "east", "west"]
    written = len(tree(tmp_path / "out"))
    assert err == f"pol: wrote {written} files to out (the ApplicationSet deploys out/<cluster> of {REPO_URL})\n"


def test_no_cache_and_standard_output_neither_read_nor_write_records(
    fleet: Path, tmp_path: Path, cache: Path, compiled: list
) -> None:
    assert rebuilt(compiled, "--no-cache") == ["east", "west"]
    assert not cache.exists()
    rebuilt(compiled)
    assert rebuilt(compiled, "--no-cache") == ["east", "west"]
    records = {p: p.read_bytes() for p in (cache / "builds").iterdir()}
    result = CliRunner().invoke(main, ["build", "pol", "--cluster", "east", "-o", "-"])
    assert result.exit_code == 0 and result.stdout.startswith("# Generated by policyc")
    assert {p: p.read_bytes() for p in (cache / "builds").iterdir()} == records


def test_the_cache_directory_is_found_as_documented(monkeypatch, tmp_path: Path) -> None:
    from policyc.output.records import cache_directory

    monkeypatch.setenv("POLICYC_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_directory() == tmp_path / "mine"
    monkeypatch.delenv("POLICYC_CACHE_DIR")
    assert cache_directory() == tmp_path / "xdg" / "policyc"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_directory() == tmp_path / "home" / ".cache" / "policyc"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_warnings_of_a_reused_cluster_are_shown_again(fleet: Path, compiled: list, fmt: str) -> None:
    write(fleet, {"platform.yaml": fixed(PLATFORM, UNUSED_TIER, SPARE_TIER)})
    compiled.clear()
    first = build("--format", fmt)
    assert first[0] == 0 and compiled == ["east", "west"]
    again = build("--format", fmt)
    assert again[0] == 0 and compiled == ["east", "west"]
    shown = first[2] if fmt == "text" else first[1]
    warning = "pol/platform.yaml:10:14: warning PC416: " if fmt == "text" else '"code": "PC416"'
    assert shown.count(warning) == 1, shown
    assert again[1] == first[1]
    assert again[2].splitlines()[:-1] == first[2].splitlines()[:-1]  # all but the final line
    assert again[2].splitlines()[-1].endswith("every cluster unchanged since the last build: reused)")


def test_an_error_reading_the_directory_still_fails_the_build(fleet: Path, compiled: list) -> None:
    rebuilt(compiled)
    write(fleet, {"teams/broken.yaml": "kind: [Tenant\n"})
    compiled.clear()
    code, _, err = build()
    assert code == 1 and compiled == ["east", "west"]
    assert err.startswith("pol/teams/broken.yaml:1:7: error PC002: ")
    (fleet / "teams" / "broken.yaml").unlink()
    write(fleet, {"clusters/east.yaml": fixed(EAST, "hostedTeams: [a]", "hostedTeams: [a, z]")})
    compiled.clear()
    code, _, err = build()
    assert code == 1 and compiled == ["east"]  # east's own mistake: west, unchanged, is reused; nothing is written
    assert "pol/clusters/east.yaml:13:20: error reference/cluster-unknown-name: " in err


def test_the_installed_distributions_include_every_dependency() -> None:
    """Their versions are part of policyc's identity: every dependency pyproject.toml names, and theirs, is listed."""
    import re
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    required = {re.split(r"[<>=;\[ ]", line, maxsplit=1)[0].lower() for line in project["dependencies"]}
    listed = {re.sub(r"-[^-]+\.(dist|egg)-info$", "", n).lower().replace("_", "-") for n in installed()}
    assert {r.replace(".", "-").replace("_", "-") for r in required} | {"pydantic-core"} <= {
        n.replace(".", "-") for n in listed
    }


def test_a_diagnostic_round_trips_through_a_record() -> None:
    every_field = Diagnostic(
        "PC416", Severity.WARNING, "a message", ("spec", "gpuTiers", 2), "a hint", True, ("spec", "nodePools"),
        11, 7, ObjectRef("v1", "Namespace", None, "ml-a"), "pol/platform.yaml",
    )  # fmt: skip
    assert _decoded(json.loads(json.dumps(_encoded(every_field)))) == every_field
    bare = Diagnostic("PC416", Severity.NOTE, "m")
    assert _decoded(json.loads(json.dumps(_encoded(bare)))) == bare
    with pytest.raises(ValueError):
        _decoded({**_encoded(bare), "code": "PC000"})
    with pytest.raises(TypeError):
        _decoded({**_encoded(bare), "path": ["spec", 1.5]})


def test_policyc_s_identity_covers_its_files_and_schemas(tmp_path: Path, monkeypatch) -> None:
    """A change to any file of the package (source or data) or of its schemas, not only to its version, is another
    policyc: no record it wrote is used."""
    import shutil

    import policyc.resources

    package, schemas = tmp_path / "policyc", tmp_path / "schemas"
    shutil.copytree(REPO / "policyc" / "output", package / "output", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "schemas", schemas)
    monkeypatch.setattr(policyc.output.records, "__file__", str(package / "output" / "records.py"))
    monkeypatch.setattr(policyc.resources, "schemas_dir", lambda: schemas)
    compute = policyc.output.records.identity.__wrapped__
    seen = {compute()}
    assert compute() in seen  # the same files: the same identity
    (package / "output" / "write.py").write_text((package / "output" / "write.py").read_text() + "# changed\n")
    seen.add(compute())
    (schemas / "policy.schema.json").write_text("{}")
    seen.add(compute())
    (package / "output" / "__pycache__").mkdir()
    (package / "output" / "__pycache__" / "write.cpython-311.pyc").write_bytes(b"compiled")  # not a source
    assert compute() in seen
    assert len(seen) == 3

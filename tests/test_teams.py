"""A policy directory (issue 29): one platform document and the teams' documents build as the same policy in one
file would, and every mistake across files is an error in the right file, at the right line, with a hint that works.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from policyc.commands.cli import main
from policyc.compiler import compile_file
from policyc.language.load import load_file
from policyc.output.formats import render_text, to_github, to_json, to_sarif
from tests.conftest import GOLDEN, POLICIES, REPO

EXAMPLES = sorted(POLICIES.glob("*.yaml"))


def split(policy: Path, directory: Path) -> None:
    """Write `policy` as a policy directory: its platform file (the same name, without tenants and workloads) and a
    file per tenant with the workloads that run as it. JSON is YAML: the data goes out as JSON, one document a file."""
    data = load_file(policy).data
    spec = data["spec"]
    tenants, workloads = spec.pop("tenants", []), spec.pop("workloads", [])
    directory.mkdir()
    (directory / policy.name).write_text(json.dumps(data, indent=1))
    (directory / "teams").mkdir()
    for tenant in tenants:
        team = {
            "apiVersion": data["apiVersion"],
            "kind": "Tenant",
            "metadata": {"name": tenant["name"]},
            "spec": {"tenants": [tenant], "workloads": [w for w in workloads if w["tenant"] == tenant["name"]]},
        }
        (directory / "teams" / f"{tenant['name']}.yaml").write_text(json.dumps(team, indent=1))
    assert sum(len(json.loads(f.read_text())["spec"]["workloads"]) for f in (directory / "teams").iterdir()) == len(
        workloads
    ), "every workload runs as a tenant of the policy"


SHIPPED = POLICIES / "ai-prod-teams"
"""The shipped policy directory: policies/ai-prod.yaml as a platform file and a file per team."""


def test_the_shipped_directory_builds_the_goldens_of_its_one_file_twin() -> None:
    """golden/ai-prod/, byte for byte: the directory's platform file has the example's name, which headers give."""
    built = compile_file(SHIPPED, "policies/ai-prod-teams")
    assert built.ok, render_text(built.report)
    assert built.report.diagnostics == []
    golden = GOLDEN / "ai-prod"
    frozen = {p.relative_to(golden).as_posix(): p.read_bytes() for p in golden.rglob("*") if p.is_file()}
    assert {name: file.data for name, file in built.files.items()} == frozen
    assert len(list((SHIPPED / "teams").glob("*.yaml"))) == 3


def test_the_team_schema_is_checked_in_and_takes_the_split_examples(tmp_path: Path) -> None:
    """schemas/tenant.schema.json (`policyc schema --team`) is up to date; every team file of the split examples, and
    the file `policyc init --team` writes, validate against it; a team file with a platform field does not."""
    from jsonschema import Draft202012Validator
    from ruamel.yaml import YAML

    from policyc.commands.init import team_file
    from policyc.language.model import json_schema_text

    assert (REPO / "schemas" / "tenant.schema.json").read_text() == json_schema_text(team=True), (
        "schemas/tenant.schema.json is stale: run `policyc schema --team > schemas/tenant.schema.json`"
    )
    validator = Draft202012Validator(json.loads(json_schema_text(team=True)))
    teams = [
        YAML(typ="safe").load(text)
        for text in [team_file("vision")] + [f.read_text() for f in sorted((SHIPPED / "teams").glob("*.yaml"))]
    ]
    platform = YAML(typ="safe").load((SHIPPED / "ai-prod.yaml").read_text())
    policy_schema = json.loads((REPO / "schemas" / "policy.schema.json").read_text())
    assert [e.message for e in Draft202012Validator(policy_schema).iter_errors(platform)] == []
    for policy in EXAMPLES:
        split(policy, tmp_path / policy.stem)
        teams += [json.loads(f.read_text()) for f in sorted((tmp_path / policy.stem / "teams").iterdir())]
    assert len(teams) > len(EXAMPLES)
    assert [e.message for team in teams for e in validator.iter_errors(team)] == []
    teams[0]["spec"]["gpuTiers"] = []
    assert [e.message for e in validator.iter_errors(teams[0])] == [
        "Additional properties are not allowed ('gpuTiers' was unexpected)"
    ]


@pytest.mark.parametrize("policy", EXAMPLES, ids=lambda p: p.stem)
def test_one_file_and_many_build_the_same_bytes(policy: Path, tmp_path: Path) -> None:
    """Generated files name the file of the policy's ClusterPolicy: the platform file keeps the example's name, so
    every byte compares, headers included."""
    split(policy, tmp_path / "split")
    whole = compile_file(policy)
    many = compile_file(tmp_path / "split", "split")
    assert whole.ok and many.ok, render_text(many.report)
    assert len(list((tmp_path / "split" / "teams").iterdir())) >= 1
    assert sorted(many.files) == sorted(whole.files)
    for name, file in whole.files.items():
        assert many.files[name] == file, name


PLATFORM = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: shared}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  gpuTiers:
    - {name: high, products: [NVIDIA-H100-80GB]}
    - {name: small, products: [NVIDIA-L4]}
  nodePools:
    - {name: train, usage: training, nodes: ["gpu-[1-4]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
    - {name: serve, usage: inference, nodes: ["l4-[1-4]"], gpu: {product: NVIDIA-L4, count: 4},
       allocatable: {cpu: "48", memory: 192Gi}}
  priorityClasses:
    - {name: prod, value: 1000}
    - {name: low, value: 100, globalDefault: true}
  scheduler: {backend: volcano}
  teams:
    priorityClasses: [low]
    gpuTiers: [high]
    maxQuota: {gpu: 16}
"""
# spec.teams.priorityClasses is on line 20, gpuTiers on 21, maxQuota on 22.

TEAM_A = """\
apiVersion: policyc.io/v1alpha1
kind: Tenant
metadata: {name: a}
spec:
  tenants:
    - name: team-a
      namespaces: [ml-a]
      priorityClasses: [low]
      queue: {capability: {gpu: 16}}
      quota: {requests: {gpu: 16}}
  workloads:
    - {name: train-a, type: training, tenant: team-a, gpuTier: high, gpus: 8, priorityClass: low}
"""

TEAM_B = """\
apiVersion: policyc.io/v1alpha1
kind: Tenant
metadata: {name: b}
spec:
  tenants:
    - name: team-b
      namespaces: [ml-b]
      priorityClasses: [low]
      queue: {capability: {gpu: 8}}
      quota: {requests: {gpu: 8}}
  workloads:
    - {name: train-b, type: training, tenant: team-b, gpuTier: high, gpus: 8, priorityClass: low}
"""


def write(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    return directory


def lines(directory: Path) -> list[str]:
    """The diagnostics of building `directory` (named 'pol' in them), as `policyc validate` prints them."""
    return render_text(compile_file(directory, "pol").report).splitlines()


def fixed(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.fixture
def policy_dir(tmp_path: Path) -> Path:
    return write(tmp_path / "pol", {"platform.yaml": PLATFORM, "teams/a.yaml": TEAM_A, "teams/b.yaml": TEAM_B})


def test_a_valid_directory_builds(policy_dir: Path, monkeypatch) -> None:
    compilation = compile_file(policy_dir, "pol")
    assert compilation.ok, render_text(compilation.report)
    assert "templates/train-a.yaml" in compilation.files and "templates/train-b.yaml" in compilation.files
    monkeypatch.chdir(policy_dir)  # the current directory: its files are named as they are, without './'
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "[ml-b]", "[ml-a]")})
    assert render_text(compile_file(".", ".").report).startswith("teams/b.yaml:7:20: error reference/team-claim-clash")


def test_a_second_team_claiming_a_namespace(policy_dir: Path) -> None:
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "[ml-b]", "[ml-a]")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:7:20: error reference/team-claim-clash: namespace 'ml-a' is already claimed in "
        "pol/teams/a.yaml:7; choose another namespace for tenant 'team-b'"
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_a_second_team_claiming_a_tenant_name(policy_dir: Path) -> None:
    write(policy_dir, {"teams/b.yaml": TEAM_B.replace("team-b", "team-a")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:6:13: error reference/team-claim-clash: tenant 'team-a' is already claimed in "
        "pol/teams/a.yaml:6; rename the tenant, or declare it in one file only"
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_a_workload_of_another_teams_tenant(policy_dir: Path) -> None:
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "tenant: team-b", "tenant: team-a")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:12:47: error reference/team-foreign-tenant: workload 'train-b' runs as tenant 'team-a', "
        "which this team document does not declare; a team's workloads run as its own tenants; write tenant: team-b"
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_a_class_and_a_tier_beyond_the_grant(policy_dir: Path) -> None:
    team = fixed(TEAM_B, "priorityClasses: [low]", "priorityClasses: [low, prod]")
    team = fixed(team, "gpuTier: high, gpus: 8, priorityClass: low", "gpuTier: small, gpus: 1, priorityClass: prod")
    write(policy_dir, {"teams/b.yaml": team})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:8:30: error meaning/team-beyond-grant: 'prod' is not granted to teams: "
        "spec.teams.priorityClasses (pol/platform.yaml:20) lists low; use one of low, or ask the platform team to "
        "grant 'prod'",
        "pol/teams/b.yaml:12:64: error meaning/team-beyond-grant: 'small' is not granted to teams: spec.teams.gpuTiers "
        "(pol/platform.yaml:21) lists high; use one of high, or ask the platform team to grant 'small'",
        "pol/teams/b.yaml:12:95: error meaning/team-beyond-grant: 'prod' is not granted to teams: "
        "spec.teams.priorityClasses (pol/platform.yaml:20) lists low; use one of low, or ask the platform team to "
        "grant 'prod'",
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_a_grant_written_wrong_is_reported_in_the_platform_only(policy_dir: Path) -> None:
    """A grant list with an item that is no name was enforced with that item left out: with none left, every team
    file got "lists ; use one of , or ask ..." beside the platform's own error."""
    platform = (policy_dir / "platform.yaml").read_text()
    write(policy_dir, {"platform.yaml": fixed(platform, "priorityClasses: [low]\n    gpuTiers", "priorityClasses: "
                                              "[{name: low}]\n    gpuTiers")})  # fmt: skip
    found = lines(policy_dir)
    assert found and all(line.startswith("pol/platform.yaml:20:") for line in found), found
    write(policy_dir, {"platform.yaml": fixed(platform, "priorityClasses: [low]\n    gpuTiers", "priorityClasses: "
                                              "[]\n    gpuTiers")})  # fmt: skip
    assert "lists none; ask the platform team to grant 'low'" in "\n".join(lines(policy_dir))


def test_a_tenant_without_classes_may_use_every_one(policy_dir: Path) -> None:
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "      priorityClasses: [low]\n", "")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:6:7: error meaning/team-beyond-grant: tenant 'team-b' states no priorityClasses, so it may "
        "use every class; teams may use low (pol/platform.yaml:20); add priorityClasses: [low] to the tenant"
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_more_quota_than_a_team_may_take(policy_dir: Path) -> None:
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "requests: {gpu: 8}", "requests: {gpu: 24}")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:10:25: error meaning/team-beyond-grant: the team's tenants ask for 24 of 'gpu', more than "
        "spec.teams.maxQuota grants a team (16, pol/platform.yaml:22); lower quota.requests.gpu so that the team's "
        "tenants take at most 16"
    ]
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "      quota: {requests: {gpu: 8}}\n", "")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:6:7: error meaning/team-beyond-grant: tenant 'team-b' takes no bounded 'gpu': "
        "spec.teams.maxQuota (pol/platform.yaml:22) bounds the team's to 16; add quota: {requests: {gpu: <at most "
        "16>}} to the tenant"
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_a_team_document_declares_only_tenants_and_workloads(policy_dir: Path) -> None:
    write(policy_dir, {"teams/b.yaml": TEAM_B + "  priorityClasses: [{name: mine, value: 5000}]\n"})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:13:3: error shape/team-document: a team document declares only tenants and workloads, not "
        "'priorityClasses'; remove it from this file; spec.priorityClasses is the platform's (pol/platform.yaml)"
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_a_document_of_another_kind(policy_dir: Path) -> None:
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "kind: Tenant", "kind: Team")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:2:7: error shape/team-document: a policy directory holds a platform document and team "
        "documents; this one has kind 'Team'; write kind: Tenant for a team's tenants and workloads, or move the "
        "file out of the directory"
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hint followed
    assert lines(policy_dir) == []


def test_no_platform_document_or_two(tmp_path: Path) -> None:
    none = write(tmp_path / "pol", {"teams/a.yaml": TEAM_A})
    assert lines(none) == [
        "pol:1:1: error file/policy-directory: pol holds no platform document (kind: ClusterPolicy); add one, e.g. "
        "`policyc init pol/platform.yaml`"
    ]
    write(none, {"z.yaml": PLATFORM, "platform.yaml": PLATFORM})
    assert lines(none) == [
        "pol/z.yaml:2:7: error file/policy-directory: a second platform document (kind: ClusterPolicy); the first is "
        "in pol/platform.yaml:2; a policy directory has one platform document: merge the two, or move one out of the "
        "directory"
    ]


def test_a_misspelt_platform_kind_is_reported_where_it_is_written(policy_dir: Path) -> None:
    """`kind: Clusterpolicy`: the hint was to add a platform file with policyc init, beside the misspelt one; now the
    line is at the misspelling, and following its hint builds, whole or as one team's check."""
    write(policy_dir, {"platform.yaml": fixed(PLATFORM, "kind: ClusterPolicy", "kind: Clusterpolicy")})
    expected = (
        "pol/platform.yaml:2:7: error file/policy-directory: pol holds no platform document (kind: ClusterPolicy); "
        "this document has kind 'Clusterpolicy'; write kind: ClusterPolicy"
    )
    assert lines(policy_dir) == [expected]
    code, stderr = cli("validate", str(policy_dir / "teams" / "a.yaml"), "--platform", str(policy_dir))
    assert code == 1 and "this document has kind 'Clusterpolicy'; write kind: ClusterPolicy" in stderr
    write(policy_dir, {"platform.yaml": PLATFORM})
    assert lines(policy_dir) == []


def test_errors_of_the_language_point_into_the_team_file(policy_dir: Path) -> None:
    """A diagnostic of a later stage (the parse, the resolver) names the item as the team's file numbers it."""
    second = "    - {name: team-b2, namespaces: [ml-b2], priorityClasses: [low], quota: {requests: {gpu: 4, cpu: x}}}\n"
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "  workloads:\n", second + "  workloads:\n")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:11:100: error PC204: 'tenants[1].quota.requests.cpu': 'x' is not a quantity: expected a "
        "number with an optional suffix, such as '500m', '2', '1.5Gi' or '1e3'"
    ]
    report = compile_file(policy_dir, "pol").report
    assert json.loads(to_json([report]))["diagnostics"][0]["file"] == "pol/teams/b.yaml"
    location = json.loads(to_sarif([report]))["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    region = {"startLine": 11, "startColumn": 100}
    assert location == {"artifactLocation": {"uri": "pol/teams/b.yaml"}, "region": region}
    assert to_github([report]).startswith(
        "::error file=pol/teams/b.yaml,line=11,col=100,title=PC204 invalid-quantity::"
    )


def test_a_file_may_hold_several_documents(policy_dir: Path) -> None:
    (policy_dir / "teams" / "b.yaml").unlink()
    write(policy_dir, {"teams/a.yaml": TEAM_A + "---\n" + TEAM_B})
    compilation = compile_file(policy_dir, "pol")
    assert compilation.ok, render_text(compilation.report)
    assert "templates/train-b.yaml" in compilation.files


def cli(*args: str) -> tuple[int, str]:
    """Exit code and standard error of `policyc ARGS` (diagnostics go to standard error)."""
    from click.testing import CliRunner

    from policyc.commands.cli import main

    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stderr


def test_a_team_file_checked_alone_against_the_platform(policy_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """A team's CI has its own file and the platform's: another team's broken file is not read, a clash with it not
    checked (a note says so)."""
    monkeypatch.chdir(tmp_path)
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "[ml-b]", "[ml-a]"), "teams/c.yaml": "kind: [unclosed\n"})
    code, err = cli("validate", "pol/teams/b.yaml", "--platform", "pol")
    assert code == 0, err
    assert "a tenant, namespace or workload name another team's file also claims is not checked" in err
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "requests: {gpu: 8}", "requests: {gpu: 24}")})
    code, err = cli("validate", "pol/teams/b.yaml", "--platform", "pol")
    assert code == 1
    assert err.startswith(
        "pol/teams/b.yaml:10:25: error meaning/team-beyond-grant: the team's tenants ask for 24 of 'gpu', more than "
        "spec.teams.maxQuota grants a team (16, pol/platform.yaml:22)"
    )
    code, err = cli("validate", "pol")  # the whole directory reads every file
    assert code == 1 and "pol/teams/c.yaml:1:7: error PC002" in err, err


def test_a_team_check_shows_no_platform_warning_that_holds_only_without_the_other_teams(monkeypatch) -> None:
    """ai-prod-teams: only team-b's workload autoscales. Team a's check left team-b's file out and warned, in the
    platform's file, that spec.autoscaling has no effect, with the hint to remove it (which would break team b)."""
    monkeypatch.chdir(REPO)
    code, err = cli("validate", "policies/ai-prod-teams/teams/team-a.yaml", "--platform", "policies/ai-prod-teams")
    assert code == 0
    assert "warning" not in err and "PC493" not in err
    assert err.startswith("policyc: note: checked against policies/ai-prod-teams's platform and cluster documents only")


def test_platform_given_its_file_or_as_a_team(policy_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """--platform names the directory: its platform file instead is told the directory; the platform file checked
    as a team's is told to check its directory (not to write kind: Tenant)."""
    monkeypatch.chdir(tmp_path)
    code, err = cli("validate", "pol/teams/a.yaml", "--platform", "pol/platform.yaml")
    assert code == 2
    assert (
        "pol/platform.yaml is a file; give the policy directory that holds the platform document: --platform pol"
        in (err)
    )
    code, err = cli("validate", "pol/platform.yaml", "--platform", "pol")
    assert code == 1
    assert err.splitlines()[0] == (
        "pol/platform.yaml:2:7: error shape/team-document: --platform checks a team's file, and this is the platform "
        "document (kind: ClusterPolicy); check it with its directory: `policyc validate pol`"
    )
    assert cli("validate", "pol")[0] == 0


def test_an_output_directory_inside_the_policy_directory_is_not_read(policy_dir: Path, tmp_path, monkeypatch) -> None:
    """`policyc build pol -o pol/manifests`, then `policyc validate pol`: each generated object was read as a team
    document of another kind (dozens of errors); the files policyc wrote are its output, never the policy."""
    monkeypatch.chdir(tmp_path)
    assert cli("build", "pol", "-o", "pol/manifests")[0] == 0
    assert (policy_dir / "manifests" / "kustomization.yaml").is_file()
    assert lines(policy_dir) == []
    assert cli("build", "pol", "-o", "pol/manifests", "--check")[0] == 0
    (policy_dir / "teams" / "c.yaml").write_text("kind: Pod\n")  # a file of the user's own is still read
    assert lines(policy_dir)[0].startswith("pol/teams/c.yaml:1:7: error shape/team-document:")


def test_a_team_s_file_given_as_a_policy_names_its_directory(policy_dir: Path, tmp_path, monkeypatch) -> None:
    """`policyc validate pol/teams/a.yaml`: a dozen errors (\'kind\' must be 'ClusterPolicy'; write ClusterPolicy, a
    hint that breaks the file); now one usage line naming the directory, and each of its commands works."""
    monkeypatch.chdir(tmp_path)
    code, err = cli("validate", "pol/teams/a.yaml")
    assert code == 2
    assert err.splitlines()[-1] == (
        "Error: pol/teams/a.yaml is a team's document (kind: Tenant) of a policy directory, `pol`: give `pol` "
        "instead; or check the file against the platform alone: `policyc validate pol/teams/a.yaml --platform pol`"
    )
    assert cli("validate", "pol")[0] == 0
    assert cli("validate", "pol/teams/a.yaml", "--platform", "pol")[0] == 0
    code, err = cli("build", "pol/teams/a.yaml", "-o", "out")
    assert code == 2 and err.splitlines()[-1].endswith("of a policy directory, `pol`: give `pol` instead")
    write(tmp_path, {"alone/lone.yaml": TEAM_A})
    monkeypatch.chdir(tmp_path / "alone")
    code, err = cli("validate", "lone.yaml")
    assert (
        code == 2 and "lone.yaml is a team's document (kind: Tenant) of a policy directory, not a policy: give " in err
    )


def test_init_team_names_the_directory_in_its_next_step(tmp_path, monkeypatch) -> None:
    """The next step was `--platform <policy directory>` even inside one: now it is the directory, ready to paste."""
    monkeypatch.chdir(tmp_path)
    from click.testing import CliRunner

    from policyc.commands.cli import main

    assert cli("init", "st/platform.yaml")[0] == 0
    result = CliRunner().invoke(main, ["init", "--team", "vision", "st/teams/vision.yaml"])
    assert result.exit_code == 0
    assert result.stderr == (
        "wrote st/teams/vision.yaml, fitted to st's platform (it validates); next: edit its values, and "
        "`policyc validate st`\n"
    )
    assert cli("validate", "st")[0] == 0  # the next step, as printed
    assert cli("init", "--team", "nlp", "nlp.yaml")[0] == 0  # in no policy directory: the directory is the user's
    assert cli("validate", "nlp.yaml", "--platform", "st")[0] == 0


@pytest.mark.parametrize("policy", [*EXAMPLES, SHIPPED, POLICIES / "fleet"], ids=lambda p: p.stem)
def test_init_team_fits_the_file_to_the_platform_of_its_directory(policy: Path, tmp_path: Path, monkeypatch) -> None:
    """The file `init --team` wrote named tier 'large' and class 'training', which no shipped platform has: six
    errors in the shipped teams' example. Fitted to the platform, it validates in every example, alone and with its
    directory (every cluster of a fleet), without a diagnostic of its own."""
    import shutil

    monkeypatch.chdir(tmp_path)
    if policy.is_dir():
        shutil.copytree(policy, tmp_path / "pol")
    else:
        split(policy, tmp_path / "pol")
    result = CliRunner().invoke(main, ["init", "--team", "newteam", "pol/teams/newteam.yaml"])
    assert result.exit_code == 0 and "fitted to pol's platform (it validates)" in result.stderr, result.stderr
    assert cli("validate", "pol/teams/newteam.yaml", "--platform", "pol")[0] == 0
    code, err = cli("validate", "pol")
    assert code == 0 and "newteam" not in err, err


def test_init_team_says_when_the_platform_leaves_no_start_that_validates(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("init", "st/platform.yaml")[0] == 0
    platform = tmp_path / "st" / "platform.yaml"
    platform.write_text(platform.read_text() + "  teams: {maxQuota: {cpu: 100m}}\n")  # no GPU pod fits 0.1 CPU
    result = CliRunner().invoke(main, ["init", "--team", "vision", "st/teams/vision.yaml"])
    assert result.exit_code == 0
    code, err = cli("validate", "st/teams/vision.yaml", "--platform", "st")
    errors = sum(" error " in line for line in err.splitlines())
    assert code == 1 and errors >= 1
    assert result.stderr == (
        f"wrote st/teams/vision.yaml, fitted to st's platform as far as it goes: it has {errors} "
        f"error{'s' if errors > 1 else ''} still; see them with `policyc validate st/teams/vision.yaml --platform st`\n"
    )
    # a platform with an error of its own: the team's file is fitted, and the platform is named as what fails
    platform.write_text(platform.read_text().replace("  teams: {maxQuota: {cpu: 100m}}\n", "").replace(
        "priorityClasses: [training]  #", "priorityClasses: [trainnig]  #"))  # fmt: skip
    result = CliRunner().invoke(main, ["init", "--team", "vision", "st/teams/vision.yaml", "--force"])
    assert result.stderr == (
        "wrote st/teams/vision.yaml, fitted to st's platform, which has errors of its own: see them with `policyc "
        "validate st`\n"
    )
    code, err = cli("validate", "st")
    assert code == 1 and "st/platform.yaml" in err and "vision.yaml" not in err


def test_the_hook_validates_the_directory_of_a_changed_file(policy_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """pre-commit passes the changed files: a team's file, or the platform's, stands for its whole directory (a
    clash between two teams shows whichever of them changed); a lone policy file is validated alone."""
    monkeypatch.chdir(tmp_path)
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "[ml-b]", "[ml-a]")})
    write(tmp_path, {"other/alone.yaml": (POLICIES / "minimal.yaml").read_text(), "values.yaml": "replicas: 2\n"})
    for changed in ("pol/teams/a.yaml", "pol/platform.yaml"):
        code, err = cli("validate", "--only-policies", changed, "other/alone.yaml", "values.yaml")
        assert code == 1
        assert err.splitlines() == [
            "pol/teams/b.yaml:7:20: error reference/team-claim-clash: namespace 'ml-a' is already claimed in "
            "pol/teams/a.yaml:7; choose another namespace for tenant 'team-b'",
            "pol: 1 error",
        ]


def test_init_writes_a_team_file_that_builds_with_the_starter(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("init", "pol/platform.yaml")[0] == 0
    assert cli("init", "--team", "vision", "pol/teams/vision.yaml")[0] == 0
    text = (tmp_path / "pol" / "teams" / "vision.yaml").read_text()
    assert "kind: Tenant" in text and "tenant: vision" in text
    compilation = compile_file(tmp_path / "pol", "pol")
    assert compilation.ok, render_text(compilation.report)
    assert "templates/vision-training.yaml" in compilation.files
    assert cli("init", "--team", "vision", "pol/teams/vision.yaml")[0] == 2  # exists: --force to overwrite


def test_a_team_document_of_another_api_version_or_without_a_name(policy_dir: Path) -> None:
    team = fixed(TEAM_B, "apiVersion: policyc.io/v1alpha1", "apiVersion: policyc.io/v1")
    write(policy_dir, {"teams/b.yaml": fixed(team, "metadata: {name: b}", "metadata: {}")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:1:13: error shape/team-document: apiVersion 'policyc.io/v1' is not the platform's; write "
        "apiVersion: policyc.io/v1alpha1, as pol/platform.yaml:1 does",
        "pol/teams/b.yaml:3:11: error shape/team-document: a team document names its team in metadata.name; write "
        "metadata: {name: <team>}",
    ]
    write(policy_dir, {"teams/b.yaml": TEAM_B})  # the hints followed
    assert lines(policy_dir) == []


def test_a_workload_without_a_tenant_is_reported_by_the_language(policy_dir: Path) -> None:
    """Not left out unseen: the merged policy holds it, and the policy's parse says what it lacks, in the team file."""
    write(policy_dir, {"teams/b.yaml": fixed(TEAM_B, "tenant: team-b, ", "")})
    assert [line.split(": error ")[0] + " " + line.split()[2] for line in lines(policy_dir)] == [
        "pol/teams/b.yaml:12:7 PC103:"
    ]


def test_a_grant_of_a_class_or_tier_the_policy_lacks(policy_dir: Path) -> None:
    platform = fixed(
        PLATFORM, "priorityClasses: [low]\n    gpuTiers: [high]", "priorityClasses: [lw]\n    gpuTiers: [hihg]"
    )
    write(policy_dir, {"platform.yaml": platform})
    assert [line for line in lines(policy_dir) if line.startswith("pol/platform.yaml")] == [
        "pol/platform.yaml:20:23: error PC304: spec.teams grants teams unknown priority class 'lw'; did you mean "
        "'low'?",
        "pol/platform.yaml:21:16: error PC302: spec.teams grants teams unknown GPU tier 'hihg'; did you mean 'high'?",
    ]
    write(policy_dir, {"platform.yaml": PLATFORM})  # the hints followed
    assert lines(policy_dir) == []


def test_a_policy_file_does_not_import_what_a_directory_needs(policy_dir: Path) -> None:
    """The single-file path stays as it was (tests/test_start.py): the directory's loader is imported for a
    directory only."""
    from tests.test_start import imported

    assert "policyc.language.teams" not in imported("validate", str(POLICIES / "minimal.yaml"))
    assert "policyc.language.teams" in imported("validate", str(policy_dir))


def test_an_audit_of_a_policy_directory_points_into_the_team_files(tmp_path: Path, monkeypatch) -> None:
    """The same findings as for the policy in one file, each in the file where its expectation was written."""
    from click.testing import CliRunner

    from policyc.commands.cli import main
    from tests.audit_helpers import DUMPS, built_of, policy_of
    from tests.conftest import missing_shared_data

    drift = DUMPS / "ai-prod" / "drift-11-pod-foreign-pool.json"
    if not drift.is_file():
        missing_shared_data(drift)
    monkeypatch.chdir(tmp_path)
    split(policy_of("ai-prod"), tmp_path / "pol")
    runs = {
        policy: CliRunner().invoke(main, ["audit", policy, "--built", str(built_of("ai-prod")), "--from", str(drift)])
        for policy in (str(policy_of("ai-prod")), "pol")
    }
    assert [run.exit_code for run in runs.values()] == [1, 1]
    whole, many = (run.stdout.splitlines() for run in runs.values())
    assert sorted(line.split(": ", 1)[1] for line in whole) == sorted(line.split(": ", 1)[1] for line in many)
    (placed,) = [line for line in many if "audit/pod-placement" in line]
    # the tenant's mapping in split()'s JSON (indent 1): '{', apiVersion, kind, metadata (3 lines), spec, tenants,
    # then the tenant's '{' on line 9, after three spaces
    assert placed.startswith("pol/teams/team-a.yaml:9:4: error audit/pod-placement: Pod ai-team-a/team-a-adhoc-0 ")


def test_an_empty_file_or_a_broken_one_is_reported_in_it_and_the_rest_still_checked(policy_dir: Path) -> None:
    write(policy_dir, {"teams/empty.yaml": "---\n", "teams/b.yaml": fixed(TEAM_B, "[ml-b]", "[ml-a]")})
    assert lines(policy_dir) == [
        "pol/teams/b.yaml:7:20: error reference/team-claim-clash: namespace 'ml-a' is already claimed in "
        "pol/teams/a.yaml:7; choose another namespace for tenant 'team-b'",
        "pol/teams/empty.yaml:1:1: error PC005: the file holds no document; remove the file, or write a policy in it",
    ]

"""A fleet: cluster documents in a policy directory, each overriding the shared policy for one cluster
(policyc.language.fleet, docs/teams.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policyc.commands.cli import main
from policyc.compiler import compile_file
from policyc.output.formats import render_text
from tests.test_teams import PLATFORM, TEAM_A, TEAM_B, fixed, write

EAST = """\
apiVersion: policyc.io/v1alpha1
kind: Cluster
metadata: {name: east}
spec:
  destination: {server: "https://east.example.com:6443"}
  kubernetesVersion: "1.34"
  nodePools:
    - {name: train, usage: training, nodes: ["east-[1-2]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
  addNodePools:
    - {name: extra, usage: inference, nodes: ["x-[1-2]"], gpu: {product: NVIDIA-L4, count: 4},
       allocatable: {cpu: "48", memory: 192Gi}}
  hostedTeams: [a]
  quotaScale: 0.5
"""
# nodePools[0].name is on line 8, addNodePools[0].name on line 11, hostedTeams on line 13.

WEST = """\
apiVersion: policyc.io/v1alpha1
kind: Cluster
metadata: {name: west}
spec:
  destination: {name: west}
"""


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    files = {"platform.yaml": PLATFORM, "teams/a.yaml": TEAM_A, "teams/b.yaml": TEAM_B}
    return write(tmp_path / "pol", {**files, "clusters/east.yaml": EAST, "clusters/west.yaml": WEST})


def lines(directory: Path, cluster: str) -> list[str]:
    return render_text(compile_file(directory, "pol", cluster=cluster).report).splitlines()


def gpu_quotas(compilation) -> list[str]:
    """The GPU requests of every ResourceQuota the compilation emits, sorted."""
    return sorted(
        m.obj["spec"]["hard"]["requests.nvidia.com/gpu"]
        for a in compilation.artifacts
        for m in a.manifests
        if m.obj["kind"] == "ResourceQuota" and "requests.nvidia.com/gpu" in m.obj["spec"]["hard"]
    )


def test_a_cluster_overrides_the_shared_policy_and_the_rest_falls_back(fleet: Path) -> None:
    east = compile_file(fleet, "pol", cluster="east")
    west = compile_file(fleet, "pol", cluster="west")
    assert east.ok and west.ok, render_text(east.report) + render_text(west.report)
    assert east.cluster.name == "east" and west.cluster.name == "west"
    assert sorted(p.name for p in east.cluster.pools) == ["extra", "serve", "train"]  # one replaced, one added
    assert sorted(p.name for p in west.cluster.pools) == ["serve", "train"]
    assert "east-1" in str(next(p for p in east.cluster.pools if p.name == "train"))
    assert "east-1" not in str(next(p for p in west.cluster.pools if p.name == "train"))
    assert str(east.cluster.kubernetes_version) != str(west.cluster.kubernetes_version)
    # east hosts team a only, at half its quota: 16 GPUs -> 8; west hosts both teams as the shared policy has them.
    assert [t.name for t in east.cluster.tenants] == ["team-a"]
    assert [t.name for t in west.cluster.tenants] == ["team-a", "team-b"]
    assert gpu_quotas(east) == ["8"]  # 16 x 0.5
    assert gpu_quotas(west) == ["16", "8"]


OVERRIDE = "  tenantOverrides:\n    - {name: team-a, quota: {requests: {gpu: 12}}}\n"
# tenantOverrides[0] is on line 16 of EAST with it.


def test_a_tenant_s_quota_of_its_own_in_one_cluster(fleet: Path) -> None:
    write(fleet, {"clusters/east.yaml": EAST + OVERRIDE})
    east, west = (compile_file(fleet, "pol", cluster=name) for name in ("east", "west"))
    assert east.ok and west.ok, render_text(east.report)
    assert gpu_quotas(east) == ["12"]  # as written: quotaScale (0.5) does not apply to an override
    assert gpu_quotas(west) == ["16", "8"]  # the shared quotas
    queue = next(t for t in east.cluster.tenants if t.name == "team-a").queue
    assert str(queue.capability["nvidia.com/gpu"]) == "8"  # the queue is not overridden: still scaled (16 x 0.5)
    # an error in the overriding value points into the cluster's file
    write(fleet, {"clusters/east.yaml": EAST + OVERRIDE.replace("gpu: 12", "gpu: lots")})
    (line,) = lines(fleet, "east")
    assert line.startswith("pol/clusters/east.yaml:16:") and "error " in line


def test_a_tenant_override_of_an_unknown_tenant_twice_or_of_another_setting(fleet: Path) -> None:
    write(fleet, {"clusters/east.yaml": EAST + OVERRIDE.replace("name: team-a", "name: team-aa")})
    assert lines(fleet, "east") == [
        "pol/clusters/east.yaml:16:14: error reference/cluster-unknown-name: spec.tenantOverrides names tenant "
        "'team-aa', which neither the platform nor a team it hosts declares; did you mean 'team-a'?"
    ]
    write(fleet, {"clusters/east.yaml": EAST + OVERRIDE})  # the hint followed
    assert lines(fleet, "east") == []
    # team b's tenant: declared, but not by a team east hosts
    write(fleet, {"clusters/east.yaml": EAST + OVERRIDE.replace("name: team-a", "name: team-b")})
    assert "names tenant 'team-b', which neither the platform nor a team it hosts declares" in lines(fleet, "east")[0]
    write(fleet, {"clusters/east.yaml": EAST + OVERRIDE + "    - {name: team-a, queue: {capability: {gpu: 4}}}\n"})
    assert lines(fleet, "east") == [
        "pol/clusters/east.yaml:17:14: error reference/cluster-override-clash: tenant 'team-a' is overridden twice in "
        "cluster 'east'; the first is in pol/clusters/east.yaml:16; remove one of the two (merge what differs into "
        "the other)"
    ]
    write(fleet, {"clusters/east.yaml": EAST + OVERRIDE.replace("quota:", "priorityClasses: [low], quota:")})
    (line,) = lines(fleet, "east")
    assert line == (
        "pol/clusters/east.yaml:16:5: error shape/cluster-document: spec.tenantOverrides is a list of tenants, each "
        "with its name and what differs in this cluster: queue or quota; write tenantOverrides: [{name: <tenant>, "
        "quota: {requests: {gpu: 8}}}]"
    )


def test_an_error_in_an_overriding_value_points_into_the_cluster_file(fleet: Path) -> None:
    write(fleet, {"clusters/east.yaml": fixed(EAST, "usage: inference", "usage: serving")})
    (line,) = lines(fleet, "east")
    assert line.startswith("pol/clusters/east.yaml:11:28: error ")  # addNodePools[0].usage, line 11 column 28
    assert lines(fleet, "west") == []  # another cluster does not read it


def test_a_pool_the_shared_policy_lacks(fleet: Path) -> None:
    write(fleet, {"clusters/east.yaml": fixed(EAST, "- {name: train,", "- {name: trian,")})
    assert lines(fleet, "east") == [
        "pol/clusters/east.yaml:8:14: error reference/cluster-unknown-name: spec.nodePools names pool 'trian', which "
        "the shared policy does not have; did you mean 'train'?; to add a pool, list it under addNodePools"
    ]
    write(fleet, {"clusters/east.yaml": EAST})  # the hint followed
    assert lines(fleet, "east") == []


def test_a_misspelt_pool_replaces_the_pool_it_likely_names(tmp_path: Path) -> None:
    """The shipped cloud cluster replaces the on-prem pool 'h100-train' (NFD settings) by a Karpenter one: misspelt,
    the shared pool stayed, and a second error said its NFD settings do not suit Karpenter. The typo is one error."""
    import shutil

    from tests.conftest import POLICIES

    shutil.copytree(POLICIES / "fleet", tmp_path / "fleet")
    cloud = tmp_path / "fleet" / "clusters" / "cloud.yaml"
    cloud.write_text(fixed(cloud.read_text(), "    - name: h100-train\n", "    - name: h100-trian\n"))
    found = render_text(compile_file(tmp_path / "fleet", "fleet", cluster="cloud").report).splitlines()
    assert [line.split(": ")[1] for line in found] == ["error reference/cluster-unknown-name"], found


def test_a_hosted_team_that_does_not_exist(fleet: Path) -> None:
    write(fleet, {"clusters/east.yaml": fixed(EAST, "hostedTeams: [a]", "hostedTeams: [aa]")})
    assert lines(fleet, "east") == [
        "pol/clusters/east.yaml:13:17: error reference/cluster-unknown-name: spec.hostedTeams names team 'aa', which "
        "the shared policy does not have; did you mean 'a'?"
    ]
    write(fleet, {"clusters/east.yaml": EAST})  # the hint followed
    assert lines(fleet, "east") == []


def test_a_pool_or_a_team_overridden_twice(fleet: Path) -> None:
    twice = fixed(EAST, "- {name: extra,", "- {name: train,")
    twice = fixed(twice, "hostedTeams: [a]", "hostedTeams: [a, a]")
    write(fleet, {"clusters/east.yaml": twice})
    assert lines(fleet, "east") == [
        "pol/clusters/east.yaml:11:14: error reference/cluster-override-clash: pool 'train' is overridden twice in "
        "cluster 'east'; the first is in pol/clusters/east.yaml:8; remove one of the two (merge what differs into "
        "the other)",
        "pol/clusters/east.yaml:13:20: error reference/cluster-override-clash: team 'a' is overridden twice in "
        "cluster 'east'; the first is in pol/clusters/east.yaml:13; remove one of the two (merge what differs into "
        "the other)",
    ]


def test_a_pool_added_that_the_shared_policy_has(fleet: Path) -> None:
    write(fleet, {"clusters/east.yaml": fixed(EAST, "- {name: extra,", "- {name: serve,")})
    assert lines(fleet, "east") == [
        # serve is the shared policy's second pool, on line 13 of platform.yaml
        "pol/clusters/east.yaml:11:14: error reference/cluster-override-clash: pool 'serve' is added, but the shared "
        "policy has it already (pol/platform.yaml:13); move it from addNodePools to nodePools, which replaces the "
        "shared pool of its name"
    ]
    moved = fixed(EAST, "  addNodePools:\n    - {name: extra,", "    - {name: serve,")
    write(fleet, {"clusters/east.yaml": moved})  # the hint followed
    assert lines(fleet, "east") == []


def test_two_cluster_documents_of_one_name(fleet: Path) -> None:
    write(fleet, {"clusters/west.yaml": fixed(WEST, "{name: west}\nspec", "{name: east}\nspec")})
    expected = (
        "pol/clusters/west.yaml:3:18: error reference/cluster-name-clash: cluster 'east' is already named in "
        "pol/clusters/east.yaml:3; rename this cluster, or merge the two documents into one"
    )
    assert lines(fleet, "east") == [expected]
    write(fleet, {"clusters/west.yaml": WEST})  # the hint followed
    assert lines(fleet, "east") == []


def test_a_malformed_cluster_document(fleet: Path) -> None:
    bad = fixed(WEST, "destination: {name: west}", "destnation: {name: west}")
    write(fleet, {"clusters/west.yaml": bad})
    assert lines(fleet, "west") == [
        "pol/clusters/west.yaml:4:1: error shape/cluster-document: a cluster document's destination is where Argo CD "
        "deploys it: its API server's URL, or its name in Argo CD; write destination: {server: https://<API server>} "
        "(or destination: {name: <Argo CD cluster>})",
        "pol/clusters/west.yaml:5:3: error shape/cluster-document: a cluster document overrides no field "
        "'destnation'; everything else comes from the shared policy; did you mean 'destination'?",
    ]
    write(fleet, {"clusters/west.yaml": WEST})  # the hint followed
    assert lines(fleet, "west") == []


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_fleet_builds_every_cluster_and_an_application_set(fleet: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("build", "pol", "-o", "out", "--repo-url", "https://git.example.com/fleet.git", "-q")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["applicationset.yaml", "east", "west"]
    for name in ("east", "west"):
        assert cli("build", "pol", "--cluster", name, "-o", f"one-{name}", "-q")[0] == 0
        one = {p.relative_to(tmp_path / f"one-{name}") for p in (tmp_path / f"one-{name}").rglob("*") if p.is_file()}
        every = {p.relative_to(tmp_path / "out" / name) for p in (tmp_path / "out" / name).rglob("*") if p.is_file()}
        assert one == every
        for path in one:
            assert (tmp_path / f"one-{name}" / path).read_bytes() == (tmp_path / "out" / name / path).read_bytes()
    text = (tmp_path / "out" / "applicationset.yaml").read_text()
    assert "      - cluster: east\n        path: out/east\n        server: https://east.example.com:6443\n" in text
    assert '      - cluster: west\n        path: out/west\n        server: ""\n        name: west\n' in text
    assert cli("build", "pol", "-o", "out", "--repo-url", "https://git.example.com/fleet.git", "--check")[0] == 0
    write(fleet, {"teams/a.yaml": fixed(TEAM_A, "gpus: 8", "gpus: 4")})  # a fleet's output is replaced, as a policy's
    assert cli("build", "pol", "-o", "out", "--repo-url", "https://git.example.com/fleet.git", "-q")[0] == 0
    assert 'nvidia.com/gpu: "4"' in (tmp_path / "out" / "east" / "templates" / "train-a.yaml").read_text()


def git(cwd: Path, *args: str) -> None:
    import subprocess

    from tests.conftest import require_tool

    subprocess.run([require_tool("git", "apt install git"), "-C", str(cwd), *args], check=True, capture_output=True)


def test_the_application_set_names_each_directory_by_its_path_in_the_repository(fleet: Path, tmp_path: Path,
                                                                                monkeypatch) -> None:  # fmt: skip
    """The ApplicationSet's paths are the output's from the top of the git repository holding it, wherever the
    command runs (a path as given was wrong from a subdirectory). The URL is the user's: a clone's remote differs
    between clones, so it is only shown in the usage error, to copy."""
    git(tmp_path, "init", "-q")
    (tmp_path / "ci").mkdir()
    monkeypatch.chdir(tmp_path / "ci")  # a directory below the top: a path as given would be wrong
    code, _, err = cli("build", "../pol", "-o", "../deploy/out")
    assert code == 2
    assert err.splitlines()[-1] == (
        "Error: ../pol is a fleet of clusters east, west: build one with --cluster NAME, or all of them into a "
        "directory with --repo-url URL (the repository the ApplicationSet points Argo CD at)"
    )
    git(tmp_path, "remote", "add", "origin", "git@git.example.com:platform/fleet.git")
    code, _, err = cli("build", "../pol", "-o", "../deploy/out")
    assert code == 2 and err.splitlines()[-1].endswith(
        "(the repository the ApplicationSet points Argo CD at; this clone's origin is "
        "git@git.example.com:platform/fleet.git)"
    )
    code, _, err = cli("build", "../pol", "-o", "../deploy/out", "--repo-url", "git@git.example.com:platform/fleet.git")
    assert code == 0, err
    written = sum(1 for p in (tmp_path / "deploy" / "out").rglob("*") if p.is_file())
    assert err == (
        f"../pol: wrote {written} files to ../deploy/out (the ApplicationSet deploys deploy/out/<cluster> of "
        "git@git.example.com:platform/fleet.git)\n"
    )
    text = (tmp_path / "deploy" / "out" / "applicationset.yaml").read_text()
    assert "      - cluster: east\n        path: deploy/out/east\n" in text
    assert "        repoURL: git@git.example.com:platform/fleet.git\n" in text
    # from the top, the same bytes
    monkeypatch.chdir(tmp_path)
    args = ("build", "pol", "-o", "deploy/out", "--repo-url", "git@git.example.com:platform/fleet.git", "--check")
    assert cli(*args)[0] == 0
    # outside a git repository, the output's path is as given
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    assert cli("build", str(fleet), "-o", "out", "--repo-url", "https://git.example.com/fleet.git")[0] == 0
    assert "path: out/east\n" in (outside / "out" / "applicationset.yaml").read_text()


def test_commands_name_the_cluster(fleet: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("build", "pol", "--cluster", "eats", "-o", "out")
    assert code == 2 and "pol has no cluster 'eats'; did you mean 'east'?" in err
    code, _, err = cli("build", "pol", "-o", "out")
    assert code == 2 and "pol is a fleet of clusters east, west: build one with --cluster NAME" in err
    code, _, err = cli("report", "pol")
    assert code == 2 and "give --cluster NAME" in err
    assert cli("report", "pol", "--cluster", "west")[0] == 0
    assert cli("explain", "pol", "--cluster", "east")[0] == 0
    # validate checks every cluster; a diagnostic of one cluster only says which
    write(fleet, {"clusters/east.yaml": fixed(EAST, "usage: inference", "usage: serving")})
    code, _, err = cli("validate", "pol")
    assert code == 1
    assert err.splitlines()[0].startswith("pol/clusters/east.yaml:11:28: error ") and "(cluster east)" in err
    assert "pol (cluster east): 1 error" in err and "(cluster west)" not in err
    assert cli("validate", "pol", "--cluster", "west")[0] == 0


def test_validate_shows_an_error_every_cluster_shares_once(fleet: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(fleet, {"teams/a.yaml": fixed(TEAM_A, "gpus: 8", "gpus: eight")})  # team a: hosted by both clusters
    code, _, err = cli("validate", "pol")
    errors = [line for line in err.splitlines() if ": error " in line]
    assert code == 1 and len(errors) == 1 and errors[0].startswith("pol/teams/a.yaml:12:")
    assert "(cluster" not in errors[0]
    # every cluster's summary counts it (the second's said nothing: as if it were clean)
    assert err.splitlines()[1:] == ["pol (cluster east): 1 error", "pol (cluster west): 1 error (shown above: every "
                                    "cluster has it)"]  # fmt: skip
    write(fleet, {"teams/b.yaml": fixed(TEAM_B, "gpus: 8", "gpus: eight")})  # team b: hosted by west only
    code, err = cli("validate", "pol")[::2]
    assert code == 1 and err.splitlines()[-1] == "pol (cluster west): 2 errors (1 shown above: every cluster has it)"


def test_a_team_file_checked_alone_is_checked_with_each_cluster_hosting_it(fleet: Path, tmp_path: Path,
                                                                           monkeypatch) -> None:  # fmt: skip
    """A team's CI (`validate TEAM --platform DIR`) checked the file with the shared policy only: it passed while the
    fleet's build failed in a cluster that scales the team's queue down."""
    monkeypatch.chdir(tmp_path)
    write(fleet, {"teams/a.yaml": fixed(TEAM_A, "gpus: 8,", "gpus: 8, replicas: 2,")})  # 16 GPUs at once
    code, _, err = cli("validate", "pol/teams/a.yaml", "--platform", "pol")
    assert code == 1
    assert [line.split(": error ")[1][:5] for line in err.splitlines() if ": error " in line] == ["PC427"]
    assert "caps nvidia.com/gpu at 8: the scheduler never starts it (cluster east)" in err  # 16 x quotaScale 0.5
    assert "pol/teams/a.yaml (cluster east): 1 error\n" in err and "(cluster west)" not in err
    assert cli("validate", "pol/teams/a.yaml", "--platform", "pol", "--cluster", "west")[0] == 0
    assert cli("validate", "pol", "--cluster", "east")[0] == 1  # the directory's own validation agrees
    code, _, err = cli("validate", "pol/teams/b.yaml", "--platform", "pol", "--cluster", "east")
    assert code == 2 and "cluster 'east' of pol does not host pol/teams/b.yaml: west hosts it" in err
    assert cli("validate", "pol/teams/b.yaml", "--platform", "pol")[0] == 0


def test_the_cluster_schema_is_checked_in_and_takes_the_example_clusters() -> None:
    import json

    from jsonschema import Draft202012Validator

    from policyc.language.load import load_file
    from policyc.language.model import json_schema_text
    from tests.conftest import REPO

    checked_in = (REPO / "schemas" / "cluster.schema.json").read_text()
    assert checked_in == json_schema_text(cluster=True), "run `policyc schema --cluster > schemas/cluster.schema.json`"
    assert cli("schema", "--cluster")[1] == checked_in
    validator = Draft202012Validator(json.loads(checked_in))
    clusters = sorted((REPO / "policies" / "fleet" / "clusters").glob("*.yaml"))
    assert len(clusters) == 2
    for path in clusters:
        data = load_file(path).data
        assert list(validator.iter_errors(data)) == [], path
        wrong = {**data, "spec": {**data["spec"], "quotaScale": 0, "nodePool": []}}
        assert len(list(validator.iter_errors(wrong))) == 2  # a scale of 0, and a field no cluster overrides


def test_the_application_set_passes_its_crd_schema(fleet: Path, tmp_path: Path, monkeypatch) -> None:
    """The fleet's ApplicationSet as a kube-apiserver with Argo CD's CRD (tests/data/crds/argocd) judges a create."""
    from ruamel.yaml import YAML

    from tests.conftest import REPO
    from tests.crd_validation import crd_in, judge

    crd = crd_in(REPO / "tests" / "data" / "crds" / "argocd" / "applicationset-crd.yaml")
    monkeypatch.chdir(tmp_path)
    assert cli("build", "pol", "-o", "out", "--repo-url", "https://git.example.com/fleet.git", "-q")[0] == 0
    application_set = YAML(typ="safe").load((tmp_path / "out" / "applicationset.yaml").read_text())
    assert judge(application_set, crd).accepted, judge(application_set, crd).message
    shipped = YAML(typ="safe").load((REPO / "golden" / "fleet" / "applicationset.yaml").read_text())
    assert judge(shipped, crd).accepted, judge(shipped, crd).message
    # an Argo CD project and namespace of the platform's own
    args = ("build", "pol", "-o", "own", "--repo-url", "https://git.example.com/fleet.git", "-q")
    assert cli(*args, "--project", "gpu-platform", "--argocd-namespace", "gitops")[0] == 0
    own = YAML(typ="safe").load((tmp_path / "own" / "applicationset.yaml").read_text())
    assert (own["metadata"]["namespace"], own["spec"]["template"]["spec"]["project"]) == ("gitops", "gpu-platform")
    assert judge(own, crd).accepted, judge(own, crd).message
    code, _, err = cli(*args, "--project", "GPU_platform")
    assert code == 2 and "Invalid value for '--project': 'GPU_platform' is not a Kubernetes name: must consist" in err
    assert cli(*args, "--argocd-namespace", "argo.cd")[0] == 2
    # The judge is not lax: without a project, or with a field the CRD lacks, the server refuses it.
    del application_set["spec"]["template"]["spec"]["project"]
    application_set["spec"]["template"]["spec"]["source"]["revision"] = "HEAD"
    verdict = judge(application_set, crd)
    assert verdict.code == 400 and 'unknown field "spec.template.spec.source.revision"' in verdict.message
    del application_set["spec"]["template"]["spec"]["source"]["revision"]
    assert [str(p) for p in judge(application_set, crd).problems] == ["spec.template.spec.project: Required value"]
    application_set["spec"]["template"]["spec"]["project"] = "default"
    application_set["spec"]["template"]["spec"]["syncPolicy"]["automated"]["selfHeal"] = "yes"
    assert [str(p) for p in judge(application_set, crd).problems] == [
        'spec.template.spec.syncPolicy.automated.selfHeal: Invalid value: "string": '
        'spec.template.spec.syncPolicy.automated.selfHeal in body must be of type boolean: "string"'
    ]


def test_the_hook_validates_the_fleet_of_a_changed_cluster_file(fleet: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(fleet, {"clusters/east.yaml": fixed(EAST, "usage: inference", "usage: serving")})
    code, _, err = cli("validate", "--only-policies", "pol/clusters/east.yaml")
    assert code == 1 and err.startswith("pol/clusters/east.yaml:11:28: error ")
    assert "pol (cluster east): 1 error" in err  # the whole directory, every cluster


def test_a_file_is_loaded_once_for_every_cluster_and_again_once_changed(fleet: Path) -> None:
    from policyc.language.load import load_documents

    team = fleet / "teams" / "a.yaml"
    first = load_documents(team, "pol/teams/a.yaml")
    # the same bytes: the same documents, under any name (the fleet's list of clusters reads it under another)
    second = load_documents(team, "a.yaml")
    assert second[0].data is first[0].data and (first[0].file, second[0].file) == ("pol/teams/a.yaml", "a.yaml")
    write(fleet, {"teams/a.yaml": fixed(TEAM_A, "gpus: 8", "gpus: 4")})  # the same size, maybe the same mtime
    again = load_documents(team, "pol/teams/a.yaml")
    assert again[0].data is not first[0].data and again[0].data["spec"]["workloads"][0]["gpus"] == 4


def test_a_fleet_s_build_lists_and_reads_its_directory_once(fleet: Path, tmp_path: Path, monkeypatch) -> None:
    """It listed and read the directory eight times: to list the clusters, to find what each reads (build records),
    to compile each cluster, and for the ApplicationSet. Now once a name: the clusters' list and the records read it
    unnamed, the compilations as the policy. A library caller's compile reads afresh (a file may have changed)."""
    from policyc.language import teams

    listed, read = [], []
    policy_files, read_files = teams._policy_files, teams._read_files
    monkeypatch.setattr(teams, "_policy_files", lambda d: listed.append(d) or policy_files(d))
    monkeypatch.setattr(teams, "_read_files", lambda d, f, n: read.append(n) or read_files(d, f, n))
    monkeypatch.chdir(tmp_path)
    assert cli("build", "pol", "-o", "out", "--repo-url", "https://git.example.com/fleet.git", "--no-cache")[0] == 0
    assert len(listed) == 1 and sorted(read) == ["", "pol"]
    listed.clear()
    compile_file(fleet, "pol", cluster="east")
    compile_file(fleet, "pol", cluster="east")
    assert len(listed) == 2


def test_the_benchmark_fleet_builds_every_cluster_without_a_diagnostic(tmp_path: Path) -> None:
    import sys

    from policyc.language.teams import fleet_of
    from tests.conftest import REPO

    sys.path.insert(0, str(REPO / "bench"))
    from generate_fleet import write as generate

    generate(tmp_path / "fleet", 40, 3)
    names = list(fleet_of(tmp_path / "fleet")[1])
    assert names == ["cluster-0", "cluster-1", "cluster-2"]
    built = {name: compile_file(tmp_path / "fleet", "fleet", cluster=name) for name in names}
    for name, compilation in built.items():
        assert compilation.ok and not compilation.report.diagnostics, (name, render_text(compilation.report))
    assert len(built["cluster-1"].cluster.tenants) == 20  # every other team: 40 / 2
    assert len(built["cluster-2"].cluster.tenants) == 40

"""`policyc import`: node names back to ranges, the round trip of every shipped example (build -> the cluster it
describes -> import -> build), the recorded clean dumps and a directory of hand-written manifests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyc.adopt.importer import import_policy
from policyc.adopt.manifests import ManifestSource
from policyc.adopt.ranges import compress
from policyc.cluster.source import NAMESPACE, DumpSource
from policyc.compiler import compile_file, compile_text
from policyc.language.noderanges import expand
from tests.adopt.clusters import synced_objects, write_dump
from tests.conftest import POLICIES, REPO, missing_shared_data, shared_dir

HANDWRITTEN = REPO / "tests" / "data" / "adopt" / "handwritten"

# --- ranges -------------------------------------------------------------------------------------------------


def test_ranges_are_recovered_from_names() -> None:
    assert compress(["a100-03", "a100-01", "a100-02", "a100-05"]) == ["a100-[01-03]", "a100-05"]
    assert compress(["t4-01", "t4-02", "t4-spare-1"]) == ["t4-[01-02]", "t4-spare-1"]
    assert compress(["h20-1", "h20-2", "h20-9", "h20-10"]) == ["h20-[1-2]", "h20-[9-10]"]
    assert compress(["g-08", "g-09", "g-10"]) == ["g-[08-10]"]  # '10' is as wide as the padded '08'
    assert compress(["cp"]) == ["cp"]


_label = st.from_regex(r"[a-z]([a-z-]{0,6}[a-z])?", fullmatch=True)
_number = st.integers(0, 120).flatmap(lambda n: st.sampled_from([str(n), str(n).zfill(2), str(n).zfill(3)]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_label, _number, st.sampled_from(["", "-a", ".b"])), max_size=25))
def test_expanding_the_recovered_ranges_gives_back_exactly_the_names(parts: list[tuple[str, str, str]]) -> None:
    names = sorted({f"{prefix}-{digits}{suffix}" for prefix, digits, suffix in parts})
    expanded = [name for pattern in compress(names) for name in expand(pattern)]
    assert sorted(expanded) == names, "each name once, none other"


# --- round trip ---------------------------------------------------------------------------------------------

VAP = "ValidatingAdmissionPolicy"
MAP = "MutatingAdmissionPolicy"
NOT_ROUND_TRIPPING = {
    "minimal": {},
    "ai-prod": {},
    "ai-prod-kueue": {},
    "ai-prod-kai": {},
    "ai-prod-yunikorn": {},
    "ai-hier": {},
    "ai-dra": {},
    "ai-hetero": {},
    "ai-eks": {},
    "ai-onprem": {},
}  # fmt: skip
"""Per example: the synced objects (kind, namespace, name) whose import builds differently or not at all, and why.
Every other synced object of the build comes back equal. ai-eks and ai-onprem have pools by size (Karpenter,
NFD-matched), whose nodes are not on the cluster: their provisioners' objects give them back (`adopt` faces)."""


@pytest.mark.parametrize("example", sorted(NOT_ROUND_TRIPPING))
def test_the_import_of_an_examples_cluster_builds_the_same_objects(example: str, tmp_path) -> None:
    built = compile_file(POLICIES / f"{example}.yaml")
    text = import_policy(DumpSource(write_dump(built, tmp_path / "cluster.json")))
    again = compile_text(text, f"{example}.yaml")
    assert again.ok, [(d.code, d.message) for d in again.report.errors]
    before = {key[1:]: obj for key, obj in synced_objects(built).items()}
    after = {key[1:]: obj for key, obj in synced_objects(again).items()}
    assert not set(after) - set(before), "the import builds no object the cluster does not have"
    differs = {key for key, obj in before.items() if after.get(key) != obj}
    assert differs == set(NOT_ROUND_TRIPPING[example])
    assert len(before) - len(differs) > len(differs), "most of the build comes back"
    for key in NOT_ROUND_TRIPPING[example]:
        if key not in after:
            assert f"{key[0]}" in text and key[2] in text, f"{key} is listed as not expressed"


def test_the_placement_a_mutating_policy_injects_comes_back(tmp_path) -> None:
    """RDMA nodes, one pod per node and one zone are in the node and pod affinities the tenant's mutating admission
    policy injects for the class; how many RDMA devices a pod asks for is in its template only (guessed: 1)."""
    text = (POLICIES / "ai-hetero.yaml").read_text(encoding="utf-8")
    text = text.replace("      namespace: llm-slurm\n", "      namespace: llm-slurm\n      sameZone: true\n", 1)
    built = compile_text(text, "ai-hetero.yaml")
    assert built.ok
    imported = import_policy(DumpSource(write_dump(built, tmp_path / "cluster.json")))
    again = compile_text(imported, "ai-hetero.yaml")
    [key] = [k for k in synced_objects(built) if k[1:] == (MAP, None, "policyc-inject-llm")]
    assert synced_objects(again)[key] == synced_objects(built)[key]
    [llama] = [w for w in again.cluster.workloads if w.name == "llama-70b"]
    [burst] = [w for w in again.cluster.workloads if w.name == "slurm-burst"]
    assert (llama.one_per_node, llama.rdma, llama.same_zone) == (True, 1, False)
    assert (burst.one_per_node, burst.rdma, burst.same_zone) == (False, 0, True)
    assert "RDMA devices per pod (1: its pods require RDMA nodes) not on the cluster" in imported


def test_what_was_guessed_carries_a_comment_and_what_was_not_expressed_is_listed(tmp_path) -> None:
    text = import_policy(ManifestSource(HANDWRITTEN))
    assert "# Not expressed" in text
    assert "Ingress.networking.k8s.io sandbox/grafana: no field of the policy writes it" in text
    assert "Namespace sandbox: no quota, limit range or queue" in text
    pool = next(line for line in text.splitlines() if "- name: dgx" in line)
    assert "# guessed: from the node names" in pool
    assert "domain: gpu.example.com  # guessed:" in text


# --- recorded dumps and hand-written manifests --------------------------------------------------------------


def _clean_dumps() -> list:
    root = shared_dir() / "testdata" / "cluster-dumps"
    return sorted(root.glob("*/clean.json"))


@pytest.mark.parametrize("dump", _clean_dumps(), ids=lambda p: p.parent.name)
def test_a_recorded_clean_dump_imports_to_a_policy_that_builds(dump) -> None:
    text = import_policy(DumpSource(dump))
    result = compile_text(text, "imported.yaml")
    assert result.ok, [(d.code, d.message) for d in result.report.errors]
    assert f"name: {dump.parent.name.removesuffix('-kueue').removesuffix('-kai')}" in text


def test_classes_come_back_from_the_copies_of_their_templates_and_guarantees_fit_the_nodes_present() -> None:
    """The recorded ai-prod cluster ran copies of the templates (policies/ai-prod.yaml at the recording's commit:
    llm-pretraining, a VolcanoJob of 8 GPUs per pod at production-training) and holds 5 nodes of each serving pool
    (l4-serve 5 x 4 GPUs + t4-serve 5 x 2 = 30), fewer than team-b's queue guarantees (48)."""
    dump = shared_dir() / "testdata" / "cluster-dumps" / "ai-prod" / "clean.json"
    text = import_policy(DumpSource(dump))
    result = compile_text(text, "imported.yaml")
    assert result.ok
    [pretraining] = [w for w in result.cluster.workloads if w.name == "llm-pretraining"]
    assert (pretraining.kind, pretraining.gpus, pretraining.priority_class) == ("VolcanoJob", 8, "production-training")
    [team_b] = [t for t in result.cluster.tenants if t.name == "team-b"]
    assert str(team_b.queue.guarantee["nvidia.com/gpu"]) == "30"
    assert "# guessed: lowered from 48: the nodes of the pools its workloads reach hold 30" in text


def test_hand_written_manifests_import_to_a_policy_that_builds() -> None:
    text = import_policy(ManifestSource(HANDWRITTEN))
    result = compile_text(text, "imported.yaml")
    assert result.ok, [(d.code, d.message) for d in result.report.errors]
    cluster = result.cluster
    assert [(p.name, p.usage, p.nodes) for p in cluster.pools] == [
        ("dgx", "training", ("dgx-01", "dgx-02", "dgx-03")),
        ("l4-serve", "inference", ("l4-serve-1", "l4-serve-2")),
    ]
    assert [t.name for t in cluster.tenants] == ["nlp", "vision"]
    assert str(cluster.tenants[0].queue.capability["nvidia.com/gpu"]) == "32"


# --- the command --------------------------------------------------------------------------------------------


def _run(*args: str, cwd=None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    outer = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env = {**outer, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "policyc", "import", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def test_the_command_writes_a_file_and_never_overwrites_one_unasked(tmp_path) -> None:
    target = tmp_path / "policy.yaml"
    assert _run("--manifests", str(HANDWRITTEN), "-o", str(target)).returncode == 0
    assert compile_file(target).ok
    again = _run("--manifests", str(HANDWRITTEN), "-o", str(target))
    assert again.returncode == 2 and "use --force" in again.stderr
    assert _run("--manifests", str(HANDWRITTEN), "-o", str(target), "--force").returncode == 0


def test_a_file_source_and_a_live_cluster_s_options_are_refused(tmp_path) -> None:
    """--context with --from was silently ignored (the dump imported, exit 0): the user may think it read prod."""
    result = _run("--manifests", str(HANDWRITTEN), "--context", "prod")
    assert result.returncode == 2
    assert "--manifests reads files: --kubeconfig and --context are for a live cluster; drop them" in result.stderr


def test_an_output_that_is_a_directory_is_told_a_file_in_it(tmp_path) -> None:
    result = _run("--manifests", str(HANDWRITTEN), "-o", str(tmp_path))
    assert result.returncode == 2
    assert f"{tmp_path} is a directory; give a file in it: -o {tmp_path / 'policy.yaml'}" in result.stderr
    again = _run("--manifests", str(HANDWRITTEN), "-o", str(tmp_path / "policy.yaml"))  # the hint, followed
    assert again.returncode == 0 and (tmp_path / "policy.yaml").is_file()


def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(tmp_path) -> None:
    result = _run("--manifests", str(HANDWRITTEN), "-o", str(tmp_path / "missing" / "policy.yaml"))
    assert result.returncode == 2
    assert result.stderr.startswith("policyc: cannot write") and len(result.stderr.splitlines()) == 1


def test_an_unreadable_manifest_is_one_line_and_exit_2(tmp_path) -> None:
    (tmp_path / "good.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", encoding="utf-8")
    (tmp_path / "bad.yaml").write_text("kind: [unclosed\n", encoding="utf-8")
    result = _run("--manifests", str(tmp_path))
    assert result.returncode == 2
    # the parser finds the list unclosed at the end of the file: line 2, after line 1's newline
    assert result.stderr.startswith(f"policyc: {tmp_path / 'bad.yaml'}:2: not valid YAML (")
    assert result.stderr.rstrip().endswith("; correct the file, or move it out of the directory")
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_helm_template_is_one_line_saying_to_render_the_chart(tmp_path) -> None:
    """A chart kept beside the manifests: its templates are YAML only once rendered, and the line says so."""
    templates = tmp_path / "chart" / "templates"
    templates.mkdir(parents=True)
    (templates / "quota.yaml").write_text(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: {{ .Values.name }}\n", encoding="utf-8"
    )
    result = _run("--manifests", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == (
        f"policyc: {templates / 'quota.yaml'}:4: not valid YAML (found unhashable key): a Helm template; render the"
        " chart (`helm template RELEASE CHART > rendered.yaml`), keep the rendered manifests in the directory and the"
        " chart out of it\n"
    )


def test_a_kustomization_is_listed_as_kustomize_s_not_as_a_nameless_object(tmp_path) -> None:
    (tmp_path / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", encoding="utf-8")
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [ns.yaml]\n", encoding="utf-8"
    )
    text = import_policy(ManifestSource(tmp_path))
    assert "kustomization.yaml: a Kustomization, kustomize's file and not an object of the cluster" in text
    assert "not a Kubernetes object" not in text


def test_without_a_dump_the_live_cluster_needs_the_cluster_extra(tmp_path) -> None:
    result = _run()
    if result.returncode == 0:
        pytest.fail("no live cluster here: the import cannot have succeeded")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_dump_that_is_not_a_list_is_one_line_and_exit_2(tmp_path) -> None:
    (tmp_path / "d.json").write_text(json.dumps({"kind": "Pod"}), encoding="utf-8")
    result = _run("--from", str(tmp_path / "d.json"))
    assert result.returncode == 2 and "not a kubectl List" in result.stderr


def test_the_policy_is_the_same_whatever_the_hash_seed(tmp_path) -> None:
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": seed}
        command = [sys.executable, "-m", "policyc", "import", "--manifests", str(HANDWRITTEN)]
        outputs.add(subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout)
    assert len(outputs) == 1


def test_a_list_document_and_a_document_that_is_no_object_are_read_and_listed(tmp_path) -> None:
    (tmp_path / "all.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n"
        "---\njust: a note\n",
        encoding="utf-8",
    )
    source = ManifestSource(tmp_path)
    assert [n["metadata"]["name"] for n in source.objects(NAMESPACE)] == ["a"]
    text = import_policy(source)
    assert "all.yaml: document 2 is not a Kubernetes object (no kind or name)" in text
    assert "Namespace a: no quota, limit range or queue" in text


def test_a_live_cluster_imports_as_its_dump_does(tmp_path) -> None:
    """The live path end to end: the recorded cluster behind an API server (the local fake: no real one runs here),
    read page by page with GET only, gives the same policy, byte for byte, as its dump."""
    from tests.fake_apiserver import FakeApiServer

    dump = shared_dir() / "testdata" / "cluster-dumps" / "ai-prod-kai" / "clean.json"
    if not dump.is_file():
        missing_shared_data(dump)
    from_dump = _run("--from", str(dump))
    assert from_dump.returncode == 0, from_dump.stderr
    with FakeApiServer(json.loads(dump.read_text(encoding="utf-8"))["items"]) as server:
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig", context="prod")
        env = {"HOME": str(tmp_path)}
        live = _run("--kubeconfig", str(kubeconfig), "--context", "prod", env=env)
    assert live.returncode == 0, live.stderr
    # a dump lists what it holds beyond the policy (its pods: running work); a live read asks only for the kinds
    # the import reads, so it has no such line
    listed = "#   running work, not policy: 12 Pod\n"
    assert listed in from_dump.stdout
    assert live.stdout == from_dump.stdout.replace(str(dump), "prod").replace(listed, "")
    assert any(path.startswith("/api/v1/nodes") for _, path in server.requests)

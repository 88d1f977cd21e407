"""The audit benchmark's generated cluster dump (bench/generate_dump.py), at a small size: a kubectl `v1` List shaped
like the dumps recorded from a real API server (`../shared/testdata/cluster-dumps/`), describing exactly the cluster
the policy builds, with a plausible placement, the same bytes every time."""

from __future__ import annotations

import copy
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from policyc.compiler import compile_file
from policyc.k8s.quantity import Quantity
from policyc.pods import reachable_pools
from tests.conftest import missing_shared_data, repo_script, shared_dir

NODES, POOLS, TENANTS, WORKLOADS, PODS = 50, 6, 10, 8, 500
DOMAIN = "ai.example.com/"
VOLCANO_DUMPS = ("ai-prod", "minimal", "ai-hetero")
"""The recorded policies on Volcano, the bench's backend."""


@pytest.fixture(scope="module")
def generator():
    return repo_script("bench/generate_dump.py")


@pytest.fixture(scope="module")
def made(generator, tmp_path_factory) -> tuple[Path, Path, object]:
    """(policy, dump, what was written) of the small variant."""
    tmp = tmp_path_factory.mktemp("dump")
    policy = tmp / "bench.yaml"
    policy.write_text(repo_script("bench/generate.py").policy(NODES, POOLS, TENANTS, WORKLOADS))
    written = generator.write_dump(policy, tmp / "dump.json", PODS, seed=7)
    return policy, tmp / "dump.json", written


@pytest.fixture(scope="module")
def dump(made) -> dict:
    return json.loads(made[1].read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def build(made):
    result = compile_file(made[0])
    assert result.ok
    return result


def recorded(stem: str) -> dict:
    path = shared_dir() / "testdata" / "cluster-dumps" / stem / "clean.json"
    if not path.is_file():
        missing_shared_data(path)
    return json.loads(path.read_text(encoding="utf-8"))


def by_kind(items: list[dict]) -> dict[str, list[dict]]:
    grouped = defaultdict(list)
    for item in items:
        grouped[f"{item['kind']}.{item['apiVersion'].rpartition('/')[0]}".rstrip(".")].append(item)
    return grouped


def field_paths(obj: object, path: str = "") -> set[str]:
    """The paths of an object's fields, list items as `[]`, the keys of free-form maps (labels, annotations,
    resources, data) as `*`."""
    if isinstance(obj, dict):
        if re.search(r"/(labels|annotations|limits|requests|capacity|allocatable|hard|used|data|default"
                     r"|defaultRequest|max|capability|deserved|resource|guarantee)$", path):  # fmt: skip
            return {path + "/*"}
        return {p for key, value in obj.items() for p in field_paths(value, f"{path}/{key}")}
    if isinstance(obj, list):
        return {p for value in obj for p in field_paths(value, path + "[]")}
    return {path}


def test_the_dump_is_a_kubectl_list_of_every_kind_the_cluster_has(made, dump) -> None:
    assert (dump["apiVersion"], dump["kind"], dump["metadata"]) == ("v1", "List", {"resourceVersion": ""})
    assert set(by_kind(dump["items"])) == {
        "Node", "Namespace", "Pod", "ResourceQuota", "LimitRange", "PriorityClass.scheduling.k8s.io", "ConfigMap",
        "ValidatingAdmissionPolicy.admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io",
        "Deployment.apps", "Job.batch.volcano.sh", "PyTorchJob.kubeflow.org", "Queue.scheduling.volcano.sh",
        "NodeFeatureRule.nfd.k8s-sigs.io",
    }  # fmt: skip
    assert made[2].objects == len(dump["items"])
    # 8 workloads of 2 pods a copy (generate.py: replicas 2; a PyTorchJob's master and one worker): 250 copies.
    assert made[2].pods == PODS == len(by_kind(dump["items"])["Pod"])


def test_its_objects_have_the_fields_of_the_recorded_ones(dump) -> None:
    """Every field the generator writes is one the real API server wrote for that kind; nodes and pods have all of
    theirs."""
    ours = by_kind(dump["items"])
    theirs = defaultdict(set)
    for stem in VOLCANO_DUMPS:
        for kind, items in by_kind(recorded(stem)["items"]).items():
            theirs[kind] |= {p for item in items for p in field_paths(item)}
    for kind, items in ours.items():
        if kind in theirs:
            paths = {p for item in items for p in field_paths(item)}
            assert paths <= theirs[kind], (kind, sorted(paths - theirs[kind]))
    # ai-prod's templates state what the bench's do (no env, volumes or pod anti-affinity): their pods, all of it.
    for kind in ("Node", "Pod"):
        paths = {p for item in ours[kind] for p in field_paths(item)}
        assert paths == {p for item in by_kind(recorded("ai-prod")["items"])[kind] for p in field_paths(item)}


@pytest.mark.parametrize("stem", VOLCANO_DUMPS)
def test_applied_objects_get_what_the_real_server_gave(generator, stem: str) -> None:
    """Each recorded object applied with kubectl, from its last-applied configuration through the generator's model
    of the API server, is the recorded object but for the server's bookkeeping and the statuses of workloads."""
    server = generator.Server(1)
    compared = set()
    for item in recorded(stem)["items"]:
        sent = item["metadata"].get("annotations", {}).get(generator.LAST_APPLIED)
        if sent is None or generator.group_kind(item) not in generator.SERVER_DEFAULTS:
            continue
        expected = copy.deepcopy(item)
        ours = generator.applied(json.loads(sent), server, 0)
        for obj in (expected, ours):
            for key in ("uid", "resourceVersion", "creationTimestamp"):
                del obj["metadata"][key]
            if obj["kind"] in ("ResourceQuota", "Deployment"):  # what controllers write, from the pods
                obj.pop("status", None)
        assert ours == expected, item["metadata"]["name"]
        compared.add(item["kind"])
    # Each of these has a namespace, a quota, a tenant's admission policy and a queue.
    assert {"Namespace", "ResourceQuota", "ValidatingAdmissionPolicy", "Queue"} <= compared


def test_the_nodes_are_the_plan_s_as_the_node_script_leaves_them(build, dump) -> None:
    plan = json.loads(next(a.text for a in build.artifacts if a.path == "nodes/plan.json"))
    nodes = {n["metadata"]["name"]: n for n in by_kind(dump["items"])["Node"]}
    expected = {name: (pool["labels"], pool["taints"]) for pool in plan["pools"] for name in pool["nodes"]}
    expected |= dict.fromkeys(plan["controlPlane"]["nodes"], ({}, plan["controlPlane"]["taints"]))
    assert set(nodes) == set(expected) and len(nodes) == 6 * 8 + 3  # 6 pools of 50 // 6 = 8 nodes, and cp-[1-3]
    for name, (labels, taints) in expected.items():
        node = nodes[name]
        own = {k: v for k, v in node["metadata"]["labels"].items() if k.startswith(DOMAIN)}
        assert own == labels and node["spec"].get("taints", []) == taints, name
        record = node["metadata"]["annotations"]
        assert record[DOMAIN + "policyc.managed-labels"] == ",".join(sorted(labels))
        assert record[DOMAIN + "policyc.managed-taints"] == ",".join(
            f"{t['key']}:{t['effect']}" for t in taints if t["key"].startswith(DOMAIN)
        )
        if labels:  # GPU Feature Discovery's labels; generate.py: 8 GPUs a node
            assert node["metadata"]["labels"]["nvidia.com/gpu.count"] == "8"
            assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"


def test_every_pod_is_bound_to_a_node_of_a_pool_its_template_may_use(build, dump) -> None:
    nodes = {n["metadata"]["name"]: n for n in by_kind(dump["items"])["Node"]}
    workloads = {w.name: w for w in build.cluster.workloads}
    pods = by_kind(dump["items"])["Pod"]
    for pod in pods:
        workload = workloads[pod["metadata"]["labels"]["app.kubernetes.io/name"]]
        allowed = {p.name for p in reachable_pools(build.cluster, workload)}
        node = nodes[pod["spec"]["nodeName"]]
        assert node["metadata"]["labels"][DOMAIN + "node.pool"] in allowed, pod["metadata"]["name"]
        tenant = build.cluster.tenants[[t.name for t in build.cluster.tenants].index(workload.tenant)]
        assert pod["metadata"]["namespace"] in tenant.namespaces
    assert {p["status"]["phase"] for p in pods} == {"Pending", "Succeeded"}


def test_running_pods_fit_their_nodes_quotas_and_queues(dump) -> None:
    """Pods still running (not Succeeded) hold no more than a node's allocatable, a namespace's quota (as its status
    says) or a queue's capability; at this size some copies run and the rest are finished."""
    zero = Quantity.parse("0")
    on_node, in_namespace, in_queue = (defaultdict(lambda: defaultdict(lambda: zero)) for _ in range(3))
    pods = by_kind(dump["items"])["Pod"]
    running = [pod for pod in pods if pod["status"]["phase"] != "Succeeded"]
    assert 0 < len(running) < len(pods)
    for pod in running:
        queue = pod["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"]
        for container in pod["spec"]["containers"]:
            for section in ("requests", "limits"):
                for resource, value in container["resources"][section].items():
                    in_namespace[pod["metadata"]["namespace"]][f"{section}.{resource}"] += Quantity.parse(value)
            for resource, value in container["resources"]["requests"].items():
                on_node[pod["spec"]["nodeName"]][resource] += Quantity.parse(value)
                in_queue[queue][resource] += Quantity.parse(value)
    for node in by_kind(dump["items"])["Node"]:
        for resource, value in on_node[node["metadata"]["name"]].items():
            assert value <= Quantity.parse(node["status"]["allocatable"][resource]), node["metadata"]["name"]
    for quota in by_kind(dump["items"])["ResourceQuota"]:
        if "scopeSelector" in quota["spec"]:  # the zero-pods quota of the classes a tenant is not granted
            assert quota["status"]["used"] == {"pods": "0"}
            continue
        for key, hard in quota["spec"]["hard"].items():
            figure = in_namespace[quota["metadata"]["namespace"]][key]
            assert figure <= Quantity.parse(hard), (quota["metadata"]["namespace"], key)
            assert Quantity.parse(quota["status"]["used"][key]) == figure
    for queue in by_kind(dump["items"])["Queue.scheduling.volcano.sh"]:
        for resource, capability in queue["spec"]["capability"].items():
            assert in_queue[queue["metadata"]["name"]][resource] <= Quantity.parse(capability)


def test_the_same_seed_gives_the_same_bytes(generator, made, tmp_path) -> None:
    policy, first, _ = made
    generator.write_dump(policy, tmp_path / "again.json", PODS, seed=7)
    assert (tmp_path / "again.json").read_bytes() == first.read_bytes()
    generator.write_dump(policy, tmp_path / "other.json", PODS, seed=8)
    assert (tmp_path / "other.json").read_bytes() != first.read_bytes()


def test_the_drifted_dump_differs_from_the_clean_one_in_its_listed_drifts_only(generator, made, dump, tmp_path) -> None:
    written = generator.write_dump(made[0], tmp_path / "drift.json", PODS, seed=7, drift=True)
    drifted = json.loads((tmp_path / "drift.json").read_text(encoding="utf-8"))

    def keyed(items: list[dict]) -> dict:
        return {(i["kind"], i["metadata"].get("namespace"), i["metadata"]["name"]): i for i in items}

    clean, ours = keyed(dump["items"]), keyed(drifted["items"])
    listed = {(o["kind"], o["namespace"], o["name"]) for d in written.drifts for o in d.expected()["objects"]}
    changed = {key for key in clean.keys() & ours.keys() if clean[key] != ours[key]}
    assert changed | (clean.keys() ^ ours.keys()) == listed
    assert sorted(d.category for d in written.drifts) == sorted([
        "unmanaged-node", "node-labels", "node-taints", "node-shape", "object-changed", "object-stale",
        "object-missing",
    ])  # fmt: skip
    assert ("LimitRange", "team-0000", "tenant-limits") in clean.keys() - ours.keys()
    assert {
        ("Node", None, "gpu-new-01"),
        ("ResourceQuota", "team-0000", "tenant-quota-v1"),
    } == ours.keys() - clean.keys()


def test_the_audit_finds_nothing_in_the_clean_dump_and_exactly_the_drifts_in_the_drifted_one(
    generator, made, tmp_path
) -> None:
    """What the performance page says of the generated dump, held: the audit row times an audit of a real cluster's
    shape, with nothing for it to find but what was put there."""
    from click.testing import CliRunner

    from policyc.commands.cli import main

    policy, clean, _ = made
    result = CliRunner().invoke(main, ["audit", str(policy), "--from", str(clean), "--format", "json"])
    assert (result.exit_code, json.loads(result.stdout)["diagnostics"]) == (0, []), result.stdout[-2000:]
    written = generator.write_dump(policy, tmp_path / "drift.json", PODS, seed=7, drift=True)
    result = CliRunner().invoke(
        main, ["audit", str(policy), "--from", str(tmp_path / "drift.json"), "--format", "json"]
    )
    assert result.exit_code == 1
    found = {
        (d["rule"].removeprefix("audit/"), d["object"]["kind"], d["object"]["namespace"], d["object"]["name"])
        for d in json.loads(result.stdout)["diagnostics"]
    }
    expected = {
        (d.category, o["kind"], o["namespace"], o["name"]) for d in written.drifts for o in d.expected()["objects"]
    }
    assert found == expected and len(found) == 7

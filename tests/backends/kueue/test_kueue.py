"""The Kueue backend: the quota layout it derives from the policy, Kueue's rules on it, and its strict models of
Kueue's Configuration and of the kube-scheduler profile."""

from __future__ import annotations

import copy
import dataclasses
import sys

import pytest
from ruamel.yaml import YAML

from policyc.backends.kueue import backend as kueue
from policyc.backends.kueue import conf as kueue_conf
from policyc.backends.kueue import kube_scheduler_conf
from policyc.backends.kueue import rules as kueue_checks
from policyc.backends.kueue.rules import resource_group_problems
from policyc.backends.workloads import pod_templates
from policyc.compiler import compile_file
from policyc.k8s.quantity import Quantity
from tests.conftest import POLICIES, REPO

TREE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: tree}
spec:
  kubernetesVersion: "1.33"
  domain: gpu.example.org
  scheduler: {backend: kueue, placement: spread}
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-40GB]}
  nodePools:
    - name: train
      usage: training
      nodes: ["gpu-[1-4]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}
      allocatable: {cpu: "64", memory: 512Gi}
  tenants:
    - {name: org, namespaces: [org], queue: {guarantee: {gpu: 16}, capability: {gpu: 32}, weight: 3}}
    - {name: team-a, namespaces: [team-a], queue: {parent: org, guarantee: {gpu: 8}}}
    - {name: team-b, namespaces: [team-b], queue: {parent: org, guarantee: {gpu: 4}, reclaimable: false}}
  workloads:
    - {name: train, type: training, tenant: team-a, gpuTier: a100, gpus: 8, replicas: 2}
"""


@pytest.fixture(scope="module")
def ai_prod():
    result = compile_file(POLICIES / "ai-prod-kueue.yaml")
    assert result.ok, [d.message for d in result.report.diagnostics]
    return result


def _objects(result, path: str) -> list[dict]:
    return [m.obj for a in result.artifacts if a.path == path for m in a.manifests]


def _by_name(objects: list[dict]) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects}


def test_cluster_queues_offer_dedicated_flavors_first_and_cover_every_resource(ai_prod) -> None:
    queues = _by_name(_objects(ai_prod, "kueue/clusterqueues.yaml"))
    flavors = {name: [f["name"] for f in q["spec"]["resourceGroups"][0]["flavors"]] for name, q in queues.items()}
    # One flavor per tier and usage: dedicated first, larger first (high-performance-training has h100-train's
    # 128 GPUs and a100-train's 32; standard-training a40-dev's 24), hybrid last.
    assert flavors == {
        "research": ["high-performance-training", "standard-training", "high-performance-hybrid"],
        "team-a": ["high-performance-training", "high-performance-hybrid"],
        "team-b": ["inference-inference"],
    }
    for name, q in queues.items():
        assert q["spec"]["cohortName"] == "ai-prod"
        assert q["spec"]["namespaceSelector"] == {"matchLabels": {"ai.example.com/tenant": name}}
        assert resource_group_problems(q["spec"], borrowing_allowed=True) == []
        group = q["spec"]["resourceGroups"][0]
        assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]


def test_guarantee_is_nominal_quota_and_the_rest_is_the_cohorts_shared_pool(ai_prod) -> None:
    cluster = ai_prod.cluster
    total: dict[tuple[str, str], Quantity] = {}
    objects = [*_objects(ai_prod, "kueue/clusterqueues.yaml"), *_objects(ai_prod, "kueue/cohorts.yaml")]
    for obj in objects:
        for group in obj["spec"].get("resourceGroups", []):
            for flavor in group["flavors"]:
                for r in flavor["resources"]:
                    key = (flavor["name"], r["name"])
                    total[key] = total.get(key, Quantity.from_value(0)) + Quantity.parse(r["nominalQuota"])
    assert {f for f, _ in total} == {f.name for f in kueue.all_flavors(cluster)}
    for flavor in kueue.all_flavors(cluster):
        for resource, capacity in kueue.flavor_capacity(cluster, flavor).items():
            assert total[flavor.name, resource] == capacity, (flavor.name, resource)
    # h100-train 16 x 8 + a100-train 4 x 8 GPUs; 16 x 96 + 4 x 128 CPUs.
    assert total["high-performance-training", "nvidia.com/gpu"] == Quantity.from_value(160)
    assert total["high-performance-training", "cpu"] == Quantity.from_value(2048)
    team_a = _by_name(_objects(ai_prod, "kueue/clusterqueues.yaml"))["team-a"]["spec"]
    gpu = {f["name"]: f["resources"][2] for f in team_a["resourceGroups"][0]["flavors"]}
    assert gpu["high-performance-training"] == {"name": "nvidia.com/gpu", "nominalQuota": "64", "borrowingLimit": "96"}
    assert gpu["high-performance-hybrid"]["nominalQuota"] == "0"
    assert team_a["fairSharing"] == {"weight": "4"}
    # What team-a (64) and research (8) are not guaranteed of the 160 is shared in the root cohort.
    [root] = [c for c in _objects(ai_prod, "kueue/cohorts.yaml") if c["metadata"]["name"] == "ai-prod"]
    shared = {f["name"]: f["resources"][2]["nominalQuota"] for f in root["spec"]["resourceGroups"][0]["flavors"]}
    assert shared["high-performance-training"] == "88"


def test_reclaim_protects_non_reclaimable_tenants_by_priority(ai_prod) -> None:
    queues = _by_name(_objects(ai_prod, "kueue/clusterqueues.yaml"))
    # team-b is not reclaimable: the others reclaim from it only with higher-priority work.
    assert queues["team-a"]["spec"]["preemption"] == {
        "reclaimWithinCohort": "LowerPriority",
        "withinClusterQueue": "LowerPriority",
    }
    assert queues["team-b"]["spec"]["preemption"]["reclaimWithinCohort"] == "Any"


def test_flavors_carry_group_labels_taints_and_tolerations(ai_prod) -> None:
    flavors = _by_name(_objects(ai_prod, "kueue/resourceflavors.yaml"))
    assert list(flavors) == [
        "high-performance-hybrid",
        "high-performance-training",
        "inference-inference",
        "standard-training",
    ]
    hybrid = flavors["high-performance-hybrid"]["spec"]
    assert hybrid["nodeLabels"] == {
        "ai.example.com/gpu.tier": "high-performance",
        "ai.example.com/node.usage": "hybrid",
    }
    assert [(t["key"], t["value"]) for t in hybrid["nodeTaints"]] == [
        ("ai.example.com/node.usage", "hybrid"),
        ("nvidia.com/gpu.product", "NVIDIA-H20"),
    ]
    assert all(t["operator"] == "Equal" and t["value"] for t in hybrid["tolerations"])
    # Two products: only the usage taint is on every node; each product's taint is tolerated.
    serve = flavors["inference-inference"]["spec"]
    assert serve["nodeTaints"] == [{"key": "ai.example.com/node.usage", "value": "inference", "effect": "NoSchedule"}]
    assert [(t["key"], t["value"]) for t in serve["tolerations"]] == [
        ("ai.example.com/node.usage", "inference"),
        ("nvidia.com/gpu.product", "NVIDIA-L4"),
        ("nvidia.com/gpu.product", "Tesla-T4"),
    ]


def test_templates_join_their_local_queue_and_the_scheduler_profile(ai_prod) -> None:
    job = _objects(ai_prod, "templates/llm-pretraining.yaml")[0]
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["metadata"]["labels"][kueue.QUEUE_LABEL] == "team-a"
    assert job["spec"]["suspend"] is True
    [(_, _, pod)] = pod_templates(ai_prod.backend.KINDS, job)
    assert pod["spec"]["schedulerName"] == "gpu-binpack"
    assert pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    local = _objects(ai_prod, "kueue/localqueues.yaml")
    assert {(q["metadata"]["namespace"], q["metadata"]["name"], q["spec"]["clusterQueue"]) for q in local} == {
        ("ai-team-a", "team-a", "team-a"),
        ("ai-team-b", "team-b", "team-b"),
        ("ai-team-b-canary", "team-b", "team-b"),
        ("research", "research", "research"),
    }


def test_generated_configs_pass_the_strict_models(ai_prod) -> None:
    maps = {m.obj["metadata"]["name"]: m.obj["data"] for a in ai_prod.artifacts for m in a.manifests
            if m.obj["kind"] == "ConfigMap"}  # fmt: skip
    manager = YAML(typ="safe", pure=True).load(maps[kueue.KUEUE_CONFIGMAP][kueue.KUEUE_KEY])
    scheduler = YAML(typ="safe", pure=True).load(maps[kueue.SCHEDULER_CONFIGMAP][kueue.SCHEDULER_KEY])
    assert kueue_conf.check(manager) == []
    assert manager["integrations"]["frameworks"] == ["batch/job", "kubeflow.org/pytorchjob", "deployment", "pod"]
    assert kube_scheduler_conf.check(scheduler) == []
    assert scheduler["profiles"][0]["pluginConfig"][0]["args"]["scoringStrategy"]["type"] == "MostAllocated"


def test_parents_become_a_cohort_tree(compile_text) -> None:
    result = compile_text(TREE)
    assert result.ok, [d.message for d in result.report.diagnostics]
    cohorts = _by_name(_objects(result, "kueue/cohorts.yaml"))
    assert cohorts["org"]["spec"] == {"parentName": "tree", "fairSharing": {"weight": "3"}}
    queues = _by_name(_objects(result, "kueue/clusterqueues.yaml"))
    assert {n: q["spec"]["cohortName"] for n, q in queues.items()} == {"org": "org", "team-a": "org", "team-b": "org"}
    # org's guarantee includes its children's: its own queue keeps the rest.
    assert queues["org"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] == "4"
    assert _objects(result, "templates/train.yaml")[0]["kind"] == "Job"  # the kueue default for training
    scheduler = kueue.scheduler_conf(result.cluster)
    assert scheduler["profiles"][0]["schedulerName"] == "gpu-spread"


def test_a_queue_cycle_is_reported(compile_text) -> None:
    result = compile_text(TREE.replace("queue: {guarantee: {gpu: 16}", "queue: {parent: team-a, guarantee: {gpu: 16}"))
    assert "PC422" in {d.code for d in result.report.diagnostics}


TWO_POOLS = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: two}
spec:
  kubernetesVersion: "1.33"
  domain: gpu.example.org
  scheduler: {backend: kueue}
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-40GB, NVIDIA-A100-SXM4-80GB]}
  nodePools:
    - name: big
      usage: training
      nodes: ["big-[01-16]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}
      allocatable: {cpu: "64", memory: 512Gi}
      taints: [{key: example.com/team, value: ml, effect: NoSchedule}, {key: example.com/old, effect: PreferNoSchedule}]
    - name: small
      usage: training
      nodes: ["small-[1-4]"]
      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8}
      allocatable: {cpu: "128", memory: 1Ti}
      taints: [{key: example.com/team, value: ml, effect: NoSchedule}, {key: example.com/flaky, effect: NoExecute}]
    - name: spill
      usage: hybrid
      nodes: ["spill-[1-2]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}
      allocatable: {cpu: "64", memory: 512Gi}
  tenants:
    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 100}, capability: {gpu: 150}}}
"""


GPU_PRODUCT = "nvidia.com/gpu.product"


def test_pools_of_one_tier_and_usage_are_one_flavor(compile_text) -> None:
    result = compile_text(TWO_POOLS)
    assert result.ok, [d.message for d in result.report.diagnostics]
    flavors = _by_name(_objects(result, "kueue/resourceflavors.yaml"))
    assert list(flavors) == ["a100-hybrid", "a100-training"]
    training = flavors["a100-training"]["spec"]
    assert training == {
        "nodeLabels": {"gpu.example.org/gpu.tier": "a100", "gpu.example.org/node.usage": "training"},
        # Both pools carry the team taint and the usage taint; the product taints, the NoExecute taint of
        # 'small' alone and the PreferNoSchedule taint (which Kueue ignores) are not common.
        "nodeTaints": [
            {"key": "example.com/team", "value": "ml", "effect": "NoSchedule"},
            {"key": "gpu.example.org/node.usage", "value": "training", "effect": "NoSchedule"},
        ],
        "tolerations": [
            {"key": "gpu.example.org/node.usage", "operator": "Equal", "value": "training", "effect": "NoSchedule"},
            {"key": GPU_PRODUCT, "operator": "Equal", "value": "NVIDIA-A100-SXM4-40GB", "effect": "NoSchedule"},
            {"key": GPU_PRODUCT, "operator": "Equal", "value": "NVIDIA-A100-SXM4-80GB", "effect": "NoSchedule"},
        ],
    }
    cluster = result.cluster
    [group] = [f for f in kueue.all_flavors(cluster) if f.name == "a100-training"]
    assert group.pool_names == ("big", "small")
    # 16 x 8 + 4 x 8 GPUs; 16 x 64 + 4 x 128 CPUs; 16 x 512Gi + 4 x 1Ti memory.
    assert kueue.flavor_capacity(cluster, group) == {
        "cpu": Quantity.from_value(1536),
        "memory": Quantity.parse("12Ti"),
        "nvidia.com/gpu": Quantity.from_value(160),
    }
    [queue] = _objects(result, "kueue/clusterqueues.yaml")
    quota = {
        f["name"]: [r["nominalQuota"] for r in f["resources"]] for f in queue["spec"]["resourceGroups"][0]["flavors"]
    }
    assert quota == {"a100-training": ["0", "0", "100"], "a100-hybrid": ["0", "0", "0"]}
    assert queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["borrowingLimit"] == "50"
    [root] = _objects(result, "kueue/cohorts.yaml")
    shared = {
        f["name"]: [r["nominalQuota"] for r in f["resources"]] for f in root["spec"]["resourceGroups"][0]["flavors"]
    }
    assert shared == {"a100-training": ["1536", "12Ti", "60"], "a100-hybrid": ["128", "1Ti", "16"]}


def test_guarantees_beyond_the_flavors_pools_are_reported_once(compile_text) -> None:
    """Guarantees no split can hold are the capacity check's (PC414), not reported again per flavor (PC705)."""
    text = TWO_POOLS.split("    - name: spill")[0] + (
        "  tenants:\n"
        "    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 100}}}\n"
        "    - {name: research, namespaces: [research], queue: {guarantee: {gpu: 90}}}\n"
    )
    result = compile_text(text)
    [d] = [d for d in result.report.diagnostics if d.code in ("PC414", "PC705")]
    assert d.code == "PC414"
    assert d.message == (
        "tenants 'ml' 100, 'research' 90 are guaranteed 190 nvidia.com/gpu together, but the pools they can use "
        "have 160 (big 128, small 32)"
    )
    assert d.line == _line(text, "{name: research,")


def _bench_policy() -> str:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from generate import policy
    finally:
        sys.path.remove(str(REPO / "bench"))
    text = policy(5000, 100, 500, 200)
    text = text.replace("  priorityClasses:\n", "  scheduler: {backend: kueue}\n  priorityClasses:\n", 1)
    return text.replace("kind: VolcanoJob", "kind: Job")


def test_the_5000_node_benchmark_compiles_for_kueue(compile_text) -> None:
    result = compile_text(_bench_policy())
    assert all(len(d.message) < 400 and len(d.hint or "") < 400 for d in result.report.diagnostics)
    assert result.ok, [d.message[:200] for d in result.report.diagnostics]
    flavors = _by_name(_objects(result, "kueue/resourceflavors.yaml"))
    assert len(flavors) == 9  # 3 tiers x 3 usages
    [root] = [c for c in _objects(result, "kueue/cohorts.yaml") if c["metadata"]["name"] == "bench"]
    assert len(root["spec"]["resourceGroups"][0]["flavors"]) == 9
    # Pool p has tier p % 3 and usage (p // 3) % 3: high-training holds the pools p % 9 == 0 (12 of them, 0 to 99),
    # every other group 11; each pool 50 nodes x 8 GPUs.
    groups = {f.name: f for f in kueue.all_flavors(result.cluster)}
    assert len(groups["high-training"].pools) == 12 and groups["high-training"].gpus == 4800
    assert groups["low-hybrid"].gpus == 4400
    assert next(iter(groups)) == "high-training"  # dedicated and largest first


TIERS = 22
"""22 tiers x 3 usages = 66 flavors, two more than a resource group may list."""


def _many_tiers() -> str:
    usages = ("training", "inference", "hybrid")
    lines = [*TREE.split("  gpuTiers:")[0].splitlines(), "  gpuTiers:"]
    lines += [f"    - {{name: t{k:02d}, products: [P-{k:02d}]}}" for k in range(TIERS)]
    lines += ["  nodePools:"]
    for i in range(TIERS * 3):
        lines += [
            f"    - name: p{i:03d}",
            f"      usage: {usages[i % 3]}",
            f"      nodes: [n{i:03d}]",
            f"      gpu: {{product: P-{i // 3:02d}, count: 8}}",
            '      allocatable: {cpu: "64", memory: 512Gi}',
        ]
    lines += ["  tenants:", "    - {name: ml, namespaces: [ml]}", "  workloads:"]
    for kind, usage in (("train", "training"), ("serve", "inference")):
        lines += [
            f"    - {{name: {kind}-{k:02d}, type: {usage}, tenant: ml, gpuTier: t{k:02d}, gpus: 1}}"
            for k in range(TIERS)
        ]
    return "\n".join(lines) + "\n"


def _line(text: str, fragment: str) -> int:
    [number] = [i for i, line in enumerate(text.splitlines(), 1) if fragment in line]
    return number


def _limits(result) -> list:
    return [d for d in result.report.diagnostics if d.code == "PC707"]


def test_more_than_64_flavors_in_a_queue_is_reported(compile_text) -> None:
    text = _many_tiers()
    result = compile_text(text)
    assert not result.artifacts
    cohort, queue = _limits(result)
    # Pool p064 makes the 65th tier-usage pair, which the root cohort lists.
    assert cohort.line == _line(text, "- name: p064") and "66 Kueue flavors" in cohort.message
    assert "root cohort 'tree'" in cohort.message
    # ml's training workloads bring 44 pairs (training and hybrid of 22 tiers); serve-20 the 65th.
    assert queue.line == _line(text, "name: serve-20,") and "tenant 'ml' would offer 66" in queue.message
    assert all(len(d.message) < 300 for d in (cohort, queue))
    assert not [d for d in result.report.diagnostics if d.code == "PC901"]
    # Without pools p064 and p065 (tier t21's inference and hybrid pools) there are 64 pairs.
    lines = text.splitlines(keepends=True)
    start = _line(text, "- name: p064") - 1
    assert not _limits(compile_text("".join(lines[:start] + lines[start + 10 :])))


def test_more_than_8_tolerations_on_a_flavor_is_reported(compile_text) -> None:
    products = [f"P-{k}" for k in range(8)]
    pools = "".join(
        f"    - {{name: p{k}, usage: training, nodes: [n{k}], gpu: {{product: {p}, count: 8}}, "
        f'allocatable: {{cpu: "64", memory: 512Gi}}}}\n'
        for k, p in enumerate(products)
    )
    text = TREE.split("  gpuTiers:")[0] + (
        f"  gpuTiers:\n    - name: many\n      products: [{', '.join(products)}]\n  nodePools:\n{pools}"
    )
    result = compile_text(text)
    [d] = _limits(result)
    assert d.path == ("spec", "gpuTiers", 0, "products")
    assert d.line == _line(text, "products: [P-0")
    assert "'many-training' would need 9 tolerations" in d.message and "split tier 'many'" in d.hint
    # 7 products: the usage taint and 7 product taints fit.
    assert not _limits(compile_text(text.replace(", P-7]", "]").replace("product: P-7", "product: P-6")))


def test_more_than_8_taints_on_a_flavor_is_reported(compile_text) -> None:
    taints = ", ".join(f"{{key: example.com/t{k}, effect: NoSchedule}}" for k in range(7))
    text = TREE.replace(
        '      allocatable: {cpu: "64", memory: 512Gi}\n',
        f'      allocatable: {{cpu: "64", memory: 512Gi}}\n      taints: [{taints}]\n',
    )
    result = compile_text(text)
    [d] = _limits(result)
    assert d.line == _line(text, "taints: [")
    assert "'a100-training' would carry 9 taints" in d.message and "pool 'train'" in d.hint
    # Six of its own, with the usage and product taints, fit.
    assert not _limits(compile_text(text.replace(", {key: example.com/t6, effect: NoSchedule}", "")))


def test_more_than_8_node_labels_on_a_flavor_is_reported(compile_text, monkeypatch) -> None:
    # policyc sets only the tier and usage labels; the check still guards what a flavor is given.
    spec = kueue.flavor_spec

    def labelled(cluster, flavor):
        out = spec(cluster, flavor)
        out["nodeLabels"] = {**out["nodeLabels"], **{f"example.com/l{k}": "x" for k in range(7)}}
        return out

    monkeypatch.setattr(kueue, "flavor_spec", labelled)
    [d] = _limits(compile_text(TREE))
    assert d.line == _line(TREE, "{name: a100,") and "9 node labels" in d.message


def test_a_flavor_name_longer_than_253_is_reported(compile_text) -> None:
    # A tier name has at most 63 characters, so only a resolved cluster built by hand gets here.
    cluster = compile_text(TREE).cluster
    long = "t" * 250
    tier = dataclasses.replace(cluster.tiers[0], name=long)
    cluster = dataclasses.replace(
        cluster,
        tiers=(tier,),
        pools=tuple(dataclasses.replace(p, tier=long) for p in cluster.pools),
        workloads=tuple(dataclasses.replace(w, tier=tier) for w in cluster.workloads),
    )
    [d] = [d for d in kueue_checks.check(cluster) if d.code == "PC707"]
    assert d.path == ("spec", "gpuTiers", 0, "name")
    assert "259 characters" in d.message and len(d.message) < 300


_GROUP = {
    "cohortName": "all",
    "resourceGroups": [
        {
            "coveredResources": ["cpu", "nvidia.com/gpu"],
            "flavors": [
                {
                    "name": "a",
                    "resources": [
                        {"name": "cpu", "nominalQuota": "8"},
                        {"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "4"},
                    ],
                }
            ],
        }
    ],
}


def test_resource_group_rules() -> None:
    assert resource_group_problems(_GROUP, borrowing_allowed=True) == []
    assert resource_group_problems(_GROUP, borrowing_allowed=False) == [
        "flavor 'a' nvidia.com/gpu has borrowingLimit outside a cohort"
    ]
    swapped = copy.deepcopy(_GROUP)
    swapped["resourceGroups"][0]["flavors"][0]["resources"].reverse()
    assert "not the covered resources" in resource_group_problems(swapped, borrowing_allowed=True)[0]
    twice = copy.deepcopy(_GROUP)
    twice["resourceGroups"].append(copy.deepcopy(twice["resourceGroups"][0]))
    problems = resource_group_problems(twice, borrowing_allowed=True)
    assert "resource 'cpu' is in more than one resource group" in problems
    assert "flavor 'a' is in more than one resource group" in problems
    lending = copy.deepcopy(_GROUP)
    lending["resourceGroups"][0]["flavors"][0]["resources"][0]["lendingLimit"] = "9"
    assert resource_group_problems(lending, borrowing_allowed=True) == [
        "flavor 'a' cpu lends more than its nominal quota"
    ]


_MANAGER = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "fairSharing": {"preemptionStrategies": ["LessThanInitialShare"]},
    "integrations": {"frameworks": ["batch/job", "deployment", "pod"]},
}


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"fairSharing": {"enable": True, "preemptionStrategies": ["LessThanInitialShare"]}}, "fairSharing.enable"),
        ({"fairSharing": {"preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]}}, "must be"),
        ({"integrations": {"frameworks": ["batch/job", "deployment"]}}, "need the pod integration"),
        ({"integrations": {"frameworks": ["batch/jobs"]}}, "unknown integrations"),
        ({"apiVersion": "config.kueue.x-k8s.io/v1beta1"}, "apiVersion"),
    ],
)
def test_kueue_configuration_model_rejects(change: dict, problem: str) -> None:
    assert kueue_conf.check(_MANAGER) == []
    problems = kueue_conf.check({**_MANAGER, **change})
    assert problems and problem in " ".join(problems)


_SCHEDULER = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "gpu-binpack",
            "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}},
                }
            ],
        }
    ],
}


def _with(path: tuple, value) -> dict:
    conf = copy.deepcopy(_SCHEDULER)
    target = conf
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return conf


@pytest.mark.parametrize(
    "path, value",
    [
        (("profiles", 0, "pluginConfig", 0, "args", "scoringStrategy", "resources", 0, "weight"), 0),
        (("profiles", 0, "pluginConfig", 0, "args", "scoringStrategy", "resources", 0, "weight"), "1"),
        (("profiles", 0, "pluginConfig", 0, "args", "scoringStrategy", "type"), "MostRequested"),
        (("profiles", 0, "plugins", "score", "disabled", 0, "name"), "BalancedAllocation"),
        (("profiles", 0, "plugins", "scoring"), {}),
        (("profiles", 0, "schedulerName"), ""),
    ],
)
def test_kube_scheduler_model_rejects(path: tuple, value) -> None:
    assert kube_scheduler_conf.check(_SCHEDULER) == []
    assert kube_scheduler_conf.check(_with(path, value))


def test_kube_scheduler_profiles_need_unique_names() -> None:
    conf = _with(("profiles",), [_SCHEDULER["profiles"][0]] * 2)
    assert "unique schedulerNames" in " ".join(kube_scheduler_conf.check(conf))


def test_volcano_queue_names_are_not_reserved_with_kueue(compile_text) -> None:
    """Volcano manages its queues 'default' and 'root'; Kueue has no such names (a tenant may be called so)."""
    kueue = TWO_POOLS.replace("{name: ml, namespaces: [ml]", "{name: default, namespaces: [ml]")
    assert compile_text(kueue).ok
    volcano = kueue.replace("scheduler: {backend: kueue}", "scheduler: {backend: volcano}")
    assert [d.code for d in compile_text(volcano).report.errors] == ["PC408"]

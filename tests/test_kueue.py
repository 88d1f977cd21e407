"""The Kueue backend: the quota layout it derives from the policy, Kueue's rules on it, and its strict models of
Kueue's Configuration and of the kube-scheduler profile."""

from __future__ import annotations

import copy

import pytest
from ruamel.yaml import YAML

from policyc import kube_scheduler_conf, kueue_conf
from policyc.backends import kueue
from policyc.checks.kueue import resource_group_problems
from policyc.compiler import compile_file
from policyc.k8s.quantity import Quantity
from policyc.placement import pod_templates
from tests.conftest import POLICIES

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
    assert flavors == {
        "research": ["h100-train", "a100-train", "a40-dev", "h20-hybrid"],
        "team-a": ["h100-train", "a100-train", "h20-hybrid"],
        "team-b": ["l4-serve", "t4-serve"],
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
    for pool in cluster.pools:
        for resource, capacity in kueue.pool_capacity(cluster, pool).items():
            assert total[pool.name, resource] == capacity, (pool.name, resource)
    team_a = _by_name(_objects(ai_prod, "kueue/clusterqueues.yaml"))["team-a"]["spec"]
    gpu = {f["name"]: f["resources"][2] for f in team_a["resourceGroups"][0]["flavors"]}
    assert gpu["h100-train"] == {"name": "nvidia.com/gpu", "nominalQuota": "64", "borrowingLimit": "96"}
    assert gpu["h20-hybrid"]["nominalQuota"] == "0"
    assert team_a["fairSharing"] == {"weight": "4"}


def test_reclaim_protects_non_reclaimable_tenants_by_priority(ai_prod) -> None:
    queues = _by_name(_objects(ai_prod, "kueue/clusterqueues.yaml"))
    # team-b is not reclaimable: the others reclaim from it only with higher-priority work.
    assert queues["team-a"]["spec"]["preemption"] == {
        "reclaimWithinCohort": "LowerPriority",
        "withinClusterQueue": "LowerPriority",
    }
    assert queues["team-b"]["spec"]["preemption"]["reclaimWithinCohort"] == "Any"


def test_flavors_carry_pool_labels_taints_and_tolerations(ai_prod) -> None:
    flavor = _by_name(_objects(ai_prod, "kueue/resourceflavors.yaml"))["h20-hybrid"]["spec"]
    assert flavor["nodeLabels"] == {
        "ai.example.com/gpu.tier": "high-performance",
        "ai.example.com/node.pool": "h20-hybrid",
        "ai.example.com/node.usage": "hybrid",
    }
    assert [t["key"] for t in flavor["nodeTaints"]] == ["ai.example.com/node.usage", "nvidia.com/gpu.product"]
    assert all(t["operator"] == "Equal" and t["value"] for t in flavor["tolerations"])


def test_templates_join_their_local_queue_and_the_scheduler_profile(ai_prod) -> None:
    job = _objects(ai_prod, "templates/llm-pretraining.yaml")[0]
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["metadata"]["labels"][kueue.QUEUE_LABEL] == "team-a"
    assert job["spec"]["suspend"] is True
    [(_, pod)] = pod_templates(job)
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

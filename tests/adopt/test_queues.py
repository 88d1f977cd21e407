"""Each scheduler backend's `adopt` face on small hand-made clusters: its queues as the policy writes them."""

from __future__ import annotations

from policyc import registry
from policyc.cluster.source import Kind


class Objects:
    """A cluster source over a few objects."""

    name = "test"

    def __init__(self, *objects: dict):
        self._objects = objects

    def objects(self, kind: Kind, api_version: str | None = None):
        return iter([o for o in self._objects if Kind.of(o) == kind])

    def judged(self, kind: Kind) -> bool:
        return True


def _read(backend: str, *objects: dict):
    return registry.scheduler_adopt(backend).read_queues(Objects(*objects), "example.com", "nvidia.com/gpu")


def _cluster_queue(name: str, reclaim: str, flavors: list[dict], weight: str = "1") -> dict:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohortName": "all",
            "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": flavors}],
            "preemption": {"reclaimWithinCohort": reclaim, "withinClusterQueue": "LowerPriority"},
            "fairSharing": {"weight": weight},
        },
    }


def test_kueue_sums_nominal_quotas_adds_the_borrowing_limit_and_finds_the_queue_not_reclaimable() -> None:
    gpu = [
        {"name": "a", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8", "borrowingLimit": "56"}]},
        {"name": "b", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "56"}]},
    ]
    read = _read(
        "kueue",
        _cluster_queue("research", "LowerPriority", gpu, weight="3"),
        _cluster_queue("serving", "Any", gpu),
        _cluster_queue("team", "LowerPriority", gpu),
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ml"},
         "spec": {"clusterQueue": "research"}},
    )  # fmt: skip
    queues = {q.name: q for q in read.queues}
    # guarantee 8 + 4 = 12 over the two flavors; capability 12 + 56 = 68
    assert queues["research"].settings == {"weight": 3, "guarantee": {"gpu": 12}, "capability": {"gpu": 68}}
    assert queues["research"].namespaces == ("ml",)
    # one queue of the cohort reclaims with Any, the others protect it: it is the one not reclaimable
    assert queues["serving"].settings["reclaimable"] is False and "reclaimable" not in queues["team"].settings


def test_kai_turns_millicores_and_megabytes_back_into_quantities() -> None:
    root = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "prod"}, "spec": {}}
    team = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "team", "labels": {"example.com/tenant": "team"}},
        "spec": {
            "parentQueue": "prod",
            "resources": {
                "cpu": {"quota": 512000, "limit": -1, "overQuotaWeight": 4},  # 512 cpu in millicores
                "gpu": {"quota": 8, "limit": 64, "overQuotaWeight": 4},
                "memory": {"quota": 4294967.296, "limit": -1, "overQuotaWeight": 4},  # 4000 x 2^30 B / 10^6
            },
        },
    }
    read = _read("kai", root, team)
    assert read.policy_name == "prod"
    [queue] = read.queues
    assert queue.tenant == "team"
    assert queue.settings == {
        "weight": 4,
        "guarantee": {"cpu": "512", "memory": "4000Gi", "gpu": 8},
        "capability": {"gpu": 64},
    }


def test_yunikorn_reads_nested_queues_as_parents_and_vcore_as_cpu() -> None:
    conf = """partitions:
- name: default
  nodesortpolicy: {type: fair}
  queues:
  - name: root
    queues:
    - name: org
      resources: {guaranteed: {vcore: "64", nvidia.com/gpu: "16"}}
      queues:
      - name: team
        resources: {max: {nvidia.com/gpu: "8"}}
        properties: {preemption.policy: disabled, priority.offset: "10"}
"""
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "yunikorn-configs", "namespace": "yunikorn"},
        "data": {"queues.yaml": conf},
    }
    read = _read("yunikorn", configmap)
    assert read.scheduler["placement"] == "spread"
    assert [(q.name, q.settings) for q in read.queues] == [
        ("org", {"guarantee": {"cpu": "64", "gpu": 16}}),
        ("team", {"capability": {"gpu": 8}, "reclaimable": False, "priority": 10, "parent": "org"}),
    ]


def test_volcano_reads_the_queue_and_the_plugins_the_policy_would_not_write_itself() -> None:
    queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "ml"},
        "spec": {"weight": 2, "guarantee": {"resource": {"nvidia.com/gpu": "8"}}, "deserved": {"nvidia.com/gpu": "8"}},
    }
    conf = (
        "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n    enablePreemptable: false\n"
        "  - name: capacity\n  - name: nodeorder\n    arguments: {leastrequested.weight: 0}\n"
    )
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
        "data": {"volcano-scheduler.conf": conf},
    }
    read = _read("volcano", queue, configmap)
    [ml] = read.queues
    assert ml.settings == {"weight": 2, "guarantee": {"gpu": 8}}, "a deserved share equal to the guarantee is implied"
    assert read.scheduler["actions"] == ["enqueue", "allocate"] and read.scheduler["queuePlugin"] == "capacity"
    assert read.scheduler["plugins"] == [{"name": "nodeorder", "arguments": {"leastrequested.weight": 0}}]
    assert "placement" in read.guesses, "no placement plugin: binpack, guessed"


def _manager_config(text: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {"controller_manager_config.yaml": text},
    }


def test_kueue_reads_the_workload_kinds_its_integrations_show_some_class_runs() -> None:
    queue = _cluster_queue("team-a", "Never", [{"name": "a100", "resources": [{"name": "cpu", "nominalQuota": "1"}]}])
    frameworks = "integrations:\n  frameworks: [batch/job, kubeflow.org/pytorchjob, deployment, pod]\n"
    read = _read("kueue", queue, _manager_config(frameworks))
    # batch/job is listed whatever the classes run: it shows no kind
    assert read.workload_kinds == {"PyTorchJob": "training", "Deployment": "inference"}
    assert _read("kueue", queue, _manager_config("integrations:\n  frameworks: [batch/job]\n")).workload_kinds == {}
    # a configuration that is not Kueue's shows nothing (the build replaces it)
    assert _read("kueue", queue, _manager_config("[not, a, map]")).workload_kinds == {}
    assert _read("kueue", queue, _manager_config("{unclosed")).workload_kinds == {}

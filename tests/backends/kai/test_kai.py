"""The KAI Scheduler backend: KAI's units, the queue tree it derives from the policy, how workloads join, the
objects against KAI's CRDs, and KAI's rules on a policy. Expected figures are computed by hand in the comments."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from policyc.backends.kai import backend as kai
from policyc.backends.kai import rules as kai_rules
from policyc.backends.workloads import pod_templates
from policyc.compiler import compile_file, compile_text
from policyc.k8s.crd_schemas import crd_schema
from policyc.k8s.quantity import Quantity
from tests.conftest import POLICIES

TREE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: org-tree}
spec:
  kubernetesVersion: "1.33"
  domain: gpu.example.org
  scheduler: {backend: kai, placement: spread}
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-40GB]}
  nodePools:
    - name: train
      usage: training
      nodes: ["gpu-[1-4]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}
      allocatable: {cpu: "64", memory: 512Gi}
  tenants:
    - name: org
      namespaces: [org]
      queue: {guarantee: {gpu: 16, cpu: "40", memory: 1500Gi}, capability: {gpu: 32}, weight: 3, priority: 200}
    - {name: team-a, namespaces: [team-a], queue: {parent: org, guarantee: {gpu: 8, cpu: 500m, memory: 1000Gi}}}
    - {name: team-b, namespaces: [team-b], queue: {parent: org, guarantee: {gpu: 4}, capability: {cpu: "96"}}}
    - {name: solo, namespaces: [solo], queue: {guarantee: {gpu: 2, memory: 1G}, weight: 2}}
  workloads:
    - {name: train, type: training, tenant: team-a, gpuTier: a100, gpus: 8}
"""


def _compile(text: str = TREE):
    return compile_text(text, "policy.yaml")


@pytest.fixture(scope="module")
def tree():
    result = _compile()
    assert result.ok, [d.message for d in result.report.diagnostics]
    return result


@pytest.fixture(scope="module")
def ai_prod():
    result = compile_file(POLICIES / "ai-prod-kai.yaml")
    assert result.ok, [d.message for d in result.report.diagnostics]
    return result


def _manifests(result, path: str):
    return [m for a in result.artifacts if a.path == path for m in a.manifests]


def _queues(result) -> dict[str, dict]:
    return {m.obj["metadata"]["name"]: m.obj for m in _manifests(result, "kai/queues.yaml")}


def _one(result, code: str):
    found = [d for d in result.report.diagnostics if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in result.report.diagnostics]
    return found[0]


# --- units --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "quantity", "expected"),
    [
        ("cpu", "500m", 500),
        ("cpu", "96", 96_000),
        ("cpu", "1.5", 1500),
        ("cpu", "1u", 0.001),  # a thousandth of a millicore
        ("memory", "1000Gi", 1_073_741.824),  # 1000 x 2^30 bytes / 10^6
        ("memory", "1G", 1000),
        ("memory", "512Mi", 536.870912),  # 512 x 2^20 bytes / 10^6
        ("memory", "1", 0.000001),  # one byte
        ("nvidia.com/gpu", "8", 8),
        ("nvidia.com/gpu", "0", 0),
    ],
)
def test_kai_units(resource: str, quantity: str, expected: float) -> None:
    value = kai.kai_number(resource, Quantity.parse(quantity))
    assert value == expected
    assert type(value) is type(expected), "whole values are integers, others floats"


# --- queues -------------------------------------------------------------------------------------------------


def test_each_tenant_queue_converts_guarantee_capability_weight_and_priority(tree) -> None:
    queues = _queues(tree)
    assert queues["org"]["spec"] == {
        "parentQueue": "org-tree",
        "priority": 200,
        "resources": {
            "cpu": {"quota": 40_000, "limit": -1, "overQuotaWeight": 3},
            "gpu": {"quota": 16, "limit": 32, "overQuotaWeight": 3},
            "memory": {"quota": 1_610_612.736, "limit": -1, "overQuotaWeight": 3},  # 1500 x 2^30 / 10^6
        },
    }
    assert queues["team-a"]["spec"] == {
        "parentQueue": "org",
        "resources": {
            "cpu": {"quota": 500, "limit": -1, "overQuotaWeight": 1},
            "gpu": {"quota": 8, "limit": -1, "overQuotaWeight": 1},
            "memory": {"quota": 1_073_741.824, "limit": -1, "overQuotaWeight": 1},
        },
    }
    assert queues["team-b"]["spec"]["resources"] == {
        "cpu": {"quota": 0, "limit": 96_000, "overQuotaWeight": 1},
        "gpu": {"quota": 4, "limit": -1, "overQuotaWeight": 1},
        "memory": {"quota": 0, "limit": -1, "overQuotaWeight": 1},
    }
    assert queues["solo"]["spec"] == {
        "parentQueue": "org-tree",
        "resources": {
            "cpu": {"quota": 0, "limit": -1, "overQuotaWeight": 2},
            "gpu": {"quota": 2, "limit": -1, "overQuotaWeight": 2},
            "memory": {"quota": 1000, "limit": -1, "overQuotaWeight": 2},
        },
    }
    for name in ("org", "team-a", "team-b", "solo"):
        assert queues[name]["metadata"]["labels"]["gpu.example.org/tenant"] == name


def test_the_policy_parent_queue_sums_its_childrens_quotas_and_caps_nothing(tree) -> None:
    parent = _queues(tree)["org-tree"]
    assert "parentQueue" not in parent["spec"] and "priority" not in parent["spec"]
    # Its children are the tenants without a parent: org (cpu 40, gpu 16, memory 1500Gi) and solo (gpu 2, 1G).
    assert parent["spec"]["resources"] == {
        "cpu": {"quota": 40_000, "limit": -1, "overQuotaWeight": 1},
        "gpu": {"quota": 18, "limit": -1, "overQuotaWeight": 1},
        "memory": {"quota": 1_611_612.736, "limit": -1, "overQuotaWeight": 1},  # 1610612.736 + 1000
    }


def test_queue_tree_shape_and_order(tree) -> None:
    manifests = _manifests(tree, "kai/queues.yaml")
    assert [m.obj["metadata"]["name"] for m in manifests] == ["org-tree", "org", "solo", "team-a", "team-b"]
    parents = {m.obj["metadata"]["name"]: m.obj["spec"].get("parentQueue") for m in manifests}
    assert parents == {"org-tree": None, "org": "org-tree", "solo": "org-tree", "team-a": "org", "team-b": "org"}
    sources = {m.obj["metadata"]["name"]: m.sources for m in manifests}
    tenants = ("spec", "tenants")
    assert sources["team-b"] == ((*tenants, 2, "queue"),)
    assert sources["org-tree"] == (("metadata", "name"), (*tenants, 0, "queue"), (*tenants, 3, "queue"))


def test_limit_is_never_left_out(ai_prod, tree) -> None:
    """An omitted limit is 0 to KAI, which admits nothing: every queue writes all three, -1 where uncapped."""
    for result in (ai_prod, tree):
        for name, queue in _queues(result).items():
            resources = queue["spec"]["resources"]
            assert set(resources) == {"cpu", "gpu", "memory"}, name
            for key, entry in resources.items():
                assert set(entry) == {"quota", "limit", "overQuotaWeight"}, (name, key)
                assert entry["limit"] != 0, (name, key)
    # ai-prod-kai caps only GPUs: team-a 160, team-b 120, research 64.
    limits = {name: q["spec"]["resources"]["gpu"]["limit"] for name, q in _queues(ai_prod).items()}
    assert limits == {"ai-prod": -1, "research": 64, "team-a": 160, "team-b": 120}
    assert {q["spec"]["resources"]["cpu"]["limit"] for q in _queues(ai_prod).values()} == {-1}


def test_ai_prod_quotas(ai_prod) -> None:
    queues = _queues(ai_prod)
    team_b = queues["team-b"]["spec"]["resources"]
    assert (team_b["cpu"]["quota"], team_b["gpu"]["quota"], team_b["memory"]["quota"]) == (64_000, 48, 274_877.906944)
    # team-a 512 cpu, 64 GPUs, 4000Gi; team-b 64 cpu, 48 GPUs, 256Gi; research 8 GPUs.
    root = queues["ai-prod"]["spec"]["resources"]
    assert (root["cpu"]["quota"], root["gpu"]["quota"]) == (576_000, 120)
    assert root["memory"]["quota"] == 4_569_845.202944  # (4000 + 256) x 2^30 / 10^6
    assert {name: q["spec"]["resources"]["gpu"]["overQuotaWeight"] for name, q in queues.items()} == {
        "ai-prod": 1,
        "research": 1,
        "team-a": 4,
        "team-b": 2,
    }


# --- scheduling shard, waves --------------------------------------------------------------------------------


def test_scheduling_shard_follows_placement(tree, ai_prod) -> None:
    [spread] = _manifests(tree, "kai/schedulingshard.yaml")
    assert spread.obj["metadata"]["name"] == "default"
    assert spread.obj["spec"] == {"placementStrategy": {"gpu": "spread", "cpu": "spread"}}
    [binpack] = _manifests(ai_prod, "kai/schedulingshard.yaml")
    assert binpack.obj["spec"] == {"placementStrategy": {"gpu": "binpack", "cpu": "binpack"}}


def test_kai_queues_sync_a_wave_after_their_parent(tree) -> None:
    waves = {}
    for path in ("kai/queues.yaml", "kai/schedulingshard.yaml"):
        [artifact] = [a for a in tree.artifacts if a.path == path]
        assert artifact.synced
        waves |= {m.obj["metadata"]["name"]: m.obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
                  for m in artifact.manifests}  # fmt: skip
    # org-tree is the root; org and solo sit under it, team-a and team-b under org; the shard needs nothing.
    assert waves == {"org-tree": "0", "org": "1", "solo": "1", "team-a": "2", "team-b": "2", "default": "0"}


def test_no_tenants_no_queues() -> None:
    text = TREE.split("  tenants:")[0]
    result = _compile(text)
    assert result.ok, [d.message for d in result.report.diagnostics]
    assert not _manifests(result, "kai/queues.yaml")
    assert _manifests(result, "kai/schedulingshard.yaml")


# --- CRD schemas --------------------------------------------------------------------------------------------


def test_every_kai_object_passes_its_crd_schema(ai_prod, tree) -> None:
    checked = set()
    for result in (ai_prod, tree):
        for a in result.artifacts:
            if not a.path.startswith("kai/"):
                continue
            for m in a.manifests:
                schema = crd_schema(m.obj["apiVersion"], m.obj["kind"])
                assert schema is not None, (m.obj["apiVersion"], m.obj["kind"])
                errors = [e.message for e in Draft202012Validator(schema).iter_errors(m.obj)]
                assert errors == [], (a.path, m.obj["metadata"]["name"], errors)
                checked.add((m.obj["apiVersion"], m.obj["kind"]))
    assert checked == {("scheduling.run.ai/v2", "Queue"), ("kai.scheduler/v1", "SchedulingShard")}


def test_the_queue_schema_refuses_a_quantity_string() -> None:
    """The schema check above can fail: KAI's numbers are JSON numbers."""
    schema = crd_schema("scheduling.run.ai/v2", "Queue")
    bad = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "q"},
           "spec": {"resources": {"cpu": {"quota": "500m", "limit": -1}}}}  # fmt: skip
    assert list(Draft202012Validator(schema).iter_errors(bad))


# --- binding ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "kind", "tenant", "pods"),
    [
        ("llm-pretraining", "Job", "team-a", 1),
        ("chat-serving", "Deployment", "team-b", 1),
        ("canary-serving", "Deployment", "team-b", 1),
        ("llm-finetune", "PyTorchJob", "research", 2),  # Master and Worker templates
    ],
)
def test_workloads_join_by_queue_label_on_the_top_owner_and_scheduler_name(ai_prod, template, kind, tenant, pods):
    [m] = _manifests(ai_prod, f"templates/{template}.yaml")
    obj = m.obj
    assert obj["kind"] == kind
    assert obj["metadata"]["labels"]["kai.scheduler/queue"] == tenant
    templates = pod_templates(ai_prod.backend.KINDS, obj)
    assert len(templates) == pods
    for _, _, pod in templates:
        assert pod["spec"]["schedulerName"] == "kai-scheduler"
        assert "kai.scheduler/queue" not in pod["metadata"].get("labels", {}), "the top owner carries it"
        assert not pod["metadata"].get("annotations"), "no queue annotation on the pods"


def test_binding_contract(ai_prod) -> None:
    w = next(w for w in ai_prod.cluster.workloads if w.name == "llm-pretraining")
    b = kai.binding(ai_prod.cluster, w)
    assert (b.scheduler_name, b.queue, b.object_labels, b.pod_annotations, b.suspend) == (
        "kai-scheduler",
        "team-a",
        {"kai.scheduler/queue": "team-a"},
        {},
        False,
    )


def test_a_batch_job_is_one_gang_through_the_owner_annotation(ai_prod) -> None:
    """KAI's pod-grouper takes a batch Job's minMember from kai.scheduler/batch-min-member (fact sheet §3.2)."""
    [job] = _manifests(ai_prod, "templates/llm-pretraining.yaml")
    replicas = next(w.replicas for w in ai_prod.cluster.workloads if w.name == "llm-pretraining")
    assert job.obj["spec"]["parallelism"] == replicas
    assert job.obj["metadata"]["annotations"] == {"kai.scheduler/batch-min-member": str(replicas)}
    [deployment] = _manifests(ai_prod, "templates/chat-serving.yaml")
    assert "annotations" not in deployment.obj["metadata"], "a Deployment's pods are not a gang"


# --- checks -------------------------------------------------------------------------------------------------


def _with_tenants(tenants: str, extra: str = "") -> str:
    head = TREE.split("  tenants:")[0]
    return head + "  tenants:\n" + tenants + extra


def test_a_resource_kai_queues_cannot_express_is_an_error() -> None:
    result = _compile(
        _with_tenants(
            "    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 8}, capability: {ephemeral-storage: 1Ti}}}\n"
        )
    )
    d = _one(result, "PC801")
    assert d.severity == "error"
    assert "ephemeral-storage" in d.message and "gpu (nvidia.com/gpu), cpu and memory" in d.message
    assert d.path == ("spec", "tenants", 0, "queue", "capability", "ephemeral-storage")
    assert d.hint == "remove it, or quota it per namespace (tenants[].quota)"
    assert not result.ok


def test_reclaimable_false_is_a_warning() -> None:
    tenant = "    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 8}, reclaimable: false}}\n"
    result = _compile(_with_tenants(tenant))
    d = _one(result, "PC802")
    assert d.severity == "warning" and "reclaimable: false" in d.message
    assert d.path == ("spec", "tenants", 0, "queue", "reclaimable")
    assert d.hint and "priority 100 or more" in d.hint
    assert result.ok


def test_a_deserved_share_other_than_the_guarantee_is_a_warning_and_an_equal_one_is_not() -> None:
    differing = _compile(
        _with_tenants("    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 8}, deserved: {gpu: 12}}}\n")
    )
    d = _one(differing, "PC802")
    assert "deserved share other than its guarantee (gpu)" in d.message
    assert d.path == ("spec", "tenants", 0, "queue", "deserved")
    assert d.hint and d.hint.startswith("remove deserved")
    tenant = "    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 8}, deserved: {gpu: 8}}}\n"
    equal = _compile(_with_tenants(tenant))
    assert not [d for d in equal.report.diagnostics if d.code == "PC802"]


@pytest.mark.parametrize(
    ("tenant", "says"),
    [("org-tree", "the parent queue of every tenant"), ("default-queue", "Helm chart"),
     ("default-parent-queue", "Helm chart")],
)  # fmt: skip
def test_a_tenant_named_like_a_queue_kai_uses_is_an_error(tenant: str, says: str) -> None:
    result = _compile(_with_tenants(f"    - {{name: {tenant}, namespaces: [ml], queue: {{guarantee: {{gpu: 8}}}}}}\n"))
    d = _one(result, "PC803")
    assert d.severity == "error" and says in d.message
    assert d.path == ("spec", "tenants", 0, "name")
    assert d.hint and d.hint.startswith("give the tenant another name")


def test_a_policy_named_like_a_helm_queue_is_an_error() -> None:
    result = _compile(TREE.replace("metadata: {name: org-tree}", "metadata: {name: default-queue}"))
    d = _one(result, "PC803")
    assert d.path == ("metadata", "name") and "'default-queue'" in d.message
    assert d.hint == "give the policy another name"


def test_workloads_only_in_leaf_queues() -> None:
    result = _compile(TREE.replace("tenant: team-a", "tenant: org"))
    d = _one(result, "PC420")
    assert "the KAI Scheduler accepts jobs only in leaf queues" in d.message
    assert d.path == ("spec", "workloads", 0, "tenant")
    assert d.hint == "run it as a tenant whose queue is a child of 'org'"


def test_children_quotas_beyond_the_parents_are_caught_by_the_shared_tree_check() -> None:
    # team-a 14 + team-b 4 = 18 GPUs under org's 16.
    result = _compile(TREE.replace("guarantee: {gpu: 8, cpu: 500m", "guarantee: {gpu: 14, cpu: 500m"))
    d = _one(result, "PC418")
    assert "guarantee 18 nvidia.com/gpu in total, more than its guarantee of 16" in d.message
    assert d.path == ("spec", "tenants", 0, "queue", "guarantee")
    assert d.hint == "raise 'org' guarantee to at least 18, or lower the children's"


NON_PREEMPTIBLE = """\
  priorityClasses:
    - {name: production, value: 100}
    - {name: scavenger, value: 99, globalDefault: true}
  tenants:
    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 8, cpu: "16"}}}
  workloads:
    - {name: big, type: training, tenant: ml, gpuTier: a100, gpus: 2, replicas: 4, priorityClass: production,
       cpu: "8", memory: 64Gi}
    - {name: small, type: training, tenant: ml, gpuTier: a100, gpus: 2, replicas: 4, cpu: "8", memory: 64Gi}
"""


def test_non_preemptible_work_beyond_the_quota_is_an_error() -> None:
    result = _compile(TREE.split("  tenants:")[0] + NON_PREEMPTIBLE)
    d = _one(result, "PC804")
    # big: priority 100, so non-preemptible; 4 pods x (2 GPUs, 8 cpu, 64Gi) = 8 GPUs, 32 cpu, 256Gi; quota 8 GPUs,
    # 16 cpu, no memory. small takes the default class (99): preemptible, not reported.
    assert "workload 'big' has priority 100 (priority class 'production')" in d.message
    assert "its 4 pods need 32 cpu, 256Gi memory at once, and the quota is 16 cpu, 0 memory" in d.message
    assert d.path == ("spec", "workloads", 0, "priorityClass")
    assert d.hint and d.hint.startswith("guarantee tenant 'ml' at least cpu: 32, memory: 256Gi (queue.guarantee)")


def test_kai_priority_of_a_workload() -> None:
    result = _compile(TREE.split("  tenants:")[0] + NON_PREEMPTIBLE)
    cluster = result.cluster
    big, small = sorted(cluster.workloads, key=lambda w: w.name)
    assert kai_rules.priority(cluster, big) == (100, "priority class 'production'")
    assert kai_rules.priority(cluster, small) == (99, "priority class 'scavenger'")  # the globalDefault
    # Without any class KAI's chart defaults apply: 'inference' (125) for a Deployment, 'train' (50) otherwise.
    plain = _compile(TREE.replace("gpus: 8}", "gpus: 8}\n    - {name: serve, type: inference, tenant: team-b, "
                                  "gpuTier: a100, gpus: 1, kind: Deployment}"))  # fmt: skip
    by_name = {w.name: w for w in plain.cluster.workloads}
    assert kai_rules.priority(plain.cluster, by_name["train"]) == (50, "KAI's default class for a Job, 'train'")
    assert kai_rules.priority(plain.cluster, by_name["serve"])[0] == 125


def test_a_gpu_resource_other_than_nvidia_gpu_is_a_warning() -> None:
    result = _compile(TREE.replace("  scheduler:", "  gpuResource: nvidia.com/mig-3g.20gb\n  scheduler:"))
    d = _one(result, "PC805")
    assert d.severity == "warning" and "nvidia.com/mig-3g.20gb" in d.message
    assert d.path == ("spec", "gpuResource")
    assert d.hint and d.hint.startswith("use gpuResource: nvidia.com/gpu with KAI")
    assert not [d for d in _compile().report.diagnostics if d.code == "PC805"]


def test_the_example_has_no_diagnostics(ai_prod) -> None:
    assert [(d.code, d.message) for d in ai_prod.report.diagnostics] == []

"""The Apache YuniKorn backend: the queues.yaml it derives from the policy (read back through the strict model of
YuniKorn's parser and its core's rules), how pods join their queue and gang, and YuniKorn's rules on a policy.
Expected values are written by hand."""

from __future__ import annotations

import json

import pytest
import yaml

from policyc.backends.workloads import pod_templates
from policyc.backends.yunikorn import backend as yunikorn
from policyc.backends.yunikorn import queues_conf
from policyc.compiler import compile_file, compile_text
from policyc.tenancy import contract
from tests.conftest import POLICIES

TREE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: org-tree}
spec:
  kubernetesVersion: "1.33"
  domain: gpu.example.org
  scheduler: {backend: yunikorn, placement: spread, applicationSort: fair, gangStyle: Hard,
              nonPreemptibleClasses: [serving]}
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-40GB]}
  nodePools:
    - name: train
      usage: hybrid
      nodes: ["gpu-[1-4]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}
      allocatable: {cpu: "64", memory: 512Gi}
  priorityClasses:
    - {name: serving, value: 1000}
  tenants:
    - name: org
      namespaces: [org]
      queue: {guarantee: {gpu: 16, cpu: "40", memory: 1500Gi}, capability: {gpu: 32}, priority: 200}
    - {name: team-a, namespaces: [team-a], queue: {parent: org, guarantee: {gpu: 8, cpu: 500m, memory: 1000Gi}}}
    - name: team-b
      namespaces: [team-b]
      queue: {parent: org, guarantee: {gpu: 4}, capability: {cpu: "96"}, reclaimable: false}
    - {name: solo, namespaces: [solo], queue: {guarantee: {gpu: 2, memory: 1Gi}}}
  workloads:
    - {name: train, type: training, tenant: team-a, gpuTier: a100, gpus: 8, replicas: 2}
    - {name: serve, type: inference, tenant: team-b, gpuTier: a100, gpus: 1, replicas: 2, priorityClass: serving}
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
    result = compile_file(POLICIES / "ai-prod-yunikorn.yaml")
    assert result.ok, [d.message for d in result.report.diagnostics]
    return result


def _configmap(result) -> dict:
    (artifact,) = [a for a in result.artifacts if a.path == "yunikorn/configmap.yaml"]
    (manifest,) = artifact.manifests
    return manifest.obj


def _queues_yaml(result) -> dict:
    """The emitted text, parsed as YuniKorn reads it."""
    return yaml.safe_load(_configmap(result)["data"]["queues.yaml"])


def _template(result, name: str) -> dict:
    (artifact,) = [a for a in result.artifacts if a.path == f"templates/{name}.yaml"]
    return artifact.manifests[0].obj


def _codes(result) -> list[str]:
    return [d.code for d in result.report.diagnostics]


# --- queues.yaml --------------------------------------------------------------------------------------------


def test_the_configmap_is_yunikorns_own_in_its_namespace(tree) -> None:
    meta = _configmap(tree)["metadata"]
    assert (meta["name"], meta["namespace"]) == ("yunikorn-configs", "yunikorn")
    assert list(_configmap(tree)["data"]) == ["queues.yaml"]


def test_the_queue_tree_nests_children_with_vcore_and_properties(tree) -> None:
    assert _queues_yaml(tree) == {
        "partitions": [
            {
                "name": "default",
                "placementrules": [{"name": "provided", "create": False}],
                "nodesortpolicy": {"type": "fair"},  # placement: spread
                "queues": [
                    {
                        "name": "root",
                        "submitacl": "*",
                        "queues": [
                            {
                                "name": "org",
                                "resources": {
                                    "guaranteed": {"memory": "1500Gi", "nvidia.com/gpu": "16", "vcore": "40"},
                                    "max": {"nvidia.com/gpu": "32"},
                                },
                                # a parent: no application sort policy, which is a leaf's
                                "properties": {"priority.offset": "200"},
                                "queues": [
                                    {
                                        "name": "team-a",
                                        "resources": {
                                            "guaranteed": {"memory": "1000Gi", "nvidia.com/gpu": "8", "vcore": "500m"}
                                        },
                                        "properties": {"application.sort.policy": "fair"},
                                    },
                                    {
                                        "name": "team-b",
                                        "resources": {"guaranteed": {"nvidia.com/gpu": "4"}, "max": {"vcore": "96"}},
                                        "properties": {
                                            "application.sort.policy": "fair",
                                            "preemption.policy": "disabled",  # reclaimable: false
                                        },
                                    },
                                ],
                            },
                            {
                                "name": "solo",
                                "resources": {"guaranteed": {"memory": "1Gi", "nvidia.com/gpu": "2"}},
                                "properties": {"application.sort.policy": "fair"},
                            },
                        ],
                    }
                ],
            }
        ]
    }


@pytest.mark.parametrize("policy", ["tree", "ai_prod"])
def test_the_emitted_queues_yaml_passes_the_strict_model_and_the_cores_rules(policy, request) -> None:
    assert queues_conf.problems(_queues_yaml(request.getfixturevalue(policy))) == []


def test_the_shared_checks_keep_a_hierarchy_within_the_cores_rules() -> None:
    """ai-hier (a tree of queues with guarantees and capabilities at each level), compiled for YuniKorn: what the
    shared checks let through, YuniKorn's core takes."""
    text = (POLICIES / "ai-hier.yaml").read_text()
    volcano = "    backend: volcano\n    actions: [enqueue, allocate, preempt, reclaim, backfill]\n"
    text = text.replace(volcano + "    queuePlugin: capacity", "    backend: yunikorn\n   ").replace(
        "VolcanoJob", "Job"
    )
    result = _compile(text)
    assert result.ok, [d.message for d in result.report.diagnostics if d.severity == "error"]
    conf = _queues_yaml(result)

    def paths(queue: dict, path: str) -> list[str]:
        return [path, *(p for q in queue.get("queues", []) for p in paths(q, f"{path}.{q['name']}"))]

    assert paths(conf["partitions"][0]["queues"][0], "root") == [
        "root", "root.ops", "root.research", "root.research.llm", "root.research.llm.align", "root.research.llm.eval",
        "root.research.vision",
    ]  # fmt: skip
    assert queues_conf.problems(conf) == []


def test_binpack_sorts_nodes_by_binpacking(ai_prod) -> None:
    assert _queues_yaml(ai_prod)["partitions"][0]["nodesortpolicy"] == {"type": "binpacking"}


# --- the strict model ---------------------------------------------------------------------------------------


def _conf(root: dict, **partition) -> dict:
    return {"partitions": [{"name": "default", "queues": [root], **partition}]}


@pytest.mark.parametrize(
    ("conf", "problem"),
    [
        (_conf({"name": "root", "submitACL": "*"}), "partitions.0.queues.0.submitACL: Extra inputs are not permitted"),
        ({"partitions": [], "checksums": "x"}, "checksums: Extra inputs are not permitted"),
        (_conf({"name": "root"}, nodesortpolicy="fair"), "partitions.0.nodesortpolicy: Input should be"),
        (_conf({"name": "root"}, placementrules=[{"name": "namespace"}]), "unknown placement rule 'namespace'"),
        (_conf({"name": "root", "queues": [{"name": "a.b"}]}), "root.a.b: the name does not match"),
        (_conf({"name": "root", "queues": [{"name": "a", "resources": {"max": {"cpu": "1"}}}]}), "names cpu 'vcore'"),
        (_conf({"name": "root", "queues": [{"name": "a", "resources": {"max": {"vcore": "x"}}}]}), "resources.max"),
        (_conf({"name": "root", "resources": {"guaranteed": {}}}), "the root queue sets resources"),
        (_conf({"name": "root", "queues": [{"name": "a"}, {"name": "A"}]}), "root: two child queues named 'a'"),
        (_conf({"name": "root", "submitacl": "alice bob admins"}), "has more than one space"),
        ({"partitions": [{"name": "", "queues": []}, {"name": "Default", "queues": []}]}, "two partitions named"),
        (_conf({"name": "root", "maxapplications": 10, "queues": [{"name": "a"}]}), "root.a: maxapplications"),
    ],
)
def test_the_strict_model_refuses_what_yunikorns_parser_does(conf: dict, problem: str) -> None:
    found = queues_conf.problems(conf)
    assert any(problem in p for p in found), found


GPU = "nvidia.com/gpu"


def _queue(name: str, guaranteed: dict | None = None, max_: dict | None = None, queues: list | None = None) -> dict:
    resources = {k: v for k, v in (("guaranteed", guaranteed), ("max", max_)) if v}
    return {"name": name, **({"resources": resources} if resources else {}), "queues": queues or []}


@pytest.mark.parametrize(
    ("parent", "problem"),
    [
        # 3 + 2 = 5 GPUs guaranteed to the children, the parent 4
        (_queue("p", {GPU: "4"}, None, [_queue("a", {GPU: "3"}), _queue("b", {GPU: "2"})]),
         "root.p: its children's guaranteed nvidia.com/gpu together above its guaranteed"),
        # 3 + 2 = 5 guaranteed, the parent's max 4 (guaranteed 8 above it too)
        (_queue("p", {GPU: "8"}, {GPU: "4"}, [_queue("a", {GPU: "3"}), _queue("b", {GPU: "2"})]),
         "root.p: its children's guaranteed nvidia.com/gpu together above its max"),
        (_queue("p", None, {"vcore": "2"}, [_queue("a", None, {"vcore": "2500m"})]),
         "root.p.a: max vcore above its parent's max"),
        (_queue("p", {"memory": "2Gi"}, {"memory": "1Gi"}), "root.p: guaranteed memory above its max"),
    ],
)  # fmt: skip
def test_the_cores_rules_on_amounts_down_the_tree(parent: dict, problem: str) -> None:
    assert problem in queues_conf.problems(_conf({"name": "root", "queues": [parent]}))
    assert queues_conf.schema_problems(_conf({"name": "root", "queues": [parent]})) == []


@pytest.mark.parametrize(
    "conf",
    [
        _conf({"name": "root"}, placementrules=[{"name": "Provided", "filter": {"type": "Allow"}}]),  # any case
        {"partitions": [{"name": "default", "queues": [{"name": "a"}, {"name": "b"}]}], "checksum": "AB12"},
        _conf({"name": "root", "submitacl": "alice,bob admins", "maxapplications": 10,
               "queues": [{"name": "a", "maxapplications": 10}]}),
    ],
)  # fmt: skip
def test_the_strict_model_takes_what_yunikorn_takes(conf: dict) -> None:
    # the second: two top queues, under which YuniKorn inserts root
    assert queues_conf.problems(conf) == []


def test_a_queue_guaranteeing_nothing_passes_its_childrens_sum_up() -> None:
    # p guarantees nothing: its children's 3 + 2 = 5 GPUs count as its own against g, which guarantees 4
    tree = _queue("g", {GPU: "4"}, None, [_queue("p", None, None, [_queue("a", {GPU: "3"}), _queue("b", {GPU: "2"})])])
    assert queues_conf.problems(_conf({"name": "root", "queues": [tree]})) == [
        "root.g: its children's guaranteed nvidia.com/gpu together above its guaranteed"
    ]


def test_a_tree_within_its_bounds_has_no_problem() -> None:
    # 3 + 2 = 5 guaranteed, as the parent's; each max within the parent's 8
    parent = _queue("p", {GPU: "5"}, {GPU: "8"}, [_queue("a", {GPU: "3"}), _queue("b", {GPU: "2"}, {GPU: "8"})])
    assert queues_conf.problems(_conf({"name": "root", "queues": [parent]})) == []


# --- pods ---------------------------------------------------------------------------------------------------


def test_pods_name_their_queue_by_its_full_path(tree) -> None:
    job = _template(tree, "train")
    assert job["metadata"]["labels"]["yunikorn.apache.org/queue"] == "root.org.team-a"
    ((_, _, pod),) = pod_templates(yunikorn.KINDS, job)
    assert pod["spec"]["schedulerName"] == "yunikorn"
    assert pod["metadata"]["annotations"]["yunikorn.apache.org/queue"] == "root.org.team-a"


def test_a_gang_is_one_task_group_of_its_pods(tree) -> None:
    ((_, _, pod),) = pod_templates(yunikorn.KINDS, _template(tree, "train"))
    annotations = pod["metadata"]["annotations"]
    assert annotations["yunikorn.apache.org/app-id"] == "team-a-train"
    assert annotations["yunikorn.apache.org/task-group-name"] == "gang"
    assert annotations["yunikorn.apache.org/schedulingPolicyParameters"] == "gangSchedulingStyle=Hard"
    (group,) = json.loads(annotations["yunikorn.apache.org/task-groups"])
    assert (group["name"], group["minMember"]) == ("gang", 2)  # replicas: 2, the whole gang
    # the placeholders are the pods' size and go where they can
    assert group["minResource"] == pod["spec"]["containers"][0]["resources"]["requests"]
    assert (group["tolerations"], group["affinity"]) == (pod["spec"]["tolerations"], pod["spec"]["affinity"])


def test_a_deployment_is_no_gang_and_its_class_keeps_it_from_preemption(tree) -> None:
    ((_, _, pod),) = pod_templates(yunikorn.KINDS, _template(tree, "serve"))
    assert pod["metadata"]["annotations"] == {
        "yunikorn.apache.org/allow-preemption": "false",  # class serving is in nonPreemptibleClasses
        "yunikorn.apache.org/queue": "root.org.team-b",
    }


# --- rules --------------------------------------------------------------------------------------------------


def test_a_workload_in_a_parent_queue_is_refused(tree) -> None:
    result = _compile(TREE.replace("tenant: team-a", "tenant: org"))
    assert "PC420" in _codes(result)  # workload-in-parent-queue: YuniKorn takes applications only in leaf queues


def test_the_queue_path_limit_is_the_label_values() -> None:
    # root. (5) + 58 characters = 63: the longest path a label value holds
    name = "t" + "x" * 57
    ok = _compile(TREE.replace("name: solo, namespaces: [solo]", f"name: {name}, namespaces: [solo]"))
    assert "yunikorn/queue-path-too-long" not in _codes(ok)
    over = _compile(TREE.replace("name: solo, namespaces: [solo]", f"name: {name}x, namespaces: [solo]"))
    assert "yunikorn/queue-path-too-long" in _codes(over)


# --- the tenant's admission ---------------------------------------------------------------------------------


def _placeholder(template: dict, namespace: str) -> dict:
    """The placeholder pod YuniKorn's shim (1.9, `pkg/cache/placeholder.go`) creates for a gang's task group: the
    group's size and placement, the queue and application as labels, the originating pod's priority class."""
    annotations = template["metadata"]["annotations"]
    (group,) = json.loads(annotations["yunikorn.apache.org/task-groups"])
    spec = {
        "schedulerName": "yunikorn",
        "restartPolicy": "Never",
        "containers": [
            {"name": "pause", "image": "registry.k8s.io/pause:3.7",
             "resources": {"requests": group["minResource"], "limits": group["minResource"]}}
        ],
        "tolerations": group["tolerations"],
        "affinity": group["affinity"],
        "priorityClassName": template["spec"]["priorityClassName"],
    }  # fmt: skip
    if "nodeSelector" in group:
        spec["nodeSelector"] = group["nodeSelector"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "tg-gang-0",
            "namespace": namespace,
            "labels": {
                "yunikorn.apache.org/app-id": annotations["yunikorn.apache.org/app-id"],
                "yunikorn.apache.org/queue": annotations["yunikorn.apache.org/queue"],
            },
            "annotations": {
                "yunikorn.apache.org/placeholder": "true",
                "yunikorn.apache.org/task-group-name": group["name"],
                "yunikorn.apache.org/task-groups": annotations["yunikorn.apache.org/task-groups"],
            },
        },
        "spec": spec,
    }


def _gang_templates(result) -> list[tuple[str, dict, dict]]:
    """(tenant, workload object, pod template) of each gang workload."""
    out = []
    for w in result.cluster.workloads:
        obj = _template(result, w.name)
        for _, _, pod in pod_templates(yunikorn.KINDS, obj):
            if "yunikorn.apache.org/task-groups" in pod["metadata"].get("annotations", {}):
                out.append((w.tenant, obj, pod))
    return out


def test_a_gangs_placeholders_pass_its_tenants_admission(ai_prod) -> None:
    contracts = contract.contracts(ai_prod.cluster, ai_prod.backend)
    gangs = _gang_templates(ai_prod)
    assert {tenant for tenant, _, _ in gangs} == {"team-a", "research"}  # llm-pretraining, llm-finetune, vision-dev
    for tenant, obj, pod in gangs:
        placeholder = _placeholder(pod, obj["metadata"]["namespace"])
        assert contract.admit(contracts[tenant], placeholder).refusals == [], obj["metadata"]["name"]


def test_a_pod_naming_another_tenants_queue_is_refused(ai_prod) -> None:
    c = contract.contracts(ai_prod.cluster, ai_prod.backend)["team-a"]
    _, obj, pod = next(g for g in _gang_templates(ai_prod) if g[0] == "team-a")
    placeholder = _placeholder(pod, obj["metadata"]["namespace"])
    assert contract.admit(c, placeholder).refusals == []
    # YuniKorn's shim reads a pod's queue from the label, the legacy label queue, then the annotation
    for where, key in (("labels", "yunikorn.apache.org/queue"), ("labels", "queue"),
                       ("annotations", "yunikorn.apache.org/queue")):  # fmt: skip
        other = json.loads(json.dumps(placeholder))
        other["metadata"][where][key] = "root.team-b"
        assert contract.admit(c, other).refusals, key

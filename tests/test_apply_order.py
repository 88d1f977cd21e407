"""Every shipped tree, applied in the order `kubectl kustomize` prints it and in the order Argo CD syncs it, creates
no object before an object it needs.

What an object needs is worked out here from the objects alone, by the rules below (each with the upstream behaviour
it stands for), not read from `policyc.k8s.dependencies`. The two appliers:

- `kubectl apply -k` creates objects one by one in the order `kubectl kustomize` prints them (the real binary).
- Argo CD sorts by sync wave, then by its kind order, then by name (gitops-engine `pkg/sync/sync_tasks.go`,
  `syncTasks.Less`), starts a wave only once the one before is applied and healthy, and within a wave applies each
  run of consecutive objects of one kind at the same time (`sync_context.go`, `processCreateTasks`). So an object
  comes after one it needs only if it is in a later run. Argo CD also moves a Namespace before the first object in
  it (`adjustDeps`); the check does not count on that.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from policyc.compiler import compile_file
from policyc.output.write import write_tree
from tests.conftest import GOLDEN, REPO, example_policies, require_tool

Id = tuple[str, str, str, str]
"""(API group, kind, namespace, name)."""

ARGOCD_KIND_ORDER = (
    "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
    "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
    "CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList",
    "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
    "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
    "APIService",
)  # fmt: skip
"""gitops-engine's `kindOrder` (the list Argo CD sorts a wave by); every other kind sorts after these, by name."""
WAVE = "argocd.argoproj.io/sync-wave"

POD_MAKERS = {
    ("", "Pod"), ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"), ("apps", "ReplicaSet"),
    ("batch", "Job"), ("batch", "CronJob"), ("batch.volcano.sh", "Job"), ("kubeflow.org", "PyTorchJob"),
    ("slinky.slurm.net", "NodeSet"),
}  # fmt: skip
"""Kinds whose objects are, or make, pods: the ResourceQuotas and LimitRanges of their namespace and the admission
policy bindings that select it act on each pod as it is created, so they must exist first."""
BINDINGS = {"ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicyBinding"}
ADMISSION = "admissionregistration.k8s.io"
KUEUE = "kueue.x-k8s.io"


def _group(obj: dict) -> str:
    return obj["apiVersion"].rpartition("/")[0]


def _id(obj: dict) -> Id:
    return _group(obj), obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _name(value) -> list[str]:
    return [value] if isinstance(value, str) and value else []


def _flavors(spec: dict) -> list[str]:
    return [f["name"] for g in spec.get("resourceGroups", []) for f in g.get("flavors", [])]


def _priority_class_names(node) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _name(value) if key == "priorityClassName" else _priority_class_names(value)
    elif isinstance(node, list):
        for item in node:
            yield from _priority_class_names(item)


def _selected(selector: dict | None, labels: dict) -> bool:
    """A label selector against a namespace's labels (none selects every namespace)."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        present, value, values = e["key"] in labels, labels.get(e["key"]), e.get("values", [])
        if not {"In": present and value in values, "NotIn": not present or value not in values,
                "Exists": present, "DoesNotExist": not present}[e["operator"]]:  # fmt: skip
            return False
    return True


def _named(obj: dict, objects: list[dict]) -> Iterator[Id]:
    """What `obj` needs to exist before it, whether emitted or not."""
    group, kind, namespace, _ = _id(obj)
    spec = obj.get("spec") or {}
    if namespace:  # the API server refuses an object in a namespace that does not exist
        yield "", "Namespace", "", namespace
    crds = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
    # a custom resource's kind exists once its CRD does
    yield from (_id(c) for c in crds if (c["spec"]["group"], c["spec"]["names"]["kind"]) == (group, kind))
    names: list[tuple[str, str, str]] = []  # (group, kind, name) of cluster-scoped objects it names
    if (group, kind) == ("scheduling.volcano.sh", "Queue"):  # "failed to get parent queue org of queue alpha"
        names += [(group, "Queue", n) for n in _name(spec.get("parent"))]
    if (group, kind) == ("scheduling.run.ai", "Queue"):
        names += [(group, "Queue", n) for n in _name(spec.get("parentQueue"))]
    if (group, kind) == (KUEUE, "Cohort"):
        names += [(group, "Cohort", n) for n in _name(spec.get("parentName"))]
        names += [(group, "ResourceFlavor", n) for n in _flavors(spec)]
    if (group, kind) == (KUEUE, "ClusterQueue"):
        names += [(group, "Cohort", n) for n in _name(spec.get("cohortName"))]
        names += [(group, "ResourceFlavor", n) for n in _flavors(spec)]
    if (group, kind) == (KUEUE, "LocalQueue"):
        names += [(group, "ClusterQueue", n) for n in _name(spec.get("clusterQueue"))]
    if group == ADMISSION and kind in BINDINGS:  # a binding of a policy that does not exist is ignored
        names += [(group, kind.removesuffix("Binding"), n) for n in _name(spec.get("policyName"))]
    if (group, kind) == ("resource.k8s.io", "ResourceClaimTemplate"):
        for request in spec["spec"]["devices"].get("requests", []):
            exact = [request.get("exactly", {})]
            names += [
                (group, "DeviceClass", d.get("deviceClassName")) for d in exact + request.get("firstAvailable", [])
            ]
    # the Priority admission plugin refuses a pod naming a class that does not exist
    names += [("scheduling.k8s.io", "PriorityClass", n) for n in _priority_class_names(spec)]
    yield from ((g, k, "", n) for g, k, n in names if n)
    if (group, kind) in POD_MAKERS:
        ns = [o for o in objects if _id(o) == ("", "Namespace", "", namespace)]
        labels = {**(ns[0]["metadata"].get("labels", {}) if ns else {}), "kubernetes.io/metadata.name": namespace}
        for o in objects:
            if o["kind"] in ("ResourceQuota", "LimitRange") and o["metadata"].get("namespace") == namespace:
                yield _id(o)
            if o["kind"] in BINDINGS and _selected(
                o["spec"].get("matchResources", {}).get("namespaceSelector"), labels
            ):
                yield _id(o)


def needs(objects: list[dict]) -> dict[Id, set[Id]]:
    """Each object -> the other objects of the tree it needs created before it."""
    present = {_id(o) for o in objects}
    return {_id(o): {n for n in _named(o, objects) if n in present and n != _id(o)} for o in objects}


def violations(steps: Iterable[Iterable[dict]], objects: list[dict]) -> list[tuple[str, str]]:
    """(object, what it needs) wherever the object is created no later than what it needs, when the objects of each
    step are created together and the steps one after another."""
    step = {_id(o): i for i, group in enumerate(steps) for o in group}
    assert set(step) == {_id(o) for o in objects}, "the order must hold every object once"
    return sorted((_label(i), _label(n)) for i, wanted in needs(objects).items() for n in wanted if step[n] >= step[i])


def _label(i: Id) -> str:
    return "/".join(filter(None, i[1:]))


def argocd_steps(objects: list[dict]) -> list[list[dict]]:
    """Argo CD's creation steps: sorted by wave, kind order and name; a run of one kind within a wave is one step.
    Objects tied on all three (kinds outside the kind order sharing a name) go in one step: their order is
    unspecified."""
    rank = {kind: i for i, kind in enumerate(ARGOCD_KIND_ORDER)}

    def key(o: dict) -> tuple:
        return (
            int(o["metadata"].get("annotations", {}).get(WAVE, "0")),
            rank.get(o["kind"], len(rank)),
            o["metadata"]["name"],
        )

    steps: list[list[dict]] = []
    for o in sorted(objects, key=key):
        last = steps[-1][-1] if steps else None
        if last is not None and ((key(last)[0] == key(o)[0] and last["kind"] == o["kind"]) or key(last) == key(o)):
            steps[-1].append(o)
        else:
            steps.append([o])
    return steps


def _docs(text: str) -> list[dict]:
    return [d for d in YAML(typ="safe", pure=True).load_all(text) if d]


def _listed(tree: Path) -> list[dict]:
    """What the kustomization lists (what Argo CD renders through kustomize and then orders itself)."""
    [kustomization] = _docs((tree / "kustomization.yaml").read_text())
    return [d for rel in kustomization["resources"] for d in _docs((tree / rel).read_text())]


def kustomize(tree: Path) -> list[dict]:
    kubectl = require_tool("kubectl", "apt-get install kubernetes-client")
    result = subprocess.run([kubectl, "kustomize", str(tree)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return _docs(result.stdout)


TREES = [f"golden/{p.stem}" for p in example_policies()] + [f"build/{p.stem}" for p in example_policies()]


@pytest.fixture(scope="module", params=TREES)
def tree(request, tmp_path_factory) -> Path:
    source, _, name = request.param.partition("/")
    if source == "golden":
        return GOLDEN / name
    result = compile_file(REPO / "policies" / f"{name}.yaml")
    assert result.ok, [d.message for d in result.report.diagnostics]
    target = tmp_path_factory.mktemp(name) / "out"
    write_tree(result.files, target)
    return target


def test_kubectl_kustomize_prints_everything_after_what_it_needs(tree) -> None:
    built = kustomize(tree)
    assert sorted(map(_id, built)) == sorted(map(_id, _listed(tree)))
    assert violations(([o] for o in built), built) == []


def test_argocd_syncs_everything_after_what_it_needs(tree) -> None:
    objects = _listed(tree)
    assert violations(argocd_steps(objects), objects) == []


def test_the_hierarchical_example_names_children_before_their_parents() -> None:
    """ai-hier exists to show the order holds where name order would not: a child queue named before its parent,
    three levels deep (align < llm < research)."""
    objects = _listed(GOLDEN / "ai-hier")
    parents = {o["metadata"]["name"]: o["spec"].get("parent") for o in objects if o["kind"] == "Queue"}
    assert parents == {
        "research": None, "ops": None, "llm": "research", "vision": "research", "align": "llm", "eval": "llm"
    }  # fmt: skip


VOLCANO, KAI = "scheduling.volcano.sh", "scheduling.run.ai"


@pytest.mark.parametrize(
    ("tree", "needer", "needed"),
    [
        ("ai-hier", (VOLCANO, "Queue", "", "align"), (VOLCANO, "Queue", "", "llm")),
        ("ai-hier", (VOLCANO, "Queue", "", "llm"), (VOLCANO, "Queue", "", "research")),
        ("ai-prod-kai", (KAI, "Queue", "", "team-a"), (KAI, "Queue", "", "ai-prod")),
        ("ai-prod-kueue", (KUEUE, "LocalQueue", "ai-team-a", "team-a"), (KUEUE, "ClusterQueue", "", "team-a")),
        ("ai-prod-kueue", (KUEUE, "ClusterQueue", "", "team-a"), (KUEUE, "Cohort", "", "ai-prod")),
        ("ai-prod-kueue", (KUEUE, "ClusterQueue", "", "team-a"),
         (KUEUE, "ResourceFlavor", "", "high-performance-training")),
        ("ai-dra", ("resource.k8s.io", "ResourceClaimTemplate", "llm", "pretrain-gpus"),
         ("resource.k8s.io", "DeviceClass", "", "h100.ai.example.com")),
        ("ai-prod", (ADMISSION, "ValidatingAdmissionPolicyBinding", "", "policyc-tenant-team-a"),
         (ADMISSION, "ValidatingAdmissionPolicy", "", "policyc-tenant-team-a")),
        ("ai-prod", (ADMISSION, "MutatingAdmissionPolicyBinding", "", "policyc-inject-team-a"),
         (ADMISSION, "MutatingAdmissionPolicy", "", "policyc-inject-team-a")),
        ("ai-prod", ("", "ResourceQuota", "ai-team-a", "tenant-quota"), ("", "Namespace", "", "ai-team-a")),
    ],
)  # fmt: skip
def test_the_relation_sees_what_each_tree_references(tree: str, needer: Id, needed: Id) -> None:
    """The relation the checks use is not empty where it matters: a reference of each kind, by hand."""
    assert needed in needs(_listed(GOLDEN / tree))[needer]


def test_the_checks_catch_a_child_queue_applied_before_its_parent(tmp_path) -> None:
    """The same tree in kustomize's default (legacy) order, which sorts Queues by name, and with every Queue in one
    Argo CD wave: both put a child before or beside its parent, and the checks say so."""
    tree = tmp_path / "ai-hier"
    shutil.copytree(GOLDEN / "ai-hier", tree)
    kustomization = tree / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("sortOptions:\n  order: fifo\n", ""))
    built = kustomize(tree)
    children = [("Queue/align", "Queue/llm"), ("Queue/eval", "Queue/llm"), ("Queue/llm", "Queue/research")]
    # legacy order sorts the Queues align, eval, llm, ops, research, vision: every child before its parent
    assert violations(([o] for o in built), built) == children
    objects = _listed(GOLDEN / "ai-hier")
    for o in objects:
        if o["kind"] == "Queue":
            o["metadata"]["annotations"][WAVE] = "2"
    # one wave: Argo CD creates the six Queues at once, vision with its parent research too
    assert violations(argocd_steps(objects), objects) == sorted([*children, ("Queue/vision", "Queue/research")])

"""Workload-class injection, judged as the API server would judge it.

Where the API server has MutatingAdmissionPolicy, each tenant's `tenants/<tenant>.yaml` also holds a
MutatingAdmissionPolicy `policyc-inject-<tenant>` and its binding: a pod labelled `<domain>/workload-class: <class>`
gets the class's placement (tolerations, node affinity, nodeSelector, scheduler, queue). The policy is read from
the compiled output (not from `policyc.tenancy.injection`) and evaluated with the CEL library
(common-expression-language) in the API server's order: the binding selects the namespace and the policy's
resourceRules the request, then every matchCondition must be true (else the policy is skipped), then
`spec.variables`, then each mutation's `jsonPatch.expression`, whose JSON Patch is applied before the next mutation
is evaluated. The mutated pod then goes through every tenant's ValidatingAdmissionPolicy (`tests.test_tenancy`), as
mutating admission runs before validating admission.

What must hold, for ai-prod (Volcano), 1.36 variants of the Kueue and KAI examples, and a variant of ai-prod whose
class has a nodeSelector, an extra toleration and preferred placement:

- the CEL and the Python model (`injection.patches`) give the same patches, on the labelled pod, on variations of
  it and on generated pods;
- the injected pod carries its class's placement as the class's emitted template states it, is admitted by its
  tenant's validating policy (in deny mode too), and lands exactly on the pools the class can reach;
- a pod naming no class, another tenant's class or an unknown class, or in another tenant's namespace, is left
  alone;
- a workload object whose pod template names only its class is admitted where classes are injected, and refused
  (rule scheduler-name) where they are not;
- no priority class is injected;
- the policy's API version follows the Kubernetes version (and the beta flag), and a tenant with admission off
  gets no policy at all.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyc.compiler import Compilation
from policyc.ir import Workload
from policyc.pods import reachable_pools
from policyc.proof.admitted import as_pod
from policyc.proof.placement import CONTROL_PLANE, placement_of, workload_templates
from policyc.tenancy import contract, injection
from policyc.tenancy.proof import DEFAULT_TOLERATIONS, labelled_pod
from tests.test_tenancy import (
    admission,
    compiled,
    example_text,
    matches,
    pod_templates_in,
    program,
    request,
    selects,
    verdict,
    with_admission,
)

MAP = "MutatingAdmissionPolicy"
MAP_BINDING = "MutatingAdmissionPolicyBinding"
VAP = "ValidatingAdmissionPolicy"
VAP_BINDING = "ValidatingAdmissionPolicyBinding"
ADMISSION_KINDS = (MAP, MAP_BINDING, VAP, VAP_BINDING)
V1 = "admissionregistration.k8s.io/v1"
V1BETA1 = "admissionregistration.k8s.io/v1beta1"
CLASS_LABEL = "ai.example.com/workload-class"
"""`<domain>/workload-class` for the ai-prod examples (domain ai.example.com), written out."""


def _version(text: str, old: str, new: str) -> str:
    anchor = f'kubernetesVersion: "{old}"'
    assert text.count(anchor) == 1, anchor
    return text.replace(anchor, f'kubernetesVersion: "{new}"')


def _replace(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _zoned(text: str) -> str:
    """ai-prod with a second A40 pool in another zone, a taint of its own on a40-dev, and vision-dev pinned to
    a40-dev by a nodeSelector (zone-b) and an extra toleration (of that taint), with preferred placement: the
    nodeSelector and the extra toleration are what decides its pools."""
    text = _replace(
        text,
        "      labels:\n        topology.kubernetes.io/zone: zone-b\n",
        "      labels:\n        topology.kubernetes.io/zone: zone-b\n"
        "      taints:\n        - {key: example.com/dedicated, value: vision, effect: NoSchedule}\n"
        '    - name: a40-spare\n      usage: training\n      nodes: ["a40-spare-[1-2]"]\n'
        "      gpu: {product: NVIDIA-A40, count: 4, memory: 48Gi}\n"
        '      allocatable: {cpu: "64", memory: 512Gi}\n'
        "      labels:\n        topology.kubernetes.io/zone: zone-a\n",
    )
    return _replace(
        text,
        "      gpuTier: standard\n      gpus: 2\n      kind: VolcanoJob\n",
        "      gpuTier: standard\n      gpus: 2\n      kind: VolcanoJob\n      placement: preferred\n"
        "      nodeSelector: {topology.kubernetes.io/zone: zone-b}\n"
        "      tolerations:\n"
        "        - {key: example.com/dedicated, operator: Equal, value: vision, effect: NoSchedule}\n",
    )


POLICIES: dict[str, Any] = {
    "ai-prod": lambda: example_text("ai-prod.yaml"),
    "ai-prod-kueue@1.36": lambda: _version(example_text("ai-prod-kueue.yaml"), "1.33", "1.36"),
    "ai-prod-kai@1.36": lambda: _version(example_text("ai-prod-kai.yaml"), "1.33", "1.36"),
    "ai-prod-zoned": lambda: _zoned(example_text("ai-prod.yaml")),
}
"""The policies with injection (Kubernetes 1.36), by a name for test ids."""
QUEUE_KEYS = {
    "volcano": ((), ("scheduling.volcano.sh/queue-name",)),
    "kueue": (("kueue.x-k8s.io/queue-name",), ()),
    "kai": (("kai.scheduler/queue",), ()),
}
"""Backend -> (pod labels, pod annotations) that name a pod's queue (written out, not taken from policyc). In the
examples each tenant's queue is named after the tenant."""


def policy(name: str, mode: str | None = None) -> Compilation:
    """A policy of POLICIES, compiled once (in admission mode `mode`: None is the default, warn)."""
    comp = compiled(with_admission(POLICIES[name](), mode))
    assert comp.ok, [(d.code, d.message) for d in comp.report.diagnostics]
    return comp


def mutating(comp: Compilation) -> dict[str, tuple[dict, dict]]:
    """Tenant -> (its MutatingAdmissionPolicy, its binding), from the tenant's file `tenants/<tenant>.yaml`."""
    out = {}
    for a in comp.artifacts:
        if a.path.startswith("tenants/"):
            objs = {m.obj["kind"]: m.obj for m in a.manifests if m.obj["kind"] in ADMISSION_KINDS}
            assert len(objs) == sum(m.obj["kind"] in ADMISSION_KINDS for m in a.manifests), a.path
            assert set(objs) in (set(), {VAP, VAP_BINDING}, {VAP, VAP_BINDING, MAP, MAP_BINDING}), a.path
            if MAP in objs:
                out[a.path.removeprefix("tenants/").removesuffix(".yaml")] = (objs[MAP], objs[MAP_BINDING])
    return out


def workload(comp: Compilation, name: str) -> Workload:
    return next(w for w in comp.cluster.workloads if w.name == name)


def contract_of(comp: Compilation, tenant: str) -> contract.Contract:
    return contract.contracts(comp.cluster, comp.backend)[tenant]


def injection_of(comp: Compilation, w: Workload) -> injection.Injection:
    return next(i for i in contract_of(comp, w.tenant).injections if i.workload == w.name)


# --- the API server's mutating admission, as far as these policies need it -------------------------------------

_STRING = r"'(?:[^'\\]|\\.)*'"
_JSON_PATCH = re.compile(rf"JSONPatch\{{op: ({_STRING}), path: ({_STRING}), value: ")


def portable(expression: str) -> str:
    """The expression with each Kubernetes `JSONPatch{op: ..., path: ..., value: ...}` written as the CEL map
    `{'op': ..., 'path': ..., 'value': ...}`.

    JSONPatch is an object type the API server declares in the CEL environment of mutating policies; the CEL
    library has no such type (it refuses the object construction: "Found struct JSONPatch, feature not enabled").
    The API server turns each JSONPatch object into the JSON Patch operation with the same op, path and value
    (and `from`, which these policies do not use); a map with those three keys carries exactly that. Only the
    emitted shape is rewritten (op and path string literals, in that order), and every occurrence must be."""
    count = expression.count("JSONPatch{")
    rewritten, n = _JSON_PATCH.subn(r"{'op': \1, 'path': \2, 'value': ", expression)
    assert n == count and "JSONPatch" not in rewritten, f"a JSONPatch not rewritten in {expression}"
    return rewritten


def _variables(policy: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    variables: dict[str, Any] = {}
    for v in policy["spec"].get("variables", []):
        variables[v["name"]] = program(v["expression"]).execute({**context, "variables": variables})
    return variables


def mutate(policy: Mapping[str, Any], pod: Mapping[str, Any]) -> tuple[list[dict], dict] | None:
    """(the JSON Patch operations of all mutations, in order; the pod patched) or None when a matchCondition is
    false (the policy is skipped). An error raises: with failurePolicy Fail it would refuse the request.

    Each mutation is evaluated on the object the previous ones patched, with `spec.variables` evaluated on it, as
    the API server does; here at most one mutation (its class's) gives a patch, so this is also the concatenation
    of all the mutations' patches on the pod as it came."""
    context: dict[str, Any] = {"object": pod, "request": request(pod, "CREATE")}
    for condition in policy["spec"].get("matchConditions", []):
        value = program(condition["expression"]).execute(context)
        assert isinstance(value, bool), (condition["name"], value)
        if not value:
            return None
    ops: list[dict] = []
    obj = copy.deepcopy(dict(pod))
    for mutation in policy["spec"]["mutations"]:
        assert mutation["patchType"] == "JSONPatch", mutation["patchType"]
        context = {"object": obj, "request": request(obj, "CREATE")}
        context["variables"] = _variables(policy, context)
        patch = program(portable(mutation["jsonPatch"]["expression"])).execute(context)
        assert isinstance(patch, list), patch
        assert all(isinstance(p, dict) and set(p) == {"op", "path", "value"} for p in patch), patch
        obj = jsonpatch.apply_patch(obj, patch)
        ops += patch
    return ops, obj


def inject(comp: Compilation, pod: Mapping[str, Any]) -> tuple[dict, list[str]]:
    """The pod after every tenant's mutating policy (those that match a pod's CREATE in its namespace and whose
    conditions hold), and the names of the policies that mutated it."""
    namespace = pod["metadata"].get("namespace", "")
    applied = []
    obj = copy.deepcopy(dict(pod))
    for _, (policy, binding) in sorted(mutating(comp).items()):
        assert binding["spec"]["policyName"] == policy["metadata"]["name"]
        if not matches(policy, obj, "CREATE") or not selects(binding, namespace):
            continue
        result = mutate(policy, obj)
        if result is not None:
            obj = result[1]
            applied.append(policy["metadata"]["name"])
    return obj, applied


def judge(comp: Compilation, pod: Mapping[str, Any], operation: str = "CREATE") -> tuple[str, list[str]]:
    """Every tenant's validating policy on the object: refused if one refuses, else warned if one warns."""
    answers = [verdict(vap, binding, pod, operation) for vap, binding in admission(comp).values()]
    messages = [m for _, ms in answers for m in ms]
    for answer in ("refused", "warned"):
        if any(a == answer for a, _ in answers):
            return answer, messages
    return "admitted", messages


def failed_rules(messages: list[str]) -> set[str]:
    return {m.split("(rule ", 1)[1].split(")", 1)[0].split(";", 1)[0] for m in messages}


def landed(comp: Compilation, pod: Mapping[str, Any]) -> set[str]:
    return {target for target, admitted, _ in placement_of(comp.cluster, pod) if admitted}


def reachable(comp: Compilation, w: Workload) -> set[str]:
    return {p.name for p in reachable_pools(comp.cluster, w)}


# --- what a class's pods must get: its emitted template's placement, its tenant's queue --------------------------


def template_placement(comp: Compilation, w: Workload) -> dict:
    """tolerations, affinity, nodeSelector (maybe absent) and schedulerName of the class's emitted template's pod
    templates (which all agree)."""
    template = workload_templates(comp.artifacts)[w.name]
    specs = [t["spec"] for t in pod_templates_in(template["spec"])]
    assert specs, w.name
    fields = ("tolerations", "affinity", "nodeSelector", "schedulerName")
    placements = [{k: s[k] for k in fields if k in s} for s in specs]
    assert all(p == placements[0] for p in placements), w.name
    return placements[0]


def expected(comp: Compilation, w: Workload, pod: Mapping[str, Any]) -> dict:
    """`pod` as injection must leave it: the class's tolerations appended, its affinity where the pod has none
    (its nodeAffinity where the pod's affinity has none), its nodeSelector's keys, its scheduler, and the queue
    label or annotation of the backend naming the tenant's queue; everything else as it was."""
    place = template_placement(comp, w)
    out = copy.deepcopy(dict(pod))
    spec, meta = out["spec"], out["metadata"]
    spec["tolerations"] = [*spec.get("tolerations", []), *place["tolerations"]]
    if "affinity" not in spec:
        spec["affinity"] = place["affinity"]
    elif "nodeAffinity" not in spec["affinity"]:
        spec["affinity"]["nodeAffinity"] = place["affinity"]["nodeAffinity"]
    if place.get("nodeSelector"):
        spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **place["nodeSelector"]}
    spec["schedulerName"] = place["schedulerName"]
    labels, annotations = QUEUE_KEYS[comp.cluster.scheduler.backend]
    if labels:
        meta["labels"] = {**meta.get("labels", {}), **dict.fromkeys(labels, w.tenant)}
    if annotations:
        meta["annotations"] = {**meta.get("annotations", {}), **dict.fromkeys(annotations, w.tenant)}
    return out


# --- pods ---------------------------------------------------------------------------------------------------

OWN_NODE_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "example.com/rack", "operator": "In", "values": ["r1"]}]}]
    }
}
POD_ANTI_AFFINITY = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 10,
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app": "x"}},
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    }
}
OWN_TOLERATION = {"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}


def _edit(pod: dict, *, spec: Mapping[str, Any] = {}, drop: tuple[str, ...] = (), **meta: Any) -> dict:  # read only
    out = copy.deepcopy(pod)
    for k in drop:
        out["spec"].pop(k, None)
    out["spec"].update(copy.deepcopy(dict(spec)))
    for k, v in meta.items():
        out["metadata"][k] = {**out["metadata"].get(k, {}), **v}
    return out


def variations(comp: Compilation, w: Workload) -> dict[str, tuple[dict, bool]]:
    """Name -> (a labelled pod of the class, whether it must still be admitted and land on the class's pools once
    injected). The last three keep placement of their own, which injection leaves alone (or adds to)."""
    pod = labelled_pod(comp.cluster, w)
    other = next(t.name for t in comp.cluster.tenants if t.name != w.tenant)
    labels, annotations = QUEUE_KEYS[comp.cluster.scheduler.backend]
    return {
        "labelled": (pod, True),
        "no tolerations": (_edit(pod, drop=("tolerations",)), True),
        "own toleration": (_edit(pod, spec={"tolerations": [*DEFAULT_TOLERATIONS, OWN_TOLERATION]}), True),
        "empty tolerations": (_edit(pod, spec={"tolerations": []}), True),
        "pod anti-affinity only": (_edit(pod, spec={"affinity": POD_ANTI_AFFINITY}), True),
        "empty affinity": (_edit(pod, spec={"affinity": {}}), True),
        "no scheduler": (_edit(pod, drop=("schedulerName",)), True),
        "another scheduler": (_edit(pod, spec={"schedulerName": "my-scheduler"}), True),
        "labels and annotations": (_edit(pod, labels={"app": "x"}, annotations={"example.com/note": "hi"}), True),
        "another tenant's queue": (
            _edit(pod, labels=dict.fromkeys(labels, other), annotations=dict.fromkeys(annotations, other)),
            True,
        ),
        "empty annotations": (_edit(pod, annotations={}), True),
        "own nodeAffinity": (
            _edit(pod, spec={"affinity": {**POD_ANTI_AFFINITY, "nodeAffinity": OWN_NODE_AFFINITY}}),
            False,
        ),
        "own nodeSelector": (_edit(pod, spec={"nodeSelector": {"example.com/disk": "ssd"}}), False),
        "own nodeSelector, the class's key": (
            _edit(pod, spec={"nodeSelector": {"topology.kubernetes.io/zone": "zone-a", "example.com/disk": "ssd"}}),
            False,
        ),
    }


# --- what is emitted ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", POLICIES)
def test_each_tenant_with_classes_has_its_mutating_policy(name: str) -> None:
    comp = policy(name)
    emitted = mutating(comp)
    assert set(emitted) == {w.tenant for w in comp.cluster.workloads} == {t.name for t in comp.cluster.tenants}
    all_namespaces = {ns for t in comp.cluster.tenants for ns in t.namespaces} | {"default", "kube-system"}
    for tenant, (policy_, binding) in emitted.items():
        t = next(t for t in comp.cluster.tenants if t.name == tenant)
        classes = sorted(w.name for w in comp.cluster.workloads if w.tenant == tenant)
        assert policy_["apiVersion"] == binding["apiVersion"] == V1
        assert policy_["metadata"]["name"] == binding["metadata"]["name"] == binding["spec"]["policyName"]
        assert policy_["metadata"]["name"] == f"policyc-inject-{tenant}"
        assert policy_["spec"]["failurePolicy"] == "Fail"
        assert policy_["spec"]["reinvocationPolicy"] == "Never"
        assert [c["name"] for c in policy_["spec"]["matchConditions"]] == ["names-a-workload-class"]
        assert [v["name"] for v in policy_["spec"]["variables"]] == ["workloadClass"]
        # One JSON Patch mutation per class, in name order, each guarded by its class.
        mutations = policy_["spec"]["mutations"]
        assert [m["patchType"] for m in mutations] == ["JSONPatch"] * len(classes)
        for cls, m in zip(classes, mutations, strict=True):
            assert m["jsonPatch"]["expression"].startswith(f"variables.workloadClass != '{cls}' ? [] : ")
        # Its own namespaces and no other; pods on create only.
        assert {ns for ns in all_namespaces if selects(binding, ns)} == set(t.namespaces)
        assert matches(policy_, {"apiVersion": "v1", "kind": "Pod"}, "CREATE")
        for op in ("UPDATE", "DELETE"):
            assert not matches(policy_, {"apiVersion": "v1", "kind": "Pod"}, op)
        for kind in ("Deployment", "Job", "PyTorchJob"):
            assert not matches(policy_, {"apiVersion": "example.com/v1", "kind": kind}, "CREATE")


def test_portable_rewrites_every_json_patch_and_nothing_else() -> None:
    expression = (
        "x ? [JSONPatch{op: 'add', path: '/a~1b', value: {'op': 'o, path: p', 'value': 1}}] : "
        "[JSONPatch{op: 'add', path: '/c', value: 'it\\'s'}]"
    )
    assert portable(expression) == (
        "x ? [{'op': 'add', 'path': '/a~1b', 'value': {'op': 'o, path: p', 'value': 1}}] : "
        "[{'op': 'add', 'path': '/c', 'value': 'it\\'s'}]"
    )
    with pytest.raises(AssertionError, match="not rewritten"):
        portable("[JSONPatch{path: '/a', op: 'add', value: 1}]")  # another shape: refused, not half rewritten


# --- the labelled pod ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", POLICIES)
def test_cel_and_python_give_the_same_patches_and_the_class_placement(name: str) -> None:
    comp = policy(name)
    emitted = mutating(comp)
    tried = 0
    for w in comp.cluster.workloads:
        inj = injection_of(comp, w)
        for what, (pod, _) in variations(comp, w).items():
            result = mutate(emitted[w.tenant][0], pod)
            assert result is not None, f"{name}: class {w.name}, {what}: the policy is skipped"
            ops, patched = result
            python = injection.patches(inj, pod)
            assert ops == python, f"{name}, tenant {w.tenant}, class {w.name}, {what}: CEL {ops}, Python {python}"
            assert patched == injection.apply(pod, python)
            assert patched == expected(comp, w, pod), f"{name}: class {w.name}, {what}"
            tried += 1
    assert tried == len(comp.cluster.workloads) * 14


@pytest.mark.parametrize("name", POLICIES)
def test_the_labelled_pod_gets_exactly_its_class_placement(name: str) -> None:
    """The labelled pod as it reaches mutating admission: default scheduler, the default tolerations, its
    priority class and nothing of its class's placement; once injected, its spec is the class's template's."""
    comp = policy(name)
    for w in comp.cluster.workloads:
        pod = labelled_pod(comp.cluster, w)
        assert pod["metadata"]["labels"] == {CLASS_LABEL: w.name}
        injected, applied = inject(comp, pod)
        assert applied == [f"policyc-inject-{w.tenant}"]
        place = template_placement(comp, w)
        assert injected["spec"]["tolerations"] == [*DEFAULT_TOLERATIONS, *place["tolerations"]]
        assert injected["spec"]["affinity"] == place["affinity"]
        assert injected["spec"].get("nodeSelector") == place.get("nodeSelector")
        assert injected["spec"]["schedulerName"] == place["schedulerName"] != contract.DEFAULT_SCHEDULER
        assert injected["spec"].get("priorityClassName") == w.priority_class
        assert injected["spec"]["containers"] == pod["spec"]["containers"]
        labels, annotations = QUEUE_KEYS[comp.cluster.scheduler.backend]
        assert injected["metadata"]["labels"] == {CLASS_LABEL: w.name, **dict.fromkeys(labels, w.tenant)}
        assert injected["metadata"].get("annotations", {}) == dict.fromkeys(annotations, w.tenant)


@pytest.mark.parametrize("mode", ["deny", None])
@pytest.mark.parametrize("name", POLICIES)
def test_an_injected_pod_is_admitted_and_lands_on_its_class_pools(name: str, mode: str | None) -> None:
    """The Done-when: a pod with only the workload-class label gets the class's placement and lands on the right
    pools; so do its variations that keep no placement of their own. Without injection it is refused (deny) and
    lands nowhere: injection is what places it."""
    comp = policy(name, mode)
    refused = "refused" if mode == "deny" else "warned"
    for w in comp.cluster.workloads:
        pools = reachable(comp, w)
        assert pools and CONTROL_PLANE not in pools
        # Where the class's own template's pods land (the placement proof's view), as a second witness.
        template = workload_templates(comp.artifacts)[w.name]
        assert all(landed(comp, t) == pools for t in pod_templates_in(template["spec"])), w.name
        for what, (pod, neutral) in variations(comp, w).items():
            injected, _ = inject(comp, pod)
            if not neutral:
                continue
            answer = judge(comp, injected)
            assert answer == ("admitted", []), f"{name}, tenant {w.tenant}, class {w.name}, {what}: {answer}"
            where = landed(comp, injected)
            assert where == pools, f"{name}, tenant {w.tenant}, class {w.name}, {what}: lands on {where}, not {pools}"
        bare = labelled_pod(comp.cluster, w)
        answer, messages = judge(comp, bare)
        assert answer == refused and "scheduler-name" in failed_rules(messages), (w.name, messages)
        assert landed(comp, bare) == set()


def test_the_class_nodeselector_and_extra_toleration_decide_the_pools() -> None:
    """In ai-prod-zoned, vision-dev reaches a40-dev alone: without its injected nodeSelector it would also land on
    a40-spare, without its extra toleration nowhere; a nodeSelector of the pod's own for the same key is
    overwritten (zone-a would be a40-spare)."""
    comp = policy("ai-prod-zoned", "deny")
    w = workload(comp, "vision-dev")
    assert reachable(comp, w) == {"a40-dev"}
    injected, _ = inject(comp, labelled_pod(comp.cluster, w))
    assert injected["spec"]["nodeSelector"] == {"topology.kubernetes.io/zone": "zone-b"}
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in injected["spec"]["affinity"]["nodeAffinity"]
    assert landed(comp, injected) == {"a40-dev"}
    assert landed(comp, _edit(injected, drop=("nodeSelector",))) == {"a40-dev", "a40-spare"}
    dedicated = {"key": "example.com/dedicated", "operator": "Equal", "value": "vision", "effect": "NoSchedule"}
    assert dedicated in injected["spec"]["tolerations"]
    without = _edit(injected, spec={"tolerations": [t for t in injected["spec"]["tolerations"] if t != dedicated]})
    assert landed(comp, without) == set()
    zone_a = labelled_pod(comp.cluster, w)
    zone_a["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": "zone-a"}
    injected, _ = inject(comp, zone_a)
    assert injected["spec"]["nodeSelector"] == {"topology.kubernetes.io/zone": "zone-b"}
    assert landed(comp, injected) == {"a40-dev"}
    assert judge(comp, injected) == ("admitted", [])


def test_own_node_affinity_is_left_alone() -> None:
    comp = policy("ai-prod")
    w = workload(comp, "chat-serving")
    pod, _ = variations(comp, w)["own nodeAffinity"]
    injected, _ = inject(comp, pod)
    assert injected["spec"]["affinity"] == {**POD_ANTI_AFFINITY, "nodeAffinity": OWN_NODE_AFFINITY}
    assert landed(comp, injected) == set()  # no pool has the rack label: its own choice, kept
    pod, _ = variations(comp, w)["pod anti-affinity only"]
    injected, _ = inject(comp, pod)
    assert injected["spec"]["affinity"] == {**POD_ANTI_AFFINITY, **template_placement(comp, w)["affinity"]}


# --- what is not injected -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", POLICIES)
def test_pods_naming_no_class_of_the_tenant_are_left_alone(name: str) -> None:
    """matchConditions skip a pod without the label, with an empty one, with another tenant's class or an unknown
    one; a labelled pod in another tenant's namespace is not selected by the class's tenant's binding. None is
    mutated, so in deny mode each is refused (scheduler-name): the label gains no placement outside its tenant."""
    comp = policy(name, "deny")
    emitted = mutating(comp)
    for tenant, (policy_, binding) in emitted.items():
        t = next(t for t in comp.cluster.tenants if t.name == tenant)
        w = next(w for w in comp.cluster.workloads if w.tenant == tenant)
        foreign = next(x for x in comp.cluster.workloads if x.tenant != tenant)
        pod = labelled_pod(comp.cluster, w)
        skipped = {
            "no label": _edit(pod, labels={}),
            "no labels at all": {**pod, "metadata": {k: v for k, v in pod["metadata"].items() if k != "labels"}},
            "an empty class": _edit(pod, labels={CLASS_LABEL: ""}),
            "another tenant's class": _edit(pod, labels={CLASS_LABEL: foreign.name}),
            "an unknown class": _edit(pod, labels={CLASS_LABEL: "no-such-class"}),
            "the class under another key": {
                **pod,
                "metadata": {**pod["metadata"], "labels": {"example.com/workload-class": w.name}},
            },
        }
        skipped["no label"]["metadata"]["labels"].pop(CLASS_LABEL)
        for what, obj in skipped.items():
            assert selects(binding, obj["metadata"]["namespace"]) and matches(policy_, obj, "CREATE")
            assert mutate(policy_, obj) is None, f"{name}, tenant {tenant}: a pod with {what} is mutated"
            assert inject(comp, obj) == (obj, []), what
            answer, messages = judge(comp, obj)
            assert answer == "refused" and "scheduler-name" in failed_rules(messages), (what, messages)
        # A pod labelled with this tenant's class, in another tenant's namespace.
        elsewhere = next(ns for x in comp.cluster.tenants if x.name != tenant for ns in x.namespaces)
        assert elsewhere not in t.namespaces and not selects(binding, elsewhere)
        moved = {**pod, "metadata": {**pod["metadata"], "namespace": elsewhere}}
        assert mutate(policy_, moved) is not None  # the policy alone would inject it: the binding is what stops it
        assert inject(comp, moved) == (moved, [])
        assert judge(comp, moved)[0] == "refused"
        # Updates are not mutated (the policy matches CREATE only).
        assert not matches(policy_, pod, "UPDATE")


# --- workload objects -----------------------------------------------------------------------------------------


def labelled_workload(comp: Compilation, w: Workload) -> dict:
    """The class's emitted template with, in each pod template, the scheduler and the queue annotation removed and
    only the class label added: its pods get both from injection. The object keeps its own queue field or label."""
    obj = copy.deepcopy(dict(workload_templates(comp.artifacts)[w.name]))
    _, annotations = QUEUE_KEYS[comp.cluster.scheduler.backend]
    for t in pod_templates_in(obj["spec"]):
        t["spec"].pop("schedulerName")
        meta = t.setdefault("metadata", {})
        for key in annotations:
            meta["annotations"].pop(key)
        if not meta.get("annotations", True):
            del meta["annotations"]
        meta["labels"] = {**meta.get("labels", {}), CLASS_LABEL: w.name}
    return obj


WITHOUT_INJECTION = {
    "ai-prod": lambda: _version(example_text("ai-prod.yaml"), "1.36", "1.33"),
    "ai-prod-kueue@1.36": lambda: example_text("ai-prod-kueue.yaml"),
    "ai-prod-kai@1.36": lambda: example_text("ai-prod-kai.yaml"),
    "ai-prod-zoned": lambda: _version(_zoned(example_text("ai-prod.yaml")), "1.36", "1.33"),
}
"""Each policy of POLICIES on Kubernetes 1.33: no injection."""


@pytest.mark.parametrize("name", POLICIES)
def test_a_workload_naming_only_its_class_is_admitted_where_classes_are_injected(name: str) -> None:
    comp = policy(name, "deny")
    old = compiled(with_admission(WITHOUT_INJECTION[name](), "deny"))
    assert old.ok and not mutating(old)
    backend = comp.cluster.scheduler.backend
    for w in comp.cluster.workloads:
        obj = labelled_workload(comp, w)
        assert judge(comp, obj) == ("admitted", []), f"{name}: class {w.name}: {judge(comp, obj)}"
        for op in ("CREATE", "UPDATE"):
            assert judge(comp, obj, op)[0] == "admitted"
        # Without injection its pods would get no scheduler (nor, on Volcano, a queue): refused.
        answer, messages = judge(old, obj)
        expected_rules = {"scheduler-name", "queue"} if QUEUE_KEYS[backend][1] else {"scheduler-name"}
        assert answer == "refused" and failed_rules(messages) == expected_rules, (w.name, messages)
        # The pods its controller creates are injected, admitted and land on the class's pools.
        for i, template in enumerate(pod_templates_in(obj["spec"])):
            pod = as_pod(copy.deepcopy(template), f"{w.name}-{i}", w.namespace)
            injected, applied = inject(comp, pod)
            assert applied == [f"policyc-inject-{w.tenant}"]
            assert injected == expected(comp, w, pod)
            assert judge(comp, injected) == ("admitted", []), (w.name, judge(comp, injected))
            assert landed(comp, injected) == reachable(comp, w)


def test_a_workload_with_another_tenants_class_is_refused() -> None:
    """The exemption of the scheduler and queue rules for a workload's pod templates holds for the tenant's own
    classes only: another tenant's class would leave its pods uninjected."""
    comp = policy("ai-prod", "deny")
    obj = labelled_workload(comp, workload(comp, "chat-serving"))
    for t in pod_templates_in(obj["spec"]):
        t["metadata"]["labels"][CLASS_LABEL] = "llm-pretraining"
    answer, messages = judge(comp, obj)
    assert answer == "refused" and failed_rules(messages) == {"scheduler-name", "queue"}, messages


# --- priority classes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", POLICIES)
def test_no_priority_class_is_injected(name: str) -> None:
    comp = policy(name)
    for w in comp.cluster.workloads:
        for what, (pod, _) in variations(comp, w).items():
            result = mutate(mutating(comp)[w.tenant][0], _edit(pod, drop=("priorityClassName",)))
            assert result is not None
            ops, patched = result
            assert not [op for op in ops if op["path"].startswith("/spec/priority")], (w.name, what)
            assert "priorityClassName" not in patched["spec"] and "priority" not in patched["spec"], (w.name, what)


RESTRICTED = "      priorityClasses: [online-inference, low-priority-training]\n"


def test_a_labelled_pod_without_a_class_is_refused_where_the_tenant_needs_one() -> None:
    """By design, injection sets no priority class: the Priority admission plugin runs before the mutating
    policies, and has already given a pod naming no class the globalDefault class (and its priority value), so a
    class injected then would not be resolved. The validating policy checks the class instead.

    In ai-prod with team-b allowed online-inference only (not the globalDefault low-priority-training), a pod
    labelled chat-serving that names no class is refused by rule priority-class, once injected, as it reaches the
    validating policy without a class, or with the globalDefault the Priority plugin gave it; naming its class,
    it is admitted. Where the tenant may use the default class, the same pod is admitted."""
    text = _replace(example_text("ai-prod.yaml"), RESTRICTED, "      priorityClasses: [online-inference]\n")
    comp = compiled(with_admission(text, "deny"))
    assert comp.ok and not contract_of(comp, "team-b").no_class
    w = workload(comp, "chat-serving")
    pod = labelled_pod(comp.cluster, w)
    assert pod["spec"]["priorityClassName"] == "online-inference"
    assert judge(comp, inject(comp, pod)[0]) == ("admitted", [])
    for what, classless in {
        "no class": _edit(pod, drop=("priorityClassName",)),
        "the globalDefault": _edit(pod, spec={"priorityClassName": "low-priority-training"}),
    }.items():
        injected, applied = inject(comp, classless)
        assert applied == ["policyc-inject-team-b"]
        assert injected["spec"].get("priorityClassName") == classless["spec"].get("priorityClassName"), what
        answer, messages = judge(comp, injected)
        assert answer == "refused" and failed_rules(messages) == {"priority-class"}, (what, messages)
        assert landed(comp, injected) == reachable(comp, w)  # placed right: only its class is wrong
    comp = policy("ai-prod", "deny")
    assert contract_of(comp, "team-b").no_class
    injected, _ = inject(
        comp, _edit(labelled_pod(comp.cluster, workload(comp, "chat-serving")), drop=("priorityClassName",))
    )
    assert judge(comp, injected) == ("admitted", [])


# --- generated pods -----------------------------------------------------------------------------------------

MISSING = object()


def _present(d: Mapping[str, Any]) -> dict:
    return {k: v for k, v in d.items() if v is not MISSING}


@st.composite
def generated_pod(draw, comp: Compilation) -> tuple[Workload, dict]:
    """A pod of a tenant naming one of its classes, with or without tolerations, affinity (a pod anti-affinity, a
    node affinity, both, empty), a nodeSelector (the classes' keys and others), scheduler, priority class, labels
    and annotations (queue keys of every backend, naming its queue or another)."""
    w = draw(st.sampled_from(comp.cluster.workloads), label="class")
    tenants = sorted(t.name for t in comp.cluster.tenants)
    optional = st.just(MISSING)
    pool_tolerations = [t for p in comp.cluster.pools for t in _pool_tolerations(comp, p.name)]
    toleration = st.sampled_from([*DEFAULT_TOLERATIONS, OWN_TOLERATION, {"operator": "Exists"}, *pool_tolerations])
    affinity = st.sampled_from(
        [{}, POD_ANTI_AFFINITY, {"nodeAffinity": OWN_NODE_AFFINITY}, {**POD_ANTI_AFFINITY, "nodeAffinity": {}}]
    )
    selector_keys = ["topology.kubernetes.io/zone", "example.com/disk", "kubernetes.io/arch"]
    values = st.sampled_from(["zone-a", "zone-b", "ssd", "amd64", ""])
    queue_keys = sorted({k for ls, ans in QUEUE_KEYS.values() for k in (*ls, *ans)} | {"app", "example.com/a"})
    queue_map = st.dictionaries(st.sampled_from(queue_keys), st.sampled_from([*tenants, "x"]), max_size=3)
    spec = _present(
        {
            "tolerations": draw(st.lists(toleration, max_size=4) | optional, label="tolerations"),
            "affinity": draw(affinity | optional, label="affinity"),
            "nodeSelector": draw(st.dictionaries(st.sampled_from(selector_keys), values, max_size=2) | optional),
            "schedulerName": draw(st.sampled_from([contract.DEFAULT_SCHEDULER, "volcano", "other"]) | optional),
            "priorityClassName": draw(st.sampled_from([c.name for c in comp.cluster.priority_classes]) | optional),
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
        }
    )
    labels = {**draw(queue_map, label="labels"), CLASS_LABEL: w.name}
    meta = _present(
        {
            "name": "gen",
            "namespace": w.namespace,
            "labels": labels,
            "annotations": draw(queue_map | optional, label="annotations"),
        }
    )
    return w, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(spec)}


def _pool_tolerations(comp: Compilation, pool: str) -> list[dict]:
    """Tolerations a pod of the pool's usage could carry: those of the first class that can reach it."""
    for w in comp.cluster.workloads:
        if pool in reachable(comp, w):
            return template_placement(comp, w)["tolerations"][:2]
    return []


@pytest.mark.parametrize("name", POLICIES)
@settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_cel_and_python_agree_on_generated_pods(name: str, data: st.DataObject) -> None:
    comp = policy(name)
    w, pod = data.draw(generated_pod(comp), label="pod")
    result = mutate(mutating(comp)[w.tenant][0], pod)
    assert result is not None
    ops, patched = result
    python = injection.patches(injection_of(comp, w), pod)
    assert ops == python, f"{name}, class {w.name}: CEL {ops}, Python {python}, on {pod}"
    assert patched == injection.apply(pod, python) == expected(comp, w, pod)


def test_generated_pods_reach_every_branch() -> None:
    """The generator is not too tame: on ai-prod-zoned (whose vision-dev has a nodeSelector), every kind of patch
    is drawn, and pods whose own node affinity leaves the affinity alone."""
    comp = policy("ai-prod-zoned")
    seen: set[str] = set()

    @settings(max_examples=150, derandomize=True, database=None, deadline=None)
    @given(drawn=generated_pod(comp))
    def collect(drawn: tuple[Workload, dict]) -> None:
        w, pod = drawn
        paths = {op["path"] for op in injection.patches(injection_of(comp, w), pod)}
        seen.update(paths)
        if not {"/spec/affinity", "/spec/affinity/nodeAffinity"} & paths:
            seen.add("(own node affinity)")

    collect()
    assert seen == {
        "/spec/tolerations",
        "/spec/tolerations/-",
        "/spec/affinity",
        "/spec/affinity/nodeAffinity",
        "(own node affinity)",
        "/spec/nodeSelector",
        "/spec/nodeSelector/topology.kubernetes.io~1zone",
        "/spec/schedulerName",
        "/metadata/annotations",
        "/metadata/annotations/scheduling.volcano.sh~1queue-name",
    }


# --- versions and modes ---------------------------------------------------------------------------------------


def _beta(text: str, on: bool = True) -> str:
    return _replace(text, "\nspec:\n", f"\nspec:\n  admission: {{mutatingAdmissionPolicyBeta: {str(on).lower()}}}\n")


def _kinds(comp: Compilation) -> dict[str, list[tuple[str, str]]]:
    """Tenant file -> the (apiVersion, kind) of its admission objects."""
    return {
        a.path: [(m.obj["apiVersion"], m.obj["kind"]) for m in a.manifests if m.obj["kind"] in ADMISSION_KINDS]
        for a in comp.artifacts
        if a.path.startswith("tenants/")
    }


@pytest.mark.parametrize("example", ["ai-prod.yaml", "minimal.yaml"])
@pytest.mark.parametrize(
    ("version", "beta", "api"),
    [
        ("1.36", False, V1),
        ("1.36", True, V1),
        ("1.35", True, V1BETA1),
        ("1.34", True, V1BETA1),
        ("1.35", False, None),
        ("1.34", False, None),
        ("1.33", False, None),
    ],
)
def test_the_mutating_policy_api_follows_the_kubernetes_version(
    example: str, version: str, beta: bool, api: str | None
) -> None:
    text = example_text(example)
    current = re.search(r'kubernetesVersion: "([\d.]+)"', text)
    assert current
    if current.group(1) != version:
        text = _version(text, current.group(1), version)
    if beta:
        text = _beta(text)
    comp = compiled(text)
    # On 1.36 the beta switch does nothing, and says so (PC493); on 1.34 and 1.35 it chooses v1beta1. Without
    # injection a namespace's default class does nothing either.
    idle = [("PC493", "mutatingAdmissionPolicyBeta")] if beta and api == V1 else []
    if api is None and "namespaceDefault: true" in text:
        idle.append(("PC493", "namespaceDefault"))
    assert comp.ok and [(d.code, d.path[-1]) for d in comp.report.diagnostics] == idle, [
        d.message for d in comp.report.diagnostics
    ]
    kinds = _kinds(comp)
    assert kinds and len(kinds) == len(comp.cluster.tenants)
    for path, objs in kinds.items():
        want = [(V1, VAP), (V1, VAP_BINDING)] + ([(api, MAP), (api, MAP_BINDING)] if api else [])
        assert sorted(objs) == sorted(want), path
    # Without injection the validating policy exempts no class (a workload must name its scheduler and queue).
    for vap, _ in admission(comp).values():
        assert ("workload-class" in str(vap)) == (api is not None)
    if api:  # the v1beta1 policy is the v1 one, but for its apiVersion
        v1 = mutating(compiled(_version(example_text(example), current.group(1), "1.36")))
        for tenant, objs in mutating(comp).items():
            assert [{**o, "apiVersion": V1} for o in objs] == list(v1[tenant])


def test_the_beta_flag_before_1_34_is_pc437() -> None:
    text = _beta(_version(example_text("ai-prod.yaml"), "1.36", "1.33"))
    comp = compiled(text)
    assert not comp.ok
    # Only the error: whether a field has an effect (chat-serving's namespaceDefault, as 1.33 injects nothing) is
    # said once the policy has none.
    assert [(d.code, d.path) for d in comp.report.diagnostics] == [
        ("PC437", ("spec", "admission", "mutatingAdmissionPolicyBeta")),
    ]
    # Stated false, it says nothing.
    assert compiled(_beta(_version(example_text("ai-prod.yaml"), "1.36", "1.33"), on=False)).ok


def test_a_tenant_with_admission_off_gets_neither_policy() -> None:
    comp = compiled(with_admission(example_text("ai-prod.yaml"), None, {"research": "off"}))
    assert comp.ok
    assert not _kinds(comp)["tenants/research.yaml"]
    assert set(mutating(comp)) == {"team-a", "team-b"} == set(admission(comp))
    # Its labelled pod is left as it is.
    pod = labelled_pod(comp.cluster, workload(comp, "vision-dev"))
    assert inject(comp, pod) == (pod, [])
    comp = compiled(with_admission(example_text("ai-prod.yaml"), "off"))
    assert comp.ok and _kinds(comp) and not any(_kinds(comp).values())


# --- a namespace's default class ------------------------------------------------------------------------------


def unlabelled_pod(namespace: str, priority_class: str | None = "online-inference") -> dict:
    spec: dict = {"schedulerName": "default-scheduler", "tolerations": [dict(t) for t in DEFAULT_TOLERATIONS]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    spec["containers"] = [{"name": "main", "image": "registry.example.com/team-b/chat:1.4.2"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": namespace}, "spec": spec}


@pytest.mark.parametrize("mode", [None, "deny"])
def test_a_pod_naming_no_class_gets_its_namespace_default(mode: str | None) -> None:
    """ai-prod makes chat-serving the default class of its namespace ai-team-b: a pod there that names no class is
    injected with its placement, admitted, and lands on its pools; in ai-team-b-canary (no default) it is not."""
    comp = policy("ai-prod", mode)
    chat = workload(comp, "chat-serving")
    assert chat.namespace == "ai-team-b" and chat.namespace_default
    pod = unlabelled_pod("ai-team-b")
    injected, applied = inject(comp, pod)
    assert applied == ["policyc-inject-team-b"]
    assert injected == expected(comp, chat, pod)
    assert judge(comp, injected) == ("admitted", [])
    assert landed(comp, injected) == reachable(comp, chat) == {"l4-serve", "t4-serve"}
    # The emitted CEL and the Python model choose the same class and the same patches.
    ops, _ = mutate(mutating(comp)["team-b"][0], pod)
    chosen = contract.injection_for(contract_of(comp, "team-b"), pod)
    assert chosen is not None and chosen.workload == "chat-serving" and ops == injection.patches(chosen, pod)
    # No default in the canary namespace: nothing is injected, and the pod is refused or warned about.
    canary = unlabelled_pod("ai-team-b-canary")
    assert inject(comp, canary) == (canary, [])
    assert contract.injection_for(contract_of(comp, "team-b"), canary) is None
    answer, messages = judge(comp, canary)
    assert answer == ("refused" if mode == "deny" else "warned") and failed_rules(messages) == {"scheduler-name"}


def test_a_class_label_wins_over_the_namespace_default() -> None:
    comp = policy("ai-prod", "deny")
    canary = workload(comp, "canary-serving")
    pod = unlabelled_pod("ai-team-b")
    pod["metadata"]["labels"] = {CLASS_LABEL: "canary-serving"}
    injected, _ = inject(comp, pod)
    assert injected == expected(comp, canary, pod)
    assert judge(comp, injected) == ("admitted", []) and landed(comp, injected) == reachable(comp, canary)
    # A label naming no class of the tenant is not replaced by the default: the pod is left alone.
    pod["metadata"]["labels"] = {CLASS_LABEL: "no-such-class"}
    assert inject(comp, pod) == (pod, [])


def test_a_workload_in_a_default_namespace_may_leave_out_what_injection_adds() -> None:
    comp = policy("ai-prod", "deny")
    obj = labelled_workload(comp, workload(comp, "chat-serving"))
    for t in pod_templates_in(obj["spec"]):
        del t["metadata"]["labels"][CLASS_LABEL]
    assert judge(comp, obj) == ("admitted", [])
    elsewhere = copy.deepcopy(obj)
    elsewhere["metadata"]["namespace"] = "ai-team-b-canary"
    answer, messages = judge(comp, elsewhere)
    assert answer == "refused" and failed_rules(messages) == {"scheduler-name", "queue"}, messages


def test_two_default_classes_of_one_namespace_is_pc438() -> None:
    text = example_text("ai-prod.yaml").replace(
        "      namespace: ai-team-b-canary\n", "      namespace: ai-team-b\n      namespaceDefault: true\n", 1
    )
    comp = compiled(text)
    assert [(d.code, d.path) for d in comp.report.diagnostics if d.code == "PC438"] == [
        ("PC438", ("spec", "workloads", 4, "namespaceDefault"))
    ]


# --- policyc explain --pod ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "audit", "deny"])
def test_explain_pod_agrees_with_the_cel_evaluation(mode: str | None) -> None:
    """`policyc explain --pod` (the Python model) gives the verdict, the rules and the injected class that the
    emitted policies give when the CEL library evaluates them, on every attack, probe and class pod of the proof."""
    from policyc.commands.explain import explain_manifest
    from policyc.tenancy.proof import adversaries, honest_objects

    comp = policy("ai-prod", mode)
    objects = [unlabelled_pod("ai-team-b"), unlabelled_pod("ai-team-b-canary")]
    for c in contract.contracts(comp.cluster, comp.backend).values():
        objects += [a.pod for a in adversaries(comp.cluster, c)]
        objects += [obj for _, obj in honest_objects(comp.cluster, comp.artifacts, c, comp.backend)]
    objects += [labelled_pod(comp.cluster, w) for w in comp.cluster.workloads]
    # What explain says of an object the policies refuse, warn about or only audit (Audit alone admits).
    words = {"refused": "refused", "warned": "admitted with warnings",
             "admitted": "admitted (the refusals are recorded in the audit log)"}  # fmt: skip
    for obj in objects:
        e = explain_manifest(comp, obj)
        injected, applied = inject(comp, obj) if obj["kind"] == "Pod" else (obj, [])
        answer, messages = judge(comp, injected)
        rules = sorted(failed_rules(messages))
        what = (obj["kind"], obj["metadata"].get("name"), obj["metadata"]["namespace"])
        expected_verdict = words[answer] if rules else "admitted"
        assert (e.verdict, sorted(r["rule"] for r in e.refusals)) == (expected_verdict, rules), what
        assert (e.injected is not None) == bool(applied), what
        if obj["kind"] == "Pod":
            assert {p["pool"] for p in e.placement if p["admitted"]} == landed(comp, injected), what

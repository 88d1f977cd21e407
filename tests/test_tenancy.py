"""The tenants' admission policies, judged as the API server would judge them.

Each tenant's ValidatingAdmissionPolicy and binding are read from the compiled `tenants/<tenant>.yaml` (the
emitted output, not `policyc.tenancy.contract.rules`), and their CEL is evaluated with a CEL library
(common-expression-language) the way the API server does: `object` is the object, `request` carries the operation
and the kind's group and name, `spec.variables` are evaluated in order into `variables`, then each validation.
`verdict` applies the binding's `validationActions` to the failures.

What must hold, for every example policy and every tenant with a contract:

- its own templates and the pods their controllers create are admitted, on CREATE and UPDATE;
- each adversary of the tenancy proof fails the validation of the rule it declares (the validations are emitted in
  the order of `contract.rules`), and the five attacks of the issue (a foreign toleration, a wildcard toleration,
  spec.nodeName, a foreign queue, a forbidden priority class) are refused in deny mode and warned about (naming
  the rule and the tenant) in the default warn mode;
- the CEL and the Python model (`Rule.holds`) agree, rule by rule, on every object tried, generated ones included;
- the policy's runtime CEL cost stays under the API server's limits for the largest benchmark policy.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import cel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

import policyc
from policyc.compiler import Compilation
from policyc.output.formats import render_text
from policyc.proof.placement import workload_templates
from policyc.tenancy import contract
from policyc.tenancy.grant import governed_keys
from policyc.tenancy.proof import PROBE_IMAGE, adversaries, honest_objects
from tests.conftest import POLICIES, REPO, repo_script
from tests.test_properties import PROFILE, compile_text, dump

EXAMPLES = ["ai-prod.yaml", "ai-prod-kueue.yaml", "ai-prod-kai.yaml", "minimal.yaml"]
VAP = "ValidatingAdmissionPolicy"
BINDING = "ValidatingAdmissionPolicyBinding"
NAMESPACE_NAME = "kubernetes.io/metadata.name"
OPERATIONS = ("CREATE", "UPDATE")
PLURALS = {"Pod": "pods", "Job": "jobs", "Deployment": "deployments", "PyTorchJob": "pytorchjobs"}
"""Resource names of the kinds the tests admit (what a request's resource is, written out here, not taken from
policyc)."""
SYSTEM_CLASSES = ("system-cluster-critical", "system-node-critical")


@functools.cache
def compiled(source: str) -> Compilation:
    """An example policy (by file name) or policy text, compiled once."""
    if source in EXAMPLES:
        return policyc.compile(POLICIES / source)
    return policyc.compile(source)


def with_admission(text: str, spec_mode: str | None = None, tenants: Mapping[str, str] = {}) -> str:  # read only
    """Policy text with `spec.admission.mode` and tenants' `admission.mode` set."""
    if spec_mode is not None:
        assert text.count("\nspec:\n") == 1
        text = text.replace("\nspec:\n", f"\nspec:\n  admission: {{mode: {spec_mode}}}\n")
    for tenant, mode in tenants.items():
        anchor = f"\n    - name: {tenant}\n"
        assert text.count(anchor) == 1, tenant
        text = text.replace(anchor, f"{anchor}      admission: {{mode: {mode}}}\n")
    return text


def example_text(name: str) -> str:
    return (POLICIES / name).read_text(encoding="utf-8")


def admission(comp: Compilation) -> dict[str, tuple[dict, dict]]:
    """Tenant -> (its ValidatingAdmissionPolicy, its binding), from the tenant's file `tenants/<tenant>.yaml`."""
    out = {}
    for a in comp.artifacts:
        if a.path.startswith("tenants/"):
            objs = {m.obj["kind"]: m.obj for m in a.manifests if m.obj["kind"] in (VAP, BINDING)}
            if objs:
                assert set(objs) == {VAP, BINDING}, a.path
                assert [m.obj["kind"] for m in a.manifests].count(VAP) == 1, a.path
                out[a.path.removeprefix("tenants/").removesuffix(".yaml")] = (objs[VAP], objs[BINDING])
    return out


# --- the API server, as far as these policies need it -----------------------------------------------------------


@functools.cache
def program(expression: str) -> cel.Program:
    return cel.compile(expression)


def group_version(obj: Mapping[str, Any]) -> tuple[str, str]:
    group, _, version = str(obj["apiVersion"]).rpartition("/")
    return group, version


def request(obj: Mapping[str, Any], operation: str) -> dict:
    """The admission request's fields the policies read; its namespace is the object's (the API server sets one
    from the other)."""
    namespace = (obj.get("metadata") or {}).get("namespace", "")
    return {
        "operation": operation,
        "namespace": namespace,
        "kind": {"group": group_version(obj)[0], "kind": obj["kind"]},
    }


def matches(vap: Mapping[str, Any], obj: Mapping[str, Any], operation: str) -> bool:
    """Whether one of the policy's resourceRules matches the object's group, version, resource and operation."""
    group, version = group_version(obj)
    resource = PLURALS[obj["kind"]]
    return any(
        {group, "*"} & set(r["apiGroups"])
        and {version, "*"} & set(r["apiVersions"])
        and {operation, "*"} & set(r["operations"])
        and {resource, "*"} & set(r["resources"])
        for r in vap["spec"]["matchConstraints"]["resourceRules"]
    )


def selects(binding: Mapping[str, Any], namespace: str) -> bool:
    """Whether the binding's namespaceSelector selects the namespace (whose only label that matters here is the
    `kubernetes.io/metadata.name` the API server sets)."""
    match = binding["spec"]["matchResources"]
    assert set(match) == {"namespaceSelector"}, f"the judge does not know {sorted(match)}"
    selector = match["namespaceSelector"]
    labels = {NAMESPACE_NAME: namespace}
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        value = labels.get(e["key"])
        ok = {
            "In": value is not None and value in e.get("values", []),
            "NotIn": value is None or value not in e.get("values", []),
            "Exists": value is not None,
            "DoesNotExist": value is None,
        }[e["operator"]]
        if not ok:
            return False
    return True


Outcome = bool | str
"""A validation's outcome: its value, or the text of the error it raised."""


def evaluate(vap: Mapping[str, Any], obj: Mapping[str, Any], operation: str) -> list[Outcome]:
    """Each validation of the policy on the object: the variables first, in order, then every expression."""
    context: dict[str, Any] = {"object": obj, "request": request(obj, operation)}
    variables: dict[str, Any] = {}
    for v in vap["spec"].get("variables", []):
        # Left unset when it fails: an expression reading it fails then, as on the API server.
        with contextlib.suppress(KeyError, RuntimeError, ValueError, TypeError):
            variables[v["name"]] = program(v["expression"]).execute({**context, "variables": variables})
    context["variables"] = variables
    out: list[Outcome] = []
    for validation in vap["spec"]["validations"]:
        try:
            value = program(validation["expression"]).execute(context)
        except (KeyError, RuntimeError, ValueError, TypeError) as e:
            out.append(f"error: {type(e).__name__}: {e}")
            continue
        out.append(value if isinstance(value, bool) else f"error: not a bool: {value!r}")
    return out


def verdict(
    vap: Mapping[str, Any], binding: Mapping[str, Any], obj: Mapping[str, Any], operation: str
) -> tuple[str, list[str]]:
    """What the API server answers: "refused", "warned" or "admitted", with the messages of the failed validations
    (as the refusal, as warnings, or as the audit annotations when the binding only audits).

    A validation fails when it is false, or when it errors and the policy's failurePolicy is Fail. A policy that
    does not match the object's resource and operation, or a binding that does not select its namespace, admits
    it with no message."""
    policy_name, binding_name = vap["metadata"]["name"], binding["metadata"]["name"]
    assert binding["spec"]["policyName"] == policy_name
    if not matches(vap, obj, operation) or not selects(binding, obj["metadata"].get("namespace", "")):
        return "admitted", []
    fail_on_error = vap["spec"].get("failurePolicy", "Fail") == "Fail"
    failed = []
    for validation, outcome in zip(vap["spec"]["validations"], evaluate(vap, obj, operation), strict=True):
        if outcome is False or (isinstance(outcome, str) and fail_on_error):
            failed.append(validation.get("message") or f"failed expression: {validation['expression']}")
    actions = binding["spec"]["validationActions"]
    if not failed:
        return "admitted", []
    if "Deny" in actions:
        return "refused", [
            f"ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}' denied request: {m}"
            for m in failed
        ]
    if "Warn" in actions:
        return "warned", [
            f"Validation failed for ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': {m}"
            for m in failed
        ]
    return "admitted", failed if "Audit" in actions else []


def rule_index(c: contract.Contract, name: str) -> int:
    return [r.name for r in contract.rules(c)].index(name)


def agree(c: contract.Contract, vap: Mapping[str, Any], obj: Mapping[str, Any], operation: str) -> None:
    """The CEL of every validation gives the verdict of the same rule in Python."""
    s = contract.subject(c, obj, operation)
    assert s is not None, f"tenant {c.tenant}: the Python model does not match a {obj['kind']}"
    assert matches(vap, obj, operation), f"tenant {c.tenant}: the policy does not match a {obj['kind']}"
    outcomes = evaluate(vap, obj, operation)
    rules = contract.rules(c)
    assert len(outcomes) == len(rules)
    for rule, outcome in zip(rules, outcomes, strict=True):
        python = rule.holds(s)
        assert outcome == python, (
            f"tenant {c.tenant}, rule {rule.name}, {operation}: CEL gives {outcome!r}, Python {python}, on {obj}"
        )


# --- what is emitted ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", EXAMPLES)
def test_each_tenant_has_its_policy_and_binding(policy: str) -> None:
    comp = compiled(policy)
    assert comp.ok
    contracts = contract.contracts(comp.cluster, comp.backend)
    emitted = admission(comp)
    assert set(emitted) == set(contracts) == {t.name for t in comp.cluster.tenants}
    all_namespaces = {ns for t in comp.cluster.tenants for ns in t.namespaces} | {"default", "kube-system"}
    for tenant, (vap, binding) in emitted.items():
        c = contracts[tenant]
        assert vap["apiVersion"] == binding["apiVersion"] == "admissionregistration.k8s.io/v1"
        assert vap["spec"]["failurePolicy"] == "Fail"
        assert binding["spec"]["policyName"] == vap["metadata"]["name"]
        assert binding["spec"]["validationActions"] == ["Warn", "Audit"]  # warn is the default from 1.30
        # Its own namespaces and no other, by the label the API server sets.
        assert binding["spec"]["matchResources"]["namespaceSelector"] == {
            "matchExpressions": [{"key": NAMESPACE_NAME, "operator": "In", "values": list(c.namespaces)}]
        }
        assert {ns for ns in all_namespaces if selects(binding, ns)} == set(c.namespaces)
        # Pods and every workload kind of the backend, on create and update.
        for op in OPERATIONS:
            assert matches(vap, {"apiVersion": "v1", "kind": "Pod"}, op)
            for kind in c.kinds:
                assert matches(vap, {"apiVersion": f"{kind.group}/v1", "kind": kind.kind}, op), kind.kind
        assert not matches(vap, {"apiVersion": "v1", "kind": "Pod"}, "DELETE")


@pytest.mark.parametrize("policy", EXAMPLES)
def test_validations_are_emitted_in_the_order_of_the_rules(policy: str) -> None:
    comp = compiled(policy)
    for tenant, (vap, _) in admission(comp).items():
        names = [r.name for r in contract.rules(contract.contracts(comp.cluster, comp.backend)[tenant])]
        messages = [v["message"] for v in vap["spec"]["validations"]]
        assert len(messages) == len(names)
        for name, message in zip(names, messages, strict=True):
            assert f"(rule {name}" in message and message.startswith(f"tenant {tenant}:"), message
        assert [v["name"] for v in vap["spec"]["variables"]] == ["pods", "governed", "grants"]


# --- honest objects and adversaries -------------------------------------------------------------------------


@pytest.mark.parametrize("policy", EXAMPLES)
def test_honest_objects_pass_every_validation(policy: str) -> None:
    comp = compiled(policy)
    emitted = admission(comp)
    tried = 0
    for tenant, c in contract.contracts(comp.cluster, comp.backend).items():
        vap, binding = emitted[tenant]
        objects = honest_objects(comp.cluster, comp.artifacts, c, comp.backend)
        tried += len(objects)
        for what, obj in objects:
            assert selects(binding, obj["metadata"]["namespace"]), what
            for op in OPERATIONS:
                assert matches(vap, obj, op), what
                outcomes = evaluate(vap, obj, op)
                assert outcomes == [True] * len(outcomes), f"tenant {tenant}: {what} on {op}: {outcomes}"
                assert verdict(vap, binding, obj, op) == ("admitted", [])
    # Every tenant's bare pod, every template and every pod of every template, as written and with each set of
    # tolerations its scheduler may add (Kueue: a flavor's).
    templates = workload_templates(comp.artifacts)
    backend, by_name = comp.backend, {w.name: w for w in comp.cluster.workloads}
    pods = sum(
        len(list(pod_templates_in(t))) * (1 + len(backend.tolerations_added(comp.cluster, by_name[name])))
        for name, t in templates.items()
    )
    assert tried == len(comp.cluster.tenants) + len(templates) + pods
    if policy == "ai-prod-kueue.yaml":
        assert pods > sum(len(list(pod_templates_in(t))) for t in templates.values())


@pytest.mark.parametrize("policy", EXAMPLES)
def test_adversaries_fail_the_validation_of_their_rule(policy: str) -> None:
    comp = compiled(policy)
    emitted = admission(comp)
    for tenant, c in contract.contracts(comp.cluster, comp.backend).items():
        vap, binding = emitted[tenant]
        attacks = adversaries(comp.cluster, c)
        assert {a.rule for a in attacks} == {r.name for r in contract.rules(c)}  # every rule is attacked
        for a in attacks:
            i = rule_index(c, a.rule)
            validation = vap["spec"]["validations"][i]
            assert f"(rule {a.rule}" in validation["message"]
            outcomes = evaluate(vap, a.pod, "CREATE")
            assert outcomes[i] is False, f"tenant {tenant}: a pod with {a.attempt} passes rule {a.rule}: {outcomes}"
            # The default mode is warn: admitted, with a warning naming the rule and the tenant.
            answer, messages = verdict(vap, binding, a.pod, "CREATE")
            assert answer == "warned"
            assert any(f"(rule {a.rule}" in m and f"tenant {tenant}:" in m for m in messages), messages


@pytest.mark.parametrize("policy", EXAMPLES)
def test_cel_and_python_agree_on_honest_objects_and_adversaries(policy: str) -> None:
    comp = compiled(policy)
    emitted = admission(comp)
    for tenant, c in contract.contracts(comp.cluster, comp.backend).items():
        vap, _ = emitted[tenant]
        objects = [obj for _, obj in honest_objects(comp.cluster, comp.artifacts, c, comp.backend)]
        objects += [a.pod for a in adversaries(comp.cluster, c)]
        for obj in objects:
            for op in OPERATIONS:
                agree(c, vap, obj, op)


# --- the attacks of the issue, in deny and warn mode --------------------------------------------------------


def team_b_pod(**spec: Any) -> dict:
    """A pod of team-b in ai-prod that keeps every rule (its serving pools' tolerations, its class, scheduler and
    queue), written out by hand; keyword arguments replace or add spec fields."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "chat",
            "namespace": "ai-team-b",
            "annotations": {"scheduling.volcano.sh/queue-name": "team-b"},
        },
        "spec": {
            "schedulerName": "volcano",
            "priorityClassName": "online-inference",
            "tolerations": [
                {"key": "ai.example.com/node.usage", "operator": "Equal", "value": "inference", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu.product", "operator": "Equal", "value": "NVIDIA-L4", "effect": "NoSchedule"},
            ],
            "containers": [{"name": "chat", "image": PROBE_IMAGE}],
        },
    }
    pod["spec"].update(spec)
    return pod


def _foreign_queue() -> dict:
    pod = team_b_pod()
    pod["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "team-a"}
    return pod


A100_TRAIN = [  # the tolerations of a100-train: a training pool of A100s; team-b serves on L4s and T4s
    {"key": "ai.example.com/node.usage", "operator": "Equal", "value": "training", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu.product", "operator": "Equal", "value": "NVIDIA-A100-SXM4-80GB", "effect": "NoSchedule"},
]
ATTACKS = {
    "foreign toleration": (lambda: team_b_pod(tolerations=A100_TRAIN), "foreign-toleration"),
    "wildcard toleration": (
        lambda: team_b_pod(tolerations=[*team_b_pod()["spec"]["tolerations"], {"operator": "Exists"}]),
        "wildcard-toleration",
    ),
    "nodeName": (lambda: team_b_pod(nodeName="gpu-node-01"), "node-name"),
    "foreign queue": (_foreign_queue, "queue"),
    "forbidden priority class": (lambda: team_b_pod(priorityClassName="production-training"), "priority-class"),
}


@pytest.mark.parametrize("mode", ["deny", "warn", None])
def test_an_honest_pod_of_team_b_is_admitted(mode: str | None) -> None:
    comp = compiled(with_admission(example_text("ai-prod.yaml"), mode))
    assert comp.ok
    vap, binding = admission(comp)["team-b"]
    for op in OPERATIONS:
        assert verdict(vap, binding, team_b_pod(), op) == ("admitted", [])


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize(("mode", "expected"), [("deny", "refused"), ("warn", "warned"), (None, "warned")])
def test_the_attacks_of_the_issue(attack: str, mode: str | None, expected: str) -> None:
    """Deny mode refuses each attack, warn mode (stated, or the default) admits it with a warning; either way the
    message names the rule the attack breaks, and the tenant, and that rule alone fails."""
    comp = compiled(with_admission(example_text("ai-prod.yaml"), mode))
    assert comp.ok
    emitted = admission(comp)
    vap, binding = emitted["team-b"]
    build, rule = ATTACKS[attack]
    pod = build()
    answer, messages = verdict(vap, binding, pod, "CREATE")
    assert answer == expected
    assert len(messages) == 1, messages
    assert f"(rule {rule}" in messages[0] and "tenant team-b:" in messages[0], messages
    # The other tenants' bindings do not select team-b's namespaces.
    for tenant, (other_vap, other_binding) in emitted.items():
        if tenant != "team-b":
            assert verdict(other_vap, other_binding, pod, "CREATE") == ("admitted", [])


def test_audit_mode_admits_an_attack_and_records_it() -> None:
    comp = compiled(with_admission(example_text("ai-prod.yaml"), "audit"))
    vap, binding = admission(comp)["team-b"]
    answer, messages = verdict(vap, binding, ATTACKS["wildcard toleration"][0](), "CREATE")
    assert answer == "admitted"
    assert len(messages) == 1 and "(rule wildcard-toleration" in messages[0]


def test_node_name_is_refused_on_create_only() -> None:
    comp = compiled(with_admission(example_text("ai-prod.yaml"), "deny"))
    vap, binding = admission(comp)["team-b"]
    assert verdict(vap, binding, team_b_pod(nodeName="gpu-node-01"), "CREATE")[0] == "refused"
    # A scheduled pod carries the spec.nodeName its binding set: its later updates (a label, say) must pass.
    assert verdict(vap, binding, team_b_pod(nodeName="gpu-node-01"), "UPDATE") == ("admitted", [])


# --- modes and versions --------------------------------------------------------------------------------------


def test_deny_mode_denies_for_every_tenant() -> None:
    comp = compiled(with_admission(example_text("ai-prod.yaml"), "deny"))
    assert comp.ok
    emitted = admission(comp)
    assert set(emitted) == {"team-a", "team-b", "research"}
    assert all(binding["spec"]["validationActions"] == ["Deny", "Audit"] for _, binding in emitted.values())


def test_a_tenant_mode_overrides_the_policy_mode() -> None:
    comp = compiled(with_admission(example_text("ai-prod.yaml"), "deny", {"team-a": "audit"}))
    assert comp.ok
    actions = {t: binding["spec"]["validationActions"] for t, (_, binding) in admission(comp).items()}
    assert actions == {"team-a": ["Audit"], "team-b": ["Deny", "Audit"], "research": ["Deny", "Audit"]}


def test_mode_off_emits_no_policy_for_the_tenant() -> None:
    comp = compiled(with_admission(example_text("ai-prod.yaml"), None, {"research": "off"}))
    assert comp.ok
    assert set(admission(comp)) == {"team-a", "team-b"}
    assert "research" not in contract.contracts(comp.cluster, comp.backend)


def test_kubernetes_1_29_without_admission_builds_without_policies() -> None:
    comp = compiled(example_text("minimal.yaml").replace('kubernetesVersion: "1.33"', 'kubernetesVersion: "1.29"'))
    assert comp.ok, [d.code for d in comp.report.diagnostics]
    assert not admission(comp)


def test_kubernetes_1_29_with_admission_is_pc436() -> None:
    text = example_text("minimal.yaml").replace('kubernetesVersion: "1.33"', 'kubernetesVersion: "1.29"')
    comp = compiled(with_admission(text, "warn"))
    assert not comp.ok
    assert [(d.code, d.path) for d in comp.report.diagnostics] == [("PC436", ("spec", "admission", "mode"))]
    comp = compiled(with_admission(text, None, {"ml": "deny"}))
    assert [(d.code, d.path) for d in comp.report.diagnostics] == [
        ("PC436", ("spec", "tenants", 0, "admission", "mode"))
    ]
    # Off is what 1.29 can do, said out loud.
    assert compiled(with_admission(text, "off")).ok


# --- generated pods and workloads ---------------------------------------------------------------------------


QUEUE_FIELDS = {
    ("batch.volcano.sh", "Job"): ("queue",),
    ("kubeflow.org", "PyTorchJob"): ("runPolicy", "schedulingPolicy", "queue"),
}
"""Where a workload object names its scheduler queue in its spec (Volcano's Job, Kubeflow's PyTorchJob)."""
MISSING = object()


def pod_templates_in(obj: Any) -> Iterator[dict]:
    """The pod templates of a workload object: every mapping under a `template` key that has a spec."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "template" and isinstance(value, dict) and "spec" in value:
                yield value
            else:
                yield from pod_templates_in(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from pod_templates_in(item)


def _drop_missing(d: Mapping[str, Any]) -> dict:
    return {k: v for k, v in d.items() if v is not MISSING}


PodParts = tuple[dict | None, dict]
"""A pod's metadata (None: none at all) and spec."""


def pod_parts(comp: Compilation, c: contract.Contract, queues: list[str]) -> st.SearchStrategy[PodParts]:
    """(metadata or None, spec) of a pod: tolerations of governed and other keys with every operator, allowed and
    foreign values; nodeName; the policy's and the system's priority classes; schedulers; queue labels and
    annotations naming its queue or another."""
    cluster = comp.cluster
    keys = [*c.governed, "example.com/elsewhere", ""]
    values = sorted(
        {v for g in c.grants for vs in g.values() for v in vs}
        | {p.usage for p in cluster.pools}
        | {p.product for p in cluster.pools}
        | {t.value for p in cluster.pools for t in p.taints}
        | {""}
    )
    optional = st.just(MISSING)
    toleration = st.fixed_dictionaries(
        {
            "key": st.sampled_from(keys) | optional,
            "operator": st.sampled_from(["Equal", "Exists"]) | optional,
            "value": st.sampled_from(values) | optional,
            "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]) | optional,
        }
    ).map(_drop_missing)
    classes = sorted({p.name for p in cluster.priority_classes} | set(SYSTEM_CLASSES) | {""})
    schedulers = sorted({c.scheduler_name, contract.DEFAULT_SCHEDULER, "volcano", "kai-scheduler", "other", ""})
    spec = st.fixed_dictionaries(
        {
            "tolerations": st.lists(toleration, max_size=4) | optional,
            "nodeName": st.sampled_from(["gpu-node-01", ""]) | optional,
            "priorityClassName": st.sampled_from(classes) | optional,
            "schedulerName": st.sampled_from(schedulers) | optional,
            "containers": st.just([{"name": "main", "image": PROBE_IMAGE}]),
        }
    ).map(_drop_missing)
    queue_keys = sorted({*c.object_labels, *c.pod_annotations, "app.kubernetes.io/name"})
    queue_map = st.dictionaries(st.sampled_from(queue_keys), st.sampled_from(queues), max_size=3)
    meta = st.fixed_dictionaries({"labels": queue_map | optional, "annotations": queue_map | optional}).map(
        _drop_missing
    )
    return st.tuples(meta | st.none(), spec)


def generated_object(comp: Compilation, c: contract.Contract) -> st.SearchStrategy[dict]:
    other = next((t.name for t in comp.cluster.tenants if t.name != c.queue), "elsewhere")
    queues = [c.queue, other, ""]
    parts = pod_parts(comp, c, queues)
    by_kind: dict[tuple[str, str], Mapping[str, Any]] = {}
    for _, template in sorted(workload_templates(comp.artifacts).items()):
        by_kind.setdefault((group_version(template)[0], template["kind"]), template)
    kinds = [(k.group, k.kind) for k in c.kinds if (k.group, k.kind) in by_kind]  # kinds with no template: skipped

    def pod(drawn: PodParts) -> dict:
        meta, spec = drawn
        metadata = {**(meta or {}), "name": "gen", "namespace": c.namespaces[0]}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}

    @st.composite
    def workload(draw) -> dict:
        obj = copy.deepcopy(dict(by_kind[draw(st.sampled_from(kinds))]))
        obj["metadata"] = {**obj["metadata"], "namespace": c.namespaces[0]}
        labels = dict(obj["metadata"].get("labels", {}))
        for key in c.object_labels:
            labels.pop(key, None)
            value = draw(st.sampled_from([*queues, MISSING]))
            if value is not MISSING:
                labels[key] = value
        obj["metadata"]["labels"] = labels
        templates = list(pod_templates_in(obj["spec"]))
        assert templates, obj["kind"]
        for template in templates:
            meta, spec = draw(parts)
            template.clear()
            template.update({"spec": spec} if meta is None else {"metadata": meta, "spec": spec})
        path = QUEUE_FIELDS.get((group_version(obj)[0], obj["kind"]))
        if path:
            value = draw(st.sampled_from([*queues, MISSING]))
            cut = draw(st.integers(0, len(path) - 1))  # where a missing queue's path stops
            parent = obj["spec"]
            for i, field in enumerate(path[:-1]):
                if value is MISSING and i == cut:
                    break
                parent = parent.setdefault(field, {})
            parent.pop(path[-1] if value is not MISSING else path[cut], None)
            if value is not MISSING:
                parent[path[-1]] = value
        return obj

    return parts.map(pod) | workload() if kinds else parts.map(pod)


@pytest.mark.parametrize("policy", ["ai-prod.yaml", "ai-prod-kueue.yaml", "ai-prod-kai.yaml"])
@settings(
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_cel_and_python_agree_on_generated_objects(policy: str, data: st.DataObject) -> None:
    comp = compiled(policy)
    contracts = contract.contracts(comp.cluster, comp.backend)
    tenant = data.draw(st.sampled_from(sorted(contracts)), label="tenant")
    c = contracts[tenant]
    obj = data.draw(generated_object(comp, c), label="object")
    operation = data.draw(st.sampled_from(OPERATIONS), label="operation")
    agree(c, admission(comp)[tenant][0], obj, operation)


def test_generated_objects_reach_every_verdict() -> None:
    """The generator is not too tame: on ai-prod's team-b, each rule both holds and fails on some object, pods and
    each workload kind with a template are all drawn."""
    comp = compiled("ai-prod.yaml")
    c = contract.contracts(comp.cluster, comp.backend)["team-b"]
    vap = admission(comp)["team-b"][0]
    seen: set[tuple[int, bool]] = set()
    kinds: set[str] = set()

    @settings(max_examples=300, derandomize=True, database=None, deadline=None)
    @given(obj=generated_object(comp, c))
    def collect(obj: dict) -> None:
        kinds.add(obj["kind"])
        for i, outcome in enumerate(evaluate(vap, obj, "CREATE")):
            assert isinstance(outcome, bool), outcome
            seen.add((i, outcome))

    collect()
    assert kinds == {"Pod", "Deployment", "Job", "PyTorchJob"}
    assert seen == {(i, b) for i in range(len(contract.rules(c))) for b in (True, False)}


# --- CEL cost -----------------------------------------------------------------------------------------------
#
# An upper bound of what the API server charges at runtime for each emitted expression, read from the emitted text
# (a small parser for the CEL subset the policies use) and priced after cel-go's runtime cost tracker: every
# branch evaluated, every iterated list at its worst-case size, and every list or map literal built again on each
# evaluation. The API server compiles with cel.OptOptimize, which builds constant literals once, so it charges
# less than this: the bound errs on the safe side.

PER_CALL_LIMIT = 1_000_000
"""The API server cancels an expression that costs more (apiserver/pkg/apis/cel/config.go, PerCallLimit)."""
RUNTIME_BUDGET = 10_000_000
"""... and a binding's expressions that cost more together (RuntimeCELCostBudget)."""
WORST_TOLERATIONS = 1000
WORST_TEMPLATES = 8
LIST_SIZES = {
    "tolerations": WORST_TOLERATIONS,
    "pods": WORST_TEMPLATES,
    "tasks": WORST_TEMPLATES,
    "pytorchReplicaSpecs": WORST_TEMPLATES,
}
"""Sizes of the lists (and the map of PyTorchJob roles) the expressions iterate: a worst-case pod with 1,000
tolerations, a workload with 8 pod templates. An expression iterating anything else makes the estimator fail."""
MAX_STRING = 316
"""The longest string compared without a literal on one side: a qualified key (253 + '/' + 63), as the API
server has validated the object before validating admission runs."""
MAP_FIELDS = {"labels", "annotations"}
"""Fields that are maps (`key in map` is a hash lookup)."""

_TOKEN = re.compile(r"\s*(?:('(?:[^'\\]|\\.)*')|(\d+)|([A-Za-z_]\w*)|(&&|\|\||==|!=|[()\[\]{}.,:?!+]))")


def _tokens(source: str) -> list[tuple[str, str]]:
    out, pos, source = [], 0, source.rstrip()
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        assert m, f"cannot read {source[pos : pos + 30]!r}"
        string, number, ident, op = m.groups()
        if string is not None:
            out.append(("str", string[1:-1]))
        elif number is not None:
            out.append(("num", number))
        elif ident is not None:
            out.append(("id", ident))
        else:
            out.append(("op", op))
        pos = m.end()
    return out


class _Parser:
    """A parser for the CEL subset the policies use: ?:, ||, &&, ==, !=, in, !, field selection, indexing,
    calls and macros (has, all, map), list and map literals, string, number and boolean literals.

    Nodes are tuples: ("lit", value), ("ident", name), ("select", operand, field), ("index", operand, key),
    ("not", operand), ("op", operator, left, right), ("cond", condition, then, else), ("list", items),
    ("map", [(key, value)]), ("call", name, target or None, args)."""

    LEVELS = (("||",), ("&&",), ("==", "!=", "in"), ("+",))

    def __init__(self, source: str) -> None:
        self.tokens = _tokens(source)
        self.i = 0

    def parse(self) -> tuple:
        node = self.expr()
        assert self.i == len(self.tokens), f"unread: {self.tokens[self.i :]}"
        return node

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self, op: str | None = None) -> tuple[str, str]:
        token = self.peek()
        assert op is None or token == ("op", op), f"expected {op!r}, got {token}"
        self.i += 1
        return token

    def expr(self) -> tuple:
        condition = self.binary(0)
        if self.peek() == ("op", "?"):
            self.take()
            then = self.expr()
            self.take(":")
            return ("cond", condition, then, self.expr())
        return condition

    def binary(self, level: int) -> tuple:
        if level == len(self.LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek()[0] in ("op", "id") and self.peek()[1] in self.LEVELS[level]:
            node = ("op", self.take()[1], node, self.binary(level + 1))
        return node

    def unary(self) -> tuple:
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.unary())
        return self.member()

    def member(self) -> tuple:
        node = self.primary()
        while True:
            if self.peek() == ("op", "."):
                self.take()
                name = self.take()[1]
                if self.peek() == ("op", "("):
                    self.take()
                    node = ("call", name, node, self.sequence(")"))
                else:
                    node = ("select", node, name)
            elif self.peek() == ("op", "["):
                self.take()
                key = self.expr()
                self.take("]")
                node = ("index", node, key)
            else:
                return node

    def sequence(self, close: str) -> list[tuple]:
        items = []
        while self.peek() != ("op", close):
            items.append(self.expr())
            if self.peek() == ("op", ","):
                self.take()
        self.take(close)
        return items

    def primary(self) -> tuple:
        kind, value = self.take()
        if kind == "str":
            return ("lit", value)
        if kind == "num":
            return ("lit", int(value))
        if kind == "id":
            if value in ("true", "false", "null"):
                return ("lit", value)
            if self.peek() == ("op", "("):
                self.take()
                return ("call", value, None, self.sequence(")"))
            return ("ident", value)
        if value == "(":
            node = self.expr()
            self.take(")")
            return node
        if value == "[":
            return ("list", self.sequence("]"))
        assert value == "{", f"unexpected {value!r}"
        entries = []
        while self.peek() != ("op", "}"):
            key = self.expr()
            self.take(":")
            entries.append((key, self.expr()))
            if self.peek() == ("op", ","):
                self.take()
        self.take("}")
        return ("map", entries)


# The costs cel-go's runtime cost tracker charges (interpreter/runtimecost.go, common/cost.go), or more:
SELECT = 1  # an identifier, a field selection, a presence test (has), an index
CALL = 1  # a function or operator call of constant cost (!, ...); && || ?: are not calls and cost nothing
LIST_CREATE = 10  # a list literal
MAP_CREATE = 30  # a map literal
ALL_STEP = 3  # per element of x.all(): the loop condition @not_strictly_false(__result__) and __result__ && body
EXISTS_STEP = 4  # per element of x.exists(): the loop condition @not_strictly_false(!__result__) and __result__ || body
MAP_STEP = 13  # per element of x.map(): __result__ + [body], a list literal and an addition


def _string_size(node: tuple) -> int:
    return len(node[1]) if node[0] == "lit" and isinstance(node[1], str) else MAX_STRING


def _field(node: tuple) -> str | None:
    return node[2] if node[0] == "select" else node[1] if node[0] == "ident" else None


def _variable(node: tuple, env: Mapping[Any, tuple]) -> tuple:
    """`node`, or the literal a variable it reads (`variables.<name>`, or a macro's variable over a literal list)
    holds, for sizing (a computed variable, such as `pods`, is sized by its name)."""
    if node[0] == "select" and node[1] == ("ident", "variables") and env.get(node[2], ("",))[0] in ("list", "map"):
        return env[node[2]]
    if node[0] == "ident" and ("element", node[1]) in env:
        return env["element", node[1]]
    return node


def _iterated(node: tuple, env: Mapping[str, tuple] = {}) -> int:  # read only
    """The largest number of elements `node` (a list, or a map iterated by key) can have."""
    node = _variable(node, env)
    if node[0] == "list":
        return len(node[1])
    field = _field(node)
    assert field in LIST_SIZES, f"no worst-case size for {node}"
    return LIST_SIZES[field]


def _membership(node: tuple, env: Mapping[str, tuple]) -> int:
    """The cost of `x in node`: the list's size, 1 for a map."""
    node = _variable(node, env)
    if node[0] == "list":
        return len(node[1])
    if node[0] == "map" or _field(node) in MAP_FIELDS:
        return CALL
    if node[0] == "index" and _variable(node[1], env)[0] == "map":  # {key: [values]}[x]: the longest list of values
        return max(
            (len(v[1]) if v[0] == "list" else _iterated(v, env) for _, v in _variable(node[1], env)[1]), default=0
        )
    return _iterated(node, env)


def cel_cost(node: tuple, env: Mapping[str, tuple] = {}) -> int:  # read only
    """An upper bound of the runtime cost of an expression (parsed by `_Parser`), every branch evaluated, every
    list of its largest size; `env` holds the parsed variables (evaluated once, charged apart) for sizing."""
    cost = functools.partial(cel_cost, env=env)
    kind = node[0]
    if kind == "lit":
        return 0
    if kind == "ident":
        return SELECT
    if kind == "select":
        return cost(node[1]) + SELECT
    if kind == "index":
        return cost(node[1]) + cost(node[2]) + SELECT
    if kind == "not":
        return cost(node[1]) + CALL
    if kind == "cond":
        return sum(cost(n) for n in node[1:])
    if kind == "list":
        return LIST_CREATE + sum(cost(n) for n in node[1])
    if kind == "map":
        return MAP_CREATE + sum(cost(k) + cost(v) for k, v in node[1])
    if kind == "op":
        op, left, right = node[1:]
        both = cost(left) + cost(right)
        if op in ("&&", "||"):
            return both
        if op == "+":  # list concatenation: a new list of both sides' elements
            return both + CALL + LIST_CREATE
        if op in ("==", "!="):  # O(min(m, n)) for strings: 0.1 per character (StringTraversalCostFactor)
            return both + CALL + math.ceil(0.1 * min(_string_size(left), _string_size(right)))
        return both + _membership(right, env)  # in
    assert kind == "call", node
    name, target, args = node[1:]
    if name == "has" and target is None:
        return cost(args[0])
    if name in ("all", "exists", "map") and target is not None and len(args) == 2:
        step = {"all": ALL_STEP, "exists": EXISTS_STEP, "map": MAP_STEP}[name]
        items = _variable(target, env)
        if items[0] == "list" and items[1]:  # the variable stands for the literal's costliest element
            env = {**env, ("element", args[0][1]): max(items[1], key=lambda item: cel_cost(item, env))}
        body = cel_cost(args[1], env)
        return cost(target) + _iterated(target, env) * (body + step) + LIST_CREATE + SELECT
    raise AssertionError(f"no cost for {name}()")


def estimate(expression: str, env: Mapping[str, tuple] = {}) -> int:  # read only
    return cel_cost(_Parser(expression).parse(), env)


def policy_costs(vap: Mapping[str, Any]) -> tuple[int, list[int]]:
    """(the variables' cost, each validation's cost): a variable is evaluated once per request (cel-go caches it)."""
    env = {v["name"]: _Parser(v["expression"]).parse() for v in vap["spec"].get("variables", [])}
    variables = sum(cel_cost(node, env) for node in env.values())
    return variables, [estimate(v["expression"], env) for v in vap["spec"]["validations"]]


def test_cost_estimator_counts_what_it_should() -> None:
    assert estimate("[1, 2, 3]") == LIST_CREATE
    assert estimate("'a' in ['a', 'b', 'c']") == LIST_CREATE + 3
    assert estimate("'a' in object.metadata.labels") == 3 * SELECT + CALL
    assert estimate("request.operation != 'CREATE'") == 2 * SELECT + CALL + 1
    two = estimate("variables.pods.all(p, p.spec.priorityClassName in ['a', 'b'])")
    four = estimate("variables.pods.all(p, p.spec.priorityClassName in ['a', 'b', 'c', 'd'])")
    assert four - two == WORST_TEMPLATES * 2
    one = estimate("variables.pods.all(p, p.spec.tolerations.all(t, t.key in ['a']))")
    assert estimate("variables.pods.all(p, p.spec.tolerations.all(t, t.key in ['a', 'b']))") - one == (
        WORST_TEMPLATES * WORST_TOLERATIONS
    )
    # exists() over a literal list of maps: the list (10), each map (30) and its list of values (10); per element the
    # body ('a' in g: 1 select, 1 lookup) and the step (4); the result (10 + 1).
    assert estimate("[{'a': ['x']}].exists(g, 'a' in g)") == 10 + (30 + 10) + (2 + 4) + 11
    assert estimate("[{'a': ['x']}, {'a': ['x']}].exists(g, 'a' in g)") == 10 + 2 * (30 + 10) + 2 * (2 + 4) + 11
    with pytest.raises(AssertionError, match="no worst-case size"):
        estimate("object.spec.volumes.all(v, true)")


def bench_policy(**sizes: int) -> str:
    return repo_script("bench/generate.py").policy(**sizes)


@pytest.mark.parametrize("policy", [*EXAMPLES, "bench"])
def test_cel_cost_stays_under_the_api_server_limits(policy: str) -> None:
    if policy == "bench":
        comp = compiled(bench_policy(nodes=5000, pools=100, tenants=500, workloads=200))
    else:
        comp = compiled(policy)
    assert comp.ok
    contracts = contract.contracts(comp.cluster, comp.backend)
    emitted = admission(comp)
    assert len(emitted) == len(comp.cluster.tenants)
    for tenant, (vap, _) in emitted.items():
        c = contracts[tenant]
        variables, validations = policy_costs(vap)
        # Each validation, charged the variable as if it were evaluated there, and the binding's total.
        assert max(validations) + variables <= PER_CALL_LIMIT, (tenant, variables, validations)
        assert variables + sum(validations) <= RUNTIME_BUDGET, (tenant, variables, validations)
        # The estimate grows with the contract: every toleration of every template is looked up in the governed
        # keys (a map, built once) and its value in the key's allowed values, every template's class in the allowed
        # ones.
        cost = dict(zip([r.name for r in contract.rules(c)], validations, strict=True))
        tolerations = WORST_TEMPLATES * WORST_TOLERATIONS
        values = [len(v) for g in c.grants for v in g.values()]
        assert variables > len(c.governed) + sum(values)
        assert cost["foreign-toleration"] > tolerations * len(c.grants) * max(values, default=1)
        assert cost["exists-toleration"] > tolerations
        assert cost["priority-class"] > WORST_TEMPLATES * len(c.priority_classes)


# --- tolerations the policy writes: never an internal error, never a widening ----------------------------------


def _policy_dict(name: str) -> dict:
    return YAML(typ="safe").load((REPO / "policies" / name).read_text(encoding="utf-8"))


def written_tolerations() -> st.SearchStrategy[list[dict]]:
    """Tolerations a user might write in a workload class: of governed keys (usage, products, Slurm-only, the control
    plane's two), of other keys and of none (a wildcard), with either operator, values of the policy's taints and
    others, any effect or none."""
    cluster = compiled("ai-prod.yaml").cluster
    keys = st.sampled_from([*governed_keys(cluster), "example.com/elsewhere", "node.kubernetes.io/not-ready"])
    values = st.sampled_from(sorted({t.value for p in cluster.pools for t in p.taints} | {"other", ""}))
    effect = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])
    equal = st.fixed_dictionaries(
        {"key": keys, "value": values}, optional={"operator": st.just("Equal"), "effect": effect}
    )
    exists = st.fixed_dictionaries({"operator": st.just("Exists")}, optional={"key": keys, "effect": effect})
    return st.lists(st.one_of(equal, exists), max_size=3)


@settings(PROFILE)
@given(st.data())
def test_written_tolerations_never_end_in_an_internal_error_or_a_wider_contract(data: st.DataObject) -> None:
    """Whatever tolerations the classes carry, the build ends in user diagnostics (never PC9xx, never a raise), and a
    policy that builds grants each tenant exactly what its classes' pools need: the tolerations it wrote changed no
    contract beyond the pools' own taints its classes may use."""
    policy = _policy_dict("ai-prod.yaml")
    workloads = policy["spec"]["workloads"]
    for i in data.draw(st.sets(st.integers(0, len(workloads) - 1), min_size=1, max_size=2)):
        workloads[i]["tolerations"] = data.draw(written_tolerations())
    result = compile_text(dump(policy))
    assert not [d for d in result.report.diagnostics if d.code.startswith("PC9")], render_text(result.report)
    if result.ok:
        reference = compiled("ai-prod.yaml")
        ours, theirs = (
            contract.contracts(result.cluster, result.backend),
            contract.contracts(reference.cluster, reference.backend),
        )
        assert ours == theirs

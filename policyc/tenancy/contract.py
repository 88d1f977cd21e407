"""Each tenant's placement contract as admission rules: what its pods and workloads may carry.

A rule is written twice, side by side: as CEL, which `policyc.tenancy.policies` compiles into the tenant's
ValidatingAdmissionPolicy, and as Python (`holds`), which the tenancy proof and `policyc explain --pod` evaluate.
The tests evaluate the emitted CEL with a CEL library and hold both to the same verdict on every pod they try.

The CEL keeps to what both the API server and that library accept: `has()` chains instead of `.?` optionals,
lists and maps written out instead of `split`, no Kubernetes-only functions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policyc.backends.interface import SchedulerBackend
from policyc.backends.workloads import Kind
from policyc.ir import Cluster, Tenant, once_per_build
from policyc.k8s.cel import literal
from policyc.tenancy.grant import governed_keys, grant
from policyc.tenancy.injection import Injection, api_version, apply, injections, namespace_defaults, patches

DEFAULT_SCHEDULER = "default-scheduler"
"""The API server's default for a pod's `schedulerName`."""


@dataclass(frozen=True, slots=True)
class Contract:
    """What a tenant's pods and workloads may carry."""

    tenant: str
    mode: str
    namespaces: tuple[str, ...]
    governed: tuple[str, ...]
    """The toleration keys of every taint that keeps pods off nodes (`grant.governed_keys`)."""
    grants: tuple[Mapping[str, tuple[str, ...]], ...]
    """What each of its workload classes is granted (`grant.grant`; classes with the same grant once): governed
    key -> the values a pod may tolerate. A pod's governed tolerations must all be within one grant, with operator
    Equal. One empty grant for a tenant without classes: its pods may tolerate no governed key."""
    priority_classes: tuple[str, ...]
    """Classes its pods may name."""
    no_class: bool
    """Whether its pods may name no class."""
    scheduler_name: str
    queue: str
    object_labels: tuple[str, ...]
    """Label keys that name the queue on a workload object (required there, and equal to `queue` wherever set)."""
    pod_annotations: tuple[str, ...]
    """Annotation keys that name the queue on pods (required on workload templates, equal to `queue` where set)."""
    spec_queue: bool
    """Whether a workload must name its queue in its own queue field (`Kind.queue_path`), where its kind has one."""
    kinds: tuple[Kind, ...]
    """The workload kinds matched besides pods."""
    class_label: str
    """The pod label that names a workload class."""
    injected: tuple[str, ...]
    """The classes the tenant's mutating policy injects (none without MutatingAdmissionPolicy)."""
    defaults: Mapping[str, str]
    """Namespace -> the class injected into its pods that name none (none without MutatingAdmissionPolicy)."""
    injections: tuple[Injection, ...] = field(compare=False, repr=False)
    """What the mutating policy injects into a pod of each of those classes: their placement, which is not what the
    contract admits (two contracts admitting the same are equal)."""


@once_per_build
def contracts(cluster: Cluster, backend: SchedulerBackend) -> dict[str, Contract]:
    """Tenant -> its contract, for every tenant whose admission mode is not off; `backend` (the cluster's scheduler
    backend) says how its pods and workloads join its queue and which workload kinds it runs."""
    grants: dict[str, list[dict[str, tuple[str, ...]]]] = {}
    for w in cluster.workloads:
        grants.setdefault(w.tenant, []).append(grant(cluster, w))
    return {t.name: _contract(cluster, backend, t, _widest(grants.get(t.name, [{}]))) for t in cluster.tenants
            if t.admission != "off"}  # fmt: skip


def _widest(grants: list[dict[str, tuple[str, ...]]]) -> tuple[dict[str, tuple[str, ...]], ...]:
    """The grants that no other one contains (a pod within a contained grant is within its container), in a stable
    order."""
    unique = [dict(g) for g in sorted({tuple(g.items()) for g in grants})]
    return tuple(g for g in unique if not any(h != g and _contains(h, g) for h in unique))


def _contains(h: Mapping[str, Sequence[str]], g: Mapping[str, Sequence[str]]) -> bool:
    return all(set(values) <= set(h.get(key, ())) for key, values in g.items())


def _contract(
    cluster: Cluster, backend: SchedulerBackend, tenant: Tenant, grants: tuple[dict[str, tuple[str, ...]], ...]
) -> Contract:
    binding = backend.queue_binding(cluster, tenant.name)
    mutations = tuple(injections(cluster, tenant.name, binding)) if api_version(cluster) else ()
    classes = [c.name for c in cluster.priority_classes]
    allowed = list(tenant.allowed_priority_classes) if tenant.allowed_priority_classes is not None else classes
    default = next((c.name for c in cluster.priority_classes if c.global_default), None)
    return Contract(
        tenant=tenant.name,
        mode=tenant.admission,
        namespaces=tenant.namespaces,
        governed=governed_keys(cluster),
        grants=grants,
        priority_classes=tuple(sorted(allowed)),
        # A pod naming no class gets the globalDefault one (the Priority plugin runs before validation); a template
        # naming none must be allowed that one.
        no_class=tenant.allowed_priority_classes is None or (default is not None and default in allowed),
        scheduler_name=binding.scheduler_name or DEFAULT_SCHEDULER,
        queue=binding.queue,
        object_labels=tuple(sorted(binding.object_labels)),
        pod_annotations=tuple(sorted(binding.pod_annotations)),
        spec_queue=binding.spec_queue,
        kinds=tuple(backend.KINDS.values()),
        class_label=cluster.keys.workload_class,
        injected=tuple(i.workload for i in mutations),
        injections=mutations,
        defaults=namespace_defaults(cluster, tenant.name) if api_version(cluster) else {},
    )


# --- the rules ----------------------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)  # not frozen: the tenancy proof makes ten thousand (frozen: 5x the cost)
class Subject:
    """An object under admission, as the rules read it."""

    obj: Mapping[str, Any]
    operation: str
    pods: list[Mapping[str, Any]]
    """The pod (for a Pod) or the object's pod templates, each with its metadata and spec."""
    workload: bool
    """A workload object (not a pod)."""


@dataclass(frozen=True, slots=True, eq=False)
class Rule:
    name: str
    message: str
    cel: str
    """True when the object keeps the rule; reads `object`, `request` and the `variables`."""
    holds: Callable[[Subject], bool]
    """The same, in Python."""


def _tolerations(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(pod.get("spec", {}).get("tolerations") or [])


def _pod_tolerations_all(body: str) -> str:
    return f"variables.pods.all(p, !has(p.spec.tolerations) || p.spec.tolerations.all(t, {body}))"


def _meta(m: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    return m.get("metadata", {}).get(field) or {}


@once_per_build
def tenant_rules(cluster: Cluster, backend: SchedulerBackend) -> dict[str, list[Rule]]:
    """Tenant -> its rules, for the tenants `contracts` has (the policies and the proof read them)."""
    return {tenant: rules(c) for tenant, c in contracts(cluster, backend).items()}


def rules(c: Contract) -> list[Rule]:
    """The tenant's rules, in the order the policy lists them."""
    return [*_toleration_rules(c), *_scheduling_rules(c)]


def _toleration_rules(c: Contract) -> list[Rule]:
    """What the tenant's pods may tolerate: only the pools of its workload classes, by key and value."""
    t = c.tenant
    return [
        Rule(
            "wildcard-toleration",
            f"tenant {t}: a toleration without a key tolerates every taint, other pools' and the control plane's "
            "(rule wildcard-toleration)",
            _pod_tolerations_all("has(t.key) && t.key != ''"),
            lambda s: all(tol.get("key") for p in s.pods for tol in _tolerations(p)),
        ),
        Rule(
            "exists-toleration",
            f"tenant {t}: operator Exists on a pool taint's key tolerates every pool with that key; tolerate the "
            f"pools' values with operator Equal (rule exists-toleration)",
            _pod_tolerations_all(
                "!has(t.key) || !(t.key in variables.governed) || !has(t.operator) || t.operator != 'Exists'"
            ),
            lambda s: all(
                tol.get("key") not in c.governed or tol.get("operator", "Equal") != "Exists"
                for p in s.pods
                for tol in _tolerations(p)
            ),
        ),
        Rule(
            "foreign-toleration",
            f"tenant {t}: a pod may tolerate only the pools of one of the tenant's workload classes (rule "
            f"foreign-toleration; allowed: {_allowed(c)})",
            "variables.pods.all(p, !has(p.spec.tolerations) || variables.grants.exists(g, p.spec.tolerations.all(t, "
            "!has(t.key) || !(t.key in variables.governed) || (has(t.operator) && t.operator == 'Exists') "
            "|| (t.key in g && (has(t.value) ? t.value : '') in g[t.key]))))",
            lambda s: all(
                any(all(_granted(tol, c.governed, g) for tol in _tolerations(p)) for g in c.grants) for p in s.pods
            ),
        ),
    ]


def _scheduling_rules(c: Contract) -> list[Rule]:
    """How the tenant's pods reach the scheduler: through it (no nodeName), at a class they may use, with the
    scheduler and queue of the policy's backend."""
    t = c.tenant
    return [
        Rule(
            "node-name",
            f"tenant {t}: spec.nodeName skips the scheduler, and with it the NoSchedule taints it checks "
            "(rule node-name)",
            "request.operation != 'CREATE' || variables.pods.all(p, !has(p.spec.nodeName) || p.spec.nodeName == '')",
            lambda s: s.operation != "CREATE" or not any(p.get("spec", {}).get("nodeName") for p in s.pods),
        ),
        Rule(
            "priority-class",
            f"tenant {t}: priority class not allowed (rule priority-class; allowed: {_classes(c)})",
            "variables.pods.all(p, has(p.spec.priorityClassName) && p.spec.priorityClassName != '' "
            f"? p.spec.priorityClassName in {literal(list(c.priority_classes))} : {_cel_bool(c.no_class)})",
            lambda s: all(
                p["spec"]["priorityClassName"] in c.priority_classes
                if p.get("spec", {}).get("priorityClassName")
                else c.no_class
                for p in s.pods
            ),
        ),
        Rule(
            "scheduler-name",
            f"tenant {t}: pods must use scheduler {c.scheduler_name} (rule scheduler-name)",
            f"variables.pods.all(p, {_injected_cel(c, ' || ')}(has(p.spec.schedulerName) ? p.spec.schedulerName : "
            f"{literal(DEFAULT_SCHEDULER)}) == {literal(c.scheduler_name)})",
            lambda s: all(
                _injected(c, s, p) or p.get("spec", {}).get("schedulerName", DEFAULT_SCHEDULER) == c.scheduler_name
                for p in s.pods
            ),
        ),
        Rule(
            "queue",
            f"tenant {t}: the queue must be {c.queue} (rule queue)",
            _queue_cel(c),
            lambda s: _queue_holds(c, s),
        ),
    ]


def _classes(c: Contract) -> str:
    allowed = [*c.priority_classes, *(["no class"] if c.no_class else [])]
    return ", ".join(allowed[:-1]) + " or " + allowed[-1] if len(allowed) > 1 else allowed[0] if allowed else "none"


def _cel_bool(value: bool) -> str:
    return "true" if value else "false"


def _granted(tol: Mapping[str, Any], governed: Sequence[str], g: Mapping[str, Sequence[str]]) -> bool:
    """Whether a toleration is within the grant `g` (Exists is the other rule's)."""
    key = tol.get("key")
    return key not in governed or tol.get("operator") == "Exists" or tol.get("value", "") in g.get(key, ())


def _allowed(c: Contract) -> str:
    grants = [" and ".join(f"{k} in [{', '.join(v)}]" for k, v in g.items()) for g in c.grants]
    return " or ".join(f"({g})" if len(grants) > 1 else g for g in grants if g) or "no pool taint"


def _injected_cel(c: Contract, joiner: str) -> str:
    """CEL true for a workload's pod template that names a class the tenant's mutating policy injects (its pods get
    the scheduler and queue annotations at creation), followed by `joiner`; nothing when there is no injection."""
    if not c.injected:
        return ""
    label = literal(c.class_label)
    names = f"has(p.metadata) && has(p.metadata.labels) && {label} in p.metadata.labels"
    named = f"{names} ? p.metadata.labels[{label}] in {literal(list(c.injected))} : "
    default = f"request.namespace in {literal(list(c.defaults))}" if c.defaults else "false"
    return f"(request.kind.kind != 'Pod' && ({named}{default})){joiner}"


def _injected(c: Contract, s: Subject, pod: Mapping[str, Any]) -> bool:
    labels = _meta(pod, "labels")
    if c.class_label in labels:
        return s.workload and labels[c.class_label] in c.injected
    return s.workload and (s.obj.get("metadata") or {}).get("namespace") in c.defaults


def _queue_cel(c: Contract) -> str:
    q = literal(c.queue)
    parts = []
    for key in c.object_labels:
        k = literal(key)
        # On a workload object: required. On a pod (its controller's, or a bare one): equal where set.
        parts.append(
            f"has(object.metadata.labels) && {k} in object.metadata.labels ? object.metadata.labels[{k}] == {q} "
            ": request.kind.kind == 'Pod' && request.kind.group == ''"
        )
    for key in c.pod_annotations:
        k = literal(key)
        parts.append(
            "variables.pods.all(p, has(p.metadata) && has(p.metadata.annotations) && "
            f"{k} in p.metadata.annotations ? p.metadata.annotations[{k}] == {q} "
            f": {_injected_cel(c, ' || ')}request.kind.kind == 'Pod' && request.kind.group == '')"
        )
    for kind in c.kinds:
        if kind.queue_path:
            fields = ".".join(kind.queue_path)
            present = " && ".join(f"has(object.spec.{'.'.join(kind.queue_path[: i + 1])})"
                                  for i in range(len(kind.queue_path)))  # fmt: skip
            this_kind = f"request.kind.group == {literal(kind.group)} && request.kind.kind == {literal(kind.kind)}"
            parts.append(f"!({this_kind}) || ({present} ? object.spec.{fields} == {q} : {_cel_bool(not c.spec_queue)})")
    return " && ".join(f"({p})" for p in parts) if parts else "true"


def _queue_holds(c: Contract, s: Subject) -> bool:
    for key in c.object_labels:
        labels = _meta(s.obj, "labels")
        if not (labels[key] == c.queue if key in labels else not s.workload):
            return False
    for key in c.pod_annotations:
        for p in s.pods:
            annotations = _meta(p, "annotations")
            if not (annotations[key] == c.queue if key in annotations else not s.workload or _injected(c, s, p)):
                return False
    kind = _kind(c, s.obj)
    if kind is not None and kind.queue_path:
        value: Any = s.obj.get("spec", {})
        for field in kind.queue_path:
            value = value.get(field, _ABSENT) if isinstance(value, Mapping) else _ABSENT
        if value != c.queue if value is not _ABSENT else c.spec_queue:
            return False
    return True


_ABSENT = object()


def _kind(c: Contract, obj: Mapping[str, Any]) -> Kind | None:
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return next((k for k in c.kinds if (k.group, k.kind) == (group, obj.get("kind"))), None)


def variables(c: Contract) -> list[dict[str, str]]:
    """The policy's variables, built once per request: `pods` (the pod, or the object's pod templates, each with
    metadata and spec), `governed` (the governed toleration keys, as a map for constant-time lookups) and `grants`
    (what each workload class is granted: governed key -> the values it may tolerate)."""
    return [
        {"name": "pods", "expression": pods_cel(c)},
        {"name": "governed", "expression": _keys_literal(c.governed)},
        {"name": "grants", "expression": _grants_literal(tuple(tuple(g.items()) for g in c.grants))},
    ]


# Tenants share these literals (the governed keys, often their grants): each is written once.
@functools.lru_cache(maxsize=64)
def _keys_literal(keys: tuple[str, ...]) -> str:
    return literal(dict.fromkeys(keys, True))


@functools.lru_cache(maxsize=4096)
def _grants_literal(grants: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]) -> str:
    return literal([dict(g) for g in grants])


def pods_cel(c: Contract) -> str:
    """CEL for `variables.pods`: the pod, or the object's pod templates (each with metadata and spec)."""
    return _pods_cel(c.kinds)


@functools.lru_cache(maxsize=64)
def _pods_cel(kinds: tuple[Kind, ...]) -> str:
    branches = ["request.kind.group == '' && request.kind.kind == 'Pod' ? [object]"]
    for kind in kinds:
        this_kind = f"request.kind.group == {literal(kind.group)} && request.kind.kind == {literal(kind.kind)}"
        branches.append(f"{this_kind} ? {kind.cel_templates}")
    return " : ".join(branches) + " : []"


def subject(c: Contract, obj: Mapping[str, Any], operation: str = "CREATE") -> Subject | None:
    """The object as the rules read it; None for a kind the tenant's policy does not match."""
    if obj.get("apiVersion") == "v1" and obj.get("kind") == "Pod":
        return Subject(obj, operation, [obj], workload=False)
    kind = _kind(c, obj)
    if kind is None:
        return None
    return Subject(obj, operation, [template for _, _, template in kind.pods(obj.get("spec", {}))], workload=True)


@dataclass(frozen=True, slots=True, eq=False)
class Refusal:
    rule: str
    message: str


def refusals(
    c: Contract, obj: Mapping[str, Any], operation: str = "CREATE", of: Sequence[Rule] | None = None
) -> list[Refusal]:
    """The rules (`of` them, default the contract's) that `obj` breaks, in order; none for a kind the policy does
    not match."""
    s = subject(c, obj, operation)
    if s is None:
        return []
    return [Refusal(r.name, r.message) for r in (rules(c) if of is None else of) if not r.holds(s)]


def injection_for(c: Contract, pod: Mapping[str, Any]) -> Injection | None:
    """The class a pod of the tenant gets: the one its workload-class label names, else its namespace's default
    (None: neither is a class the tenant's mutating policy injects)."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    name = labels[c.class_label] if c.class_label in labels else c.defaults.get(meta.get("namespace", ""))
    return next((i for i in c.injections if i.workload == name), None)


@dataclass(frozen=True, slots=True, eq=False)
class Admission:
    """What the tenant's admission policies do with an object on creation."""

    obj: Mapping[str, Any]
    """The object as the validating policy sees it: with a class's placement injected into a pod."""
    injected: str | None
    """The class injected (None: none)."""
    refusals: list[Refusal]
    """The rules it breaks, in order."""


def admit(c: Contract, obj: Mapping[str, Any], of: Sequence[Rule] | None = None) -> Admission:
    """`obj` created in the tenant's namespace: the mutating policy, which matches pods, injects the class it names
    (or its namespace's default), then the rules (`of` them, default the contract's) judge it."""
    injected = None
    if obj.get("apiVersion") == "v1" and obj.get("kind") == "Pod":
        chosen = injection_for(c, obj)
        if chosen is not None:
            obj, injected = apply(obj, patches(chosen, obj)), chosen.workload
    return Admission(obj, injected, refusals(c, obj, of=of))


def tenant_of(cluster: Cluster, namespace: str) -> Tenant | None:
    return next((t for t in cluster.tenants if namespace in t.namespaces), None)


def matched_resources(c: Contract) -> Iterator[dict]:
    """The resource rules of the policy: pods and every workload kind, on create and update."""
    operations = ["CREATE", "UPDATE"]
    yield {"apiGroups": [""], "apiVersions": ["v1"], "operations": operations, "resources": ["pods"]}
    for kind in c.kinds:
        yield {"apiGroups": [kind.group], "apiVersions": ["*"], "operations": operations, "resources": [kind.resource]}

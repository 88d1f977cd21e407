"""The tenancy proof: each tenant's admission rules (`contract`) admit its own templates, the workload objects and
the pods their controllers create, and refuse pods that break its placement contract: a wildcard toleration, Exists
on a pool key, a toleration of a pool its workloads may not use or of the control plane, `spec.nodeName`, a foreign
scheduler or queue, a forbidden priority class. Where classes are injected (`injection`), a pod carrying only a
class's label (and its priority class) is admitted once injected and lands exactly on the pools the class's template
can use. A fresh node (a node of each pool as it registers, before its labels) takes no pod the contract admits that
the pool's labelled nodes would not take: the pod that tolerates all one grant allows, with no affinity to hold it
back, is tried on each. The pipeline runs it after the proof of `policyc.proof`, whose models of admission and
placement it uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from policyc.artifacts import Artifact
from policyc.backends.interface import SchedulerBackend
from policyc.backends.workloads import pod_templates
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster, Tenant, Workload, once_per_build
from policyc.k8s.scheduling import NO_EXECUTE, NO_SCHEDULE
from policyc.pods import reachable_pools
from policyc.proof.admitted import as_pod
from policyc.proof.placement import FRESH, fresh_placement_of, placement_of, workload_templates
from policyc.tenancy import contract
from policyc.tenancy.grant import CONTROL_PLANE_TAINT, granted_pools

PROBE_IMAGE = "registry.k8s.io/pause:3.10"
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)
"""What the DefaultTolerationSeconds plugin adds to every pod, before any mutating policy runs."""
SYSTEM_CLASS = "system-cluster-critical"


@dataclass(slots=True, eq=False)  # not frozen: the proof makes ten thousand (frozen: 5x the cost)
class Adversary:
    attempt: str
    """What the pod tries, in a few words."""
    pod: dict
    rule: str
    """The rule that must refuse it."""


def honest_pod(cluster: Cluster, c: contract.Contract) -> dict:
    """A bare pod of the tenant that keeps every rule: its scheduler, a class it may use, its queue."""
    spec: dict = {"schedulerName": c.scheduler_name}
    if not c.no_class:
        spec["priorityClassName"] = c.priority_classes[0]
    spec["containers"] = [{"name": "probe", "image": PROBE_IMAGE}]
    meta: dict = {"name": "probe", "namespace": c.namespaces[0]}
    if c.object_labels:
        meta["labels"] = dict.fromkeys(c.object_labels, c.queue)
    if c.pod_annotations:
        meta["annotations"] = dict.fromkeys(c.pod_annotations, c.queue)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _with(pod: dict, *, spec: Mapping[str, Any] = {}, labels: Mapping[str, str] = {},  # read only
          annotations: Mapping[str, str] = {}) -> dict:  # fmt: skip
    meta = dict(pod["metadata"])
    if labels:
        meta["labels"] = {**meta.get("labels", {}), **labels}
    if annotations:
        meta["annotations"] = {**meta.get("annotations", {}), **annotations}
    return {**pod, "metadata": meta, "spec": {**pod["spec"], **spec}}


def adversaries(cluster: Cluster, c: contract.Contract) -> list[Adversary]:
    """Pods of the tenant that each break one rule: a wildcard toleration, Exists on each governed key, the control
    plane's tolerations, the tolerations of each pool the tenant is not granted (a pod tolerating its way there
    must tolerate all of its taints, and a pod that tolerates more is refused if this one is; one pod for the pools
    with the same taints), `spec.nodeName`,
    another scheduler, another queue, a class it may not use."""
    base = honest_pod(cluster, c)
    out = [Adversary("a wildcard toleration", _with(base, spec={"tolerations": [{"operator": "Exists"}]}),
                     "wildcard-toleration")]  # fmt: skip
    for key in c.governed:
        exists = [{"key": key, "operator": "Exists"}]
        out.append(Adversary(f"Exists on {key}", _with(base, spec={"tolerations": exists}), "exists-toleration"))
    for key in (cluster.keys.control_plane, CONTROL_PLANE_TAINT):
        equal = [{"key": key, "operator": "Equal", "effect": "NoSchedule"}]
        out.append(Adversary(f"the control plane's toleration {key}", _with(base, spec={"tolerations": equal}),
                             "foreign-toleration"))  # fmt: skip
    granted = _granted(cluster).get(c.tenant, set())
    for taints, pools in _pools_by_taints(cluster).items():
        if foreign := [name for name in pools if name not in granted]:
            tolerations = [{"key": k, "operator": "Equal", "value": v, "effect": e} for k, v, e in taints]
            pod = _with(base, spec={"tolerations": tolerations})
            more = f" (and of {len(foreign) - 1} more with the same taints)" if len(foreign) > 1 else ""
            out.append(Adversary(f"the tolerations of pool '{foreign[0]}'{more}", pod, "foreign-toleration"))
    out.append(Adversary("spec.nodeName", _with(base, spec={"nodeName": _some_node(cluster)}), "node-name"))
    default = contract.DEFAULT_SCHEDULER
    other_scheduler = "other-scheduler" if c.scheduler_name == default else default
    out.append(Adversary(f"scheduler {other_scheduler}", _with(base, spec={"schedulerName": other_scheduler}),
                         "scheduler-name"))  # fmt: skip
    other_queue = next((t.name for t in cluster.tenants if t.name != c.queue), f"{c.queue}-other")
    if c.object_labels:
        out.append(Adversary(f"queue {other_queue} (label)",
                             _with(base, labels=dict.fromkeys(c.object_labels, other_queue)), "queue"))  # fmt: skip
    if c.pod_annotations:
        foreign_queue = dict.fromkeys(c.pod_annotations, other_queue)
        out.append(Adversary(f"queue {other_queue} (annotation)", _with(base, annotations=foreign_queue), "queue"))
    forbidden = next((p.name for p in cluster.priority_classes if p.name not in c.priority_classes), SYSTEM_CLASS)
    out.append(Adversary(f"priority class {forbidden}", _with(base, spec={"priorityClassName": forbidden}),
                         "priority-class"))  # fmt: skip
    return out


@once_per_build
def _granted(cluster: Cluster) -> dict[str, set[str]]:
    """Tenant -> the pools granted to one of its workload classes (`grant.granted_pools`), by name."""
    granted: dict[str, set[str]] = {}
    for w in cluster.workloads:
        granted.setdefault(w.tenant, set()).update(p.name for p in granted_pools(cluster, w))
    return granted


@once_per_build
def _pools_by_taints(cluster: Cluster) -> dict[tuple[tuple[str, str, str], ...], list[str]]:
    """The taints that keep pods off a pool, as (key, value, effect) -> the pools that have exactly those (a pod
    tolerating them may land on each), in the policy's order."""
    pools: dict[tuple[tuple[str, str, str], ...], list[str]] = {}
    for pool in cluster.pools:
        taints = tuple((t.key, t.value, t.effect) for t in pool.taints if t.effect in (NO_SCHEDULE, NO_EXECUTE))
        pools.setdefault(taints, []).append(pool.name)
    return pools


def _some_node(cluster: Cluster) -> str:
    return next((p.nodes[0] for p in cluster.pools if p.nodes), "node-1")


def honest_objects(
    cluster: Cluster, artifacts: list[Artifact], c: contract.Contract, backend: SchedulerBackend
) -> list[tuple[str, dict]]:
    """(what, object) of the tenant's templates and the pods their controllers create (with the tolerations
    `backend`, the cluster's scheduler backend, adds), and its bare probe pod."""
    return _honest(cluster, workload_templates(artifacts), c, backend)


def _honest(
    cluster: Cluster, templates: Mapping[str, Mapping[str, Any]], c: contract.Contract, backend: SchedulerBackend
) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = [("a bare pod", honest_pod(cluster, c))]
    for w in cluster.workloads_of(c.tenant):
        name, template = w.name, templates[w.name]
        out.append((f"template '{name}'", dict(template)))
        for role, _, pod_template in pod_templates(backend.KINDS, template):
            pod = as_pod(pod_template, f"{name}-{role.lower()}", w.namespace)
            out.append((f"template '{name}', {role} pod", pod))
            for added in backend.tolerations_added(cluster, w):
                spec = {**pod["spec"], "tolerations": [*pod["spec"].get("tolerations", []), *added]}
                out.append((f"template '{name}', {role} pod as its scheduler admits it", {**pod, "spec": spec}))
    return out


def check(cluster: Cluster, artifacts: list[Artifact], backend: SchedulerBackend) -> Iterator[Diagnostic]:
    """Each tenant's admission rules against its honest objects, its injected pods and the adversaries; `backend` is
    the cluster's scheduler backend."""
    contracts = contract.contracts(cluster, backend)
    templates = workload_templates(artifacts)
    for t in cluster.tenants:
        c = contracts.get(t.name)
        if c is None:
            continue
        rules = contract.tenant_rules(cluster, backend)[t.name]
        for what, obj in _honest(cluster, templates, c, backend):
            for r in contract.refusals(c, obj, of=rules):
                yield diag("tenancy-proof-failed", f"tenant '{t.name}': {what} is refused: {r.message}", t.path,
                           hint=_BUG)  # fmt: skip
        for w, pod, landed, expected, refused in _injected(cluster, c, rules):
            if refused or landed != expected:
                what = (
                    f"is refused ({'; '.join(refused)})"
                    if refused
                    else f"lands on {sorted(landed)}, not {sorted(expected)}"
                )
                yield diag("tenancy-proof-failed", f"tenant '{t.name}': {pod} {what} once injected", w.path,
                           hint=_BUG)  # fmt: skip
        yield from _unrefused(cluster, t, c, rules)
        for fresh, grant in fresh_node_landings(cluster, c):
            yield diag("tenancy-proof-failed", f"tenant '{t.name}': a pod its admission policy admits (tolerating "
                       f"{grant}) lands on {fresh}, a node as it registers, of a pool it does not land on once "
                       "labelled", t.path, hint=_BUG)  # fmt: skip


def _unrefused(
    cluster: Cluster, tenant: Tenant, c: contract.Contract, rules: list[contract.Rule]
) -> Iterator[Diagnostic]:
    """A diagnostic for each adversary of the tenant that the rule it breaks does not refuse (only that rule is
    evaluated: whether the others refuse it too does not matter)."""
    by_name = {r.name: r for r in rules}
    for a in adversaries(cluster, c):
        rule, s = by_name.get(a.rule), contract.subject(c, a.pod)
        if rule is None or s is None or rule.holds(s):
            yield diag("tenancy-proof-failed", f"tenant '{tenant.name}': a pod with {a.attempt} is not refused by "
                       f"rule {a.rule}", tenant.path, hint=_BUG)  # fmt: skip


_BUG = "this is a policyc bug; please report it with the policy"


def fresh_node_landings(cluster: Cluster, c: contract.Contract) -> Iterator[tuple[str, str]]:
    """(fresh node, the grant tolerated) for each node as it registers that a pod within one of the tenant's grants
    lands on, of a pool where the same pod does not land once its nodes are labelled and tainted: the pod tolerates
    every value of every key of the grant, for every effect, and carries no affinity to hold it back."""
    landings = _fresh_landings(cluster)
    for grant in c.grants:
        key = tuple(grant.items())
        if key not in landings:  # tenants with the same classes share their grants: each is tried once per build
            landings[key] = _landed_early(cluster, grant)
        shown = ", ".join(f"{k}={'|'.join(v)}" for k, v in key) or "no governed taint"
        yield from ((fresh, shown) for fresh in landings[key])


@once_per_build
def _fresh_landings(cluster: Cluster) -> dict[tuple, list[str]]:
    """Grant (as items) -> the fresh nodes its pod lands on early, filled as grants are tried."""
    return {}


def _landed_early(cluster: Cluster, grant: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The fresh nodes a pod tolerating all of `grant` lands on, of pools whose labelled nodes it does not land on."""
    tolerations = [{"key": k, "operator": "Equal", "value": v} for k, values in grant.items() for v in values]
    pod = {"spec": {"tolerations": [*DEFAULT_TOLERATIONS, *tolerations], "containers": []}}
    labelled = {FRESH.format(target) for target, admitted, _ in placement_of(cluster, pod) if admitted}
    return [fresh for fresh, admitted, _ in fresh_placement_of(cluster, pod) if admitted and fresh not in labelled]


def labelled_pod(cluster: Cluster, w: Workload, *, labelled: bool = True) -> dict:
    """A pod naming only the class (and the class's priority class, which is not injected), as it reaches the
    mutating policies: defaulted scheduler, default tolerations. Unlabelled: it names no class, and gets its
    namespace's default."""
    spec: dict = {"schedulerName": contract.DEFAULT_SCHEDULER, "tolerations": [dict(t) for t in DEFAULT_TOLERATIONS]}
    if w.priority_class:
        spec["priorityClassName"] = w.priority_class
    spec["containers"] = [{"name": "main", "image": w.image}]
    meta: dict = {"name": f"{w.name}-labelled", "namespace": w.namespace}
    if labelled:
        meta["labels"] = {cluster.keys.workload_class: w.name}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _injected(
    cluster: Cluster, c: contract.Contract, rules: list[contract.Rule]
) -> Iterator[tuple[Workload, str, set[str], set[str], list[str]]]:
    """(class, which pod, pools it lands on once injected, pools the class's template can use, rules refusing it)
    for the labelled pod of each injected class, and the unlabelled pod of a namespace's default class."""
    by_name = {w.name: w for w in cluster.workloads_of(c.tenant)}
    for inj in c.injections:
        w = by_name[inj.workload]
        pods = [(f"a pod labelled with class '{w.name}'", labelled_pod(cluster, w))]
        if w.namespace_default:
            pods.append((f"a pod naming no class in '{w.namespace}'", labelled_pod(cluster, w, labelled=False)))
        for what, pod in pods:
            admission = contract.admit(c, pod, of=rules)
            refused = [r.rule for r in admission.refusals]
            landed = {target for target, admitted, _ in placement_of(cluster, admission.obj) if admitted}
            yield w, what, landed, {p.name for p in reachable_pools(cluster, w)}, refused

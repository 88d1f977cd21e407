"""Tenants' running pods against what their tenant is granted and its admission contract would admit today
(`policyc.tenancy.contract`, the Python side of each rule): what an operator must clear before turning admission from
Warn to Deny.

Pods are many and alike (a controller's replicas): each distinct shape (namespace, pool, and the fields the rules
read) is judged once, and no pod is kept."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from policyc.backends.interface import SchedulerBackend
from policyc.diagnostics import Diagnostic, ObjectRef, Path, diag, listing
from policyc.ir import Cluster, Pool, Tenant, Workload
from policyc.pods import reachable_pools, usages
from policyc.tenancy.contract import Contract, contracts, refusals

APP_NAME = "app.kubernetes.io/name"
"""The label the templates give their pods, naming their workload class (a copy of a template keeps it)."""
TOLERATION_RULES = ("wildcard-toleration", "exists-toleration", "foreign-toleration")
"""The contract's rules on tolerations: what let a pod onto a pool, reported as pod-placement when it got there."""
PRIORITY_RULE = "priority-class"
DONE = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One finding of a pod's shape: the rule, what is wrong (after "Pod NS/NAME on node N: "), what to change before
    recreating it, and where in the policy."""

    rule: str
    wrong: str
    change: str
    path: Path


def node_name_set_by_creator(pod: Mapping) -> bool:
    """Whether `spec.nodeName` was set by whoever created the pod, not by a scheduler's binding: a field manager other
    than the binding subresource owns it, or (a dump without managedFields) no scheduler marked it scheduled."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    if not spec.get("nodeName"):
        return False
    managed = meta.get("managedFields")
    if managed:
        return any(
            entry.get("subresource") != "binding"
            and "f:nodeName" in ((entry.get("fieldsV1") or {}).get("f:spec") or {})
            for entry in managed
        )
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return not any(c.get("type") == "PodScheduled" and c.get("status") == "True" for c in conditions)


class Judge:
    """Judges the pods of a cluster against the policy, one shape at a time."""

    def __init__(self, cluster: Cluster, backend: SchedulerBackend, pools: Mapping[str, Pool]):
        self.cluster, self.pools = cluster, pools
        self.contracts: dict[str, Contract] = contracts(cluster, backend)
        self.tenant_of: dict[str, Tenant] = {ns: t for t in cluster.tenants for ns in t.namespaces}
        self.workloads = {(w.tenant, w.name): w for w in cluster.workloads}
        reach: dict[str, set[str]] = {t.name: set() for t in cluster.tenants}
        for w in cluster.workloads:
            reach.setdefault(w.tenant, set()).update(p.name for p in reachable_pools(cluster, w))
        self.reach = {t: frozenset(pools) for t, pools in reach.items()}
        self._verdicts: dict[tuple, tuple[Verdict, ...]] = {}

    def check(self, pods: Iterable[dict]) -> Iterator[Diagnostic]:
        for pod in pods:
            meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
            tenant = self.tenant_of.get(meta.get("namespace", ""))
            if tenant is None or (pod.get("status") or {}).get("phase") in DONE:
                continue
            node = str(spec.get("nodeName") or "")
            key = self._shape(tenant, pod, node)
            verdicts = self._verdicts.get(key)
            if verdicts is None:
                verdicts = self._verdicts[key] = tuple(self._judge(tenant, pod, self.pools.get(node)))
            for v in verdicts:
                yield _finding(pod, node, v)

    def _shape(self, tenant: Tenant, pod: dict, node: str) -> tuple:
        """What the rules read of a pod, as a key: its namespace, its node's pool, the labels and annotations that
        name its workload class and queue, and the fields of its spec the contract reads."""
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
        contract = self.contracts.get(tenant.name)
        label_keys = (self.cluster.keys.workload_class, APP_NAME, *(contract.object_labels if contract else ()))
        read = [
            [labels.get(k) for k in label_keys],
            [annotations.get(k) for k in (contract.pod_annotations if contract else ())],
            spec.get("tolerations"),
            spec.get("priorityClassName"),
            spec.get("schedulerName"),
        ]
        pool = self.pools.get(node)
        return (meta.get("namespace"), pool.name if pool else None, node_name_set_by_creator(pod), json.dumps(read))

    def _judge(self, tenant: Tenant, pod: dict, pool: Pool | None) -> Iterator[Verdict]:
        placed = self._placement(tenant, pod, pool)
        if placed is not None:
            yield placed
        contract = self.contracts.get(tenant.name)
        if contract is None:  # its admission is off: it has no contract to keep
            return
        spec = pod.get("spec") or {}
        judged = (
            pod
            if node_name_set_by_creator(pod)
            else {**pod, "spec": {k: v for k, v in spec.items() if k != "nodeName"}}
        )
        others = []
        for refusal in refusals(contract, judged):
            if refusal.rule == PRIORITY_RULE:
                granted = listing(contract.priority_classes) or "none"
                yield Verdict(
                    "pod-priority",
                    f"runs at priority class {spec.get('priorityClassName') or '(none)'}, which tenant {tenant.name} "
                    f"is not granted (granted: {granted})",
                    f"with a priority class of {granted}",
                    tenant.path,
                )
            elif not (placed is not None and refusal.rule in TOLERATION_RULES):
                others.append(refusal)
        if others:
            yield Verdict(
                "pod-contract",
                "its tenant's admission would refuse it: " + "; ".join(r.message for r in others),
                f"as rules {' and '.join(r.rule for r in others)} ask"
                if len(others) > 1
                else f"as rule {others[0].rule} asks",
                tenant.path,
            )

    def _placement(self, tenant: Tenant, pod: dict, pool: Pool | None) -> Verdict | None:
        if pool is None:
            return None
        granted = self.reach.get(tenant.name, frozenset())
        if pool.name not in granted:
            return Verdict(
                "pod-placement",
                f"pool {pool.name} ({pool.usage}, tier {pool.tier}) is not granted to "
                f"tenant {tenant.name} (its pools: {listing(sorted(granted)) or 'none'})",
                f"without the tolerations or node affinity that let it onto pool {pool.name}",
                tenant.path,
            )
        workload = self._workload(tenant, pod)
        if workload is not None and pool.usage not in usages(workload):
            return Verdict(
                "pod-placement",
                f"pool {pool.name} is of usage {pool.usage}, its workload {workload.name} is {workload.type}",
                f"on a pool of usage {' or '.join(usages(workload))}",
                workload.path,
            )
        return None

    def _workload(self, tenant: Tenant, pod: dict) -> Workload | None:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        name = labels.get(self.cluster.keys.workload_class) or labels.get(APP_NAME)
        return self.workloads.get((tenant.name, name)) if name else None


def _finding(pod: dict, node: str, v: Verdict) -> Diagnostic:
    meta = pod.get("metadata") or {}
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    on = f" on node {node}" if node else ""
    return diag(
        v.rule,
        f"Pod {namespace}/{name}{on}: {v.wrong}",
        v.path,
        hint=f"run it again {v.change}: change its workload's manifest, then `kubectl delete pod -n {namespace} "
        f"{name}`",
        subject=ObjectRef("v1", "Pod", namespace, name),
    )

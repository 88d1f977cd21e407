"""What the Kueue backend accepts: workload kinds Kueue can admit, queue fields it has no equivalent for, pools
whose capacity it needs, nominal quotas within each flavor's pool, flavors a preferred-placement workload must not
get; and Kueue's own rules on what the backend generates (resource groups, limits only inside a cohort, the
controller Configuration and the kube-scheduler profile), which only a policyc bug can break."""

from __future__ import annotations

from collections.abc import Iterator

from policyc import kube_scheduler_conf, kueue_conf
from policyc.backends import kueue
from policyc.backends.workloads import usages
from policyc.checks import queue_tree
from policyc.codes import rule
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.k8s.quantity import Quantity

TREE_RULES = tuple(
    rule(name).code for name in ("queue-cycle", "children-exceed-parent", "child-capability-above-ancestor")
)
"""Rules of the Volcano queue tree that hold for a Kueue cohort tree too (no plugin, depth or leaf-only rule)."""

_BUG = "this is a policyc bug; please report it"


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _queue_fields(cluster)
    yield from _allocatable(cluster)
    yield from (d for d in queue_tree.check(cluster) if d.code in TREE_RULES)
    yield from _nominal_within_pools(cluster)
    yield from _preferred_placement(cluster)
    yield from _generated(cluster)


def _queue_fields(cluster: Cluster) -> Iterator[Diagnostic]:
    covered = kueue.covered_resources(cluster)
    for t in cluster.tenants:
        q, base = t.queue, (*t.path, "queue")
        if q.priority is not None:
            yield diag(
                "queue-field-ignored-by-kueue",
                f"tenant '{t.name}' sets a queue priority; Kueue queues have none",
                (*base, "priority"),
                hint="remove it; give the tenant's workloads a higher priority class instead",
            )
        if q.deserved_given:
            yield diag(
                "queue-field-ignored-by-kueue",
                f"tenant '{t.name}' sets deserved; with Kueue the guarantee is the nominal quota",
                (*base, "deserved"),
                hint="remove it; fairSharing.weight (the queue weight) shares what no tenant is guaranteed",
            )
        for field in ("guarantee", "capability"):
            for resource in getattr(q, field):
                if resource not in covered:
                    yield diag(
                        "queue-field-ignored-by-kueue",
                        f"tenant '{t.name}' queue {field} names {resource}; Kueue queues cover only "
                        f"{', '.join(covered)}",
                        (*base, field, cluster.policy_key(resource)),
                        hint="remove it, or quota it per namespace (tenants[].quota)",
                    )


def _allocatable(cluster: Cluster) -> Iterator[Diagnostic]:
    for p in cluster.pools:
        missing = [r for r in ("cpu", "memory") if r not in p.allocatable]
        if missing:
            yield diag(
                "pool-without-allocatable",
                f"pool '{p.name}' does not state its allocatable {' and '.join(missing)}; Kueue admits only what "
                "a flavor has quota for",
                (*p.path, "allocatable") if p.allocatable else (*p.path, "name"),
                hint=f"add allocatable: {{{', '.join(f'{r}: ...' for r in missing)}}} (per node)",
            )


def _nominal_within_pools(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # totals over a partly parsed policy would mislead
        return
    quotas = kueue.nominal_quotas(cluster)
    by_name = {t.name: t for t in cluster.tenants}
    for p in cluster.pools:
        for resource, available in kueue.pool_capacity(cluster, p).items():
            shares = [(by_name[t], q[p.name][resource]) for t, q in quotas.items() if p.name in q]
            shares = [(t, a) for t, a in shares if not a.is_zero()]
            total = sum((a for _, a in shares), Quantity.from_value(0))
            if total > available:
                last = shares[-1][0]
                yield diag(
                    "nominal-quota-exceeds-pool",
                    f"flavor '{p.name}' gets nominal quotas of {total} {resource} in total "
                    f"({', '.join(f'{t.name} {a}' for t, a in shares)}), but pool '{p.name}' has {available}",
                    (*last.path, "queue", "guarantee", cluster.policy_key(resource)),
                    hint="lower the guarantees, or add pools the tenants' workloads may use",
                )


def _preferred_placement(cluster: Cluster) -> Iterator[Diagnostic]:
    """Kueue injects an admitted flavor's nodeLabels and tolerations into the pods, whatever they prefer: a
    preferred-placement workload must only be offered flavors it may use."""
    tenants = {t.name: t for t in cluster.tenants}
    for w in cluster.workloads:
        if w.placement != "preferred":
            continue
        wrong = [
            p.name
            for p in kueue.flavors(cluster, tenants[w.tenant])
            if p.tier != w.tier.name or p.usage not in usages(w)
        ]
        if wrong:
            yield diag(
                "flavor-admits-forbidden-pool",
                f"{w.type} workload '{w.name}' only prefers its pools, and the queue of tenant '{w.tenant}' offers "
                f"flavor{'s' if len(wrong) > 1 else ''} {', '.join(repr(n) for n in wrong)}: Kueue could admit it "
                "there and add the flavor's node selector and tolerations to its pods",
                (*w.path, "placement"),
                hint="use placement: strict (Kueue then offers it only the flavors its affinity allows)",
            )


def _generated(cluster: Cluster) -> Iterator[Diagnostic]:
    for t, obj in kueue.cluster_queues(cluster):
        for problem in resource_group_problems(obj["spec"], borrowing_allowed=bool(obj["spec"].get("cohortName"))):
            yield diag("output-schema", f"ClusterQueue '{t.name}': {problem}", (*t.path, "queue"), hint=_BUG)
    for obj, path in kueue.cohorts(cluster):
        for problem in resource_group_problems(obj["spec"], borrowing_allowed=bool(obj["spec"].get("parentName"))):
            yield diag("output-schema", f"Cohort '{obj['metadata']['name']}': {problem}", path, hint=_BUG)
    for what, problems in (
        ("Kueue Configuration", kueue_conf.check(kueue.manager_conf(cluster))),
        ("kube-scheduler configuration", kube_scheduler_conf.check(kueue.scheduler_conf(cluster))),
    ):
        for problem in problems:
            yield diag("output-schema", f"the generated {what}: {problem}", ("spec", "scheduler"), hint=_BUG)


def resource_group_problems(spec: dict, *, borrowing_allowed: bool) -> list[str]:
    """Kueue's rules on a ClusterQueue's or Cohort's resourceGroups that its structural schema does not check
    (CEL rules and the admission webhook): every flavor lists every covered resource, in the same order; a
    resource and a flavor in only one group; borrowing and lending limits only inside a cohort (a Cohort: only
    with a parent); a lending limit within the nominal quota."""
    out: list[str] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for g, group in enumerate(spec.get("resourceGroups", [])):
        covered = group["coveredResources"]
        for resource in covered:
            if resource in seen_resources:
                out.append(f"resource '{resource}' is in more than one resource group")
            seen_resources.add(resource)
        for flavor in group["flavors"]:
            name = flavor["name"]
            if name in seen_flavors:
                out.append(f"flavor '{name}' is in more than one resource group")
            seen_flavors.add(name)
            listed = [r["name"] for r in flavor["resources"]]
            if listed != covered:
                out.append(
                    f"resourceGroups[{g}] flavor '{name}' lists {listed}, not the covered resources {covered} "
                    "in their order"
                )
            for r in flavor["resources"]:
                limits = [k for k in ("borrowingLimit", "lendingLimit") if k in r]
                if limits and not borrowing_allowed:
                    out.append(f"flavor '{name}' {r['name']} has {' and '.join(limits)} outside a cohort")
                if "lendingLimit" in r and Quantity.parse(r["lendingLimit"]) > Quantity.parse(r["nominalQuota"]):
                    out.append(f"flavor '{name}' {r['name']} lends more than its nominal quota")
    return out

"""What the Kueue backend accepts: workload kinds Kueue can admit, queue fields it has no equivalent for, pools
whose capacity it needs, Kueue's limits on what the policy makes of them (64 flavors in a queue's resource group,
8 node labels, taints and tolerations on a flavor, 253 characters in a flavor name), nominal quotas within each
flavor's group of pools, flavors a preferred-placement workload must not get, gang minimums Kueue cannot honour;
and Kueue's own rules on what the backend generates (resource groups, limits only inside a cohort, the controller
Configuration and the kube-scheduler profile), which only a policyc bug can break.

A flavor is the pools of one GPU tier and one usage (`policyc.backends.kueue.backend.Flavor`)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.backends.kueue import backend as kueue
from policyc.backends.kueue import conf as kueue_conf
from policyc.backends.kueue import kube_scheduler_conf
from policyc.checks import cluster_capacity, queues
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster, Pool, Tenant
from policyc.k8s.quantity import Quantity
from policyc.pods import usages

_BUG = "this is a policyc bug; please report it"


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _queue_fields(cluster)
    yield from _allocatable(cluster)
    yield from _flavors_per_queue(cluster)
    yield from _flavor_entries(cluster)
    yield from _nominal_within_flavors(cluster)
    yield from _preferred_placement(cluster)
    yield from _gang_minimum(cluster)
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
    for t, field, resource, at in queues.unknown_queue_resources(cluster, covered):
        yield diag(
            "queue-field-ignored-by-kueue",
            f"tenant '{t.name}' queue {field} names {resource}; Kueue queues cover only {', '.join(covered)}",
            at,
            hint=queues.UNKNOWN_RESOURCE_HINT,
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


def _flavors_per_queue(cluster: Cluster) -> Iterator[Diagnostic]:
    """Every queue has one resource group (its flavors all cover the same resources), of at most 64 flavors. The
    root cohort lists every flavor: the pool that makes the 65th tier-usage pair is reported; a tenant's queue
    lists those of its workloads: the workload that brings the 65th."""
    limit = kueue.MAX_FLAVORS_PER_GROUP
    every = kueue.all_flavors(cluster)
    if len(every) <= limit:
        return  # a tenant's queue offers a subset
    pairs: set[tuple[str, str]] = set()
    for p in sorted(cluster.pools, key=lambda p: p.path):
        pairs.add((p.tier, p.usage))
        if len(pairs) > limit:
            yield diag(
                "kueue-limit",
                f"the pools make {len(every)} Kueue flavors (one per GPU tier and usage), all listed by the root "
                f"cohort '{kueue.root_cohort(cluster)}'; Kueue allows {limit} in a resource group",
                (*p.path, "name"),
                hint=f"use at most {limit} GPU tier and usage pairs ({len(every) - limit} fewer): merge GPU tiers, "
                f"or give pool '{p.name}' and the pools after it the tier and usage of others",
            )
            break
    existing = {(f.tier, f.usage) for f in every}
    for t in cluster.tenants:
        mine = sorted(cluster.workloads_of(t.name), key=lambda w: w.path)
        offered: set[tuple[str, str]] = set()
        for w in mine:
            offered |= {(w.tier.name, u) for u in usages(w)} & existing
            if len(offered) > limit:
                yield diag(
                    "kueue-limit",
                    f"the queue of tenant '{t.name}' would offer {len(kueue.flavors(cluster, t))} Kueue flavors "
                    f"(the GPU tiers and usages of its workloads); Kueue allows {limit} in a resource group",
                    (*w.path, "gpuTier"),
                    hint=f"move workload '{w.name}' and the ones after it to another tenant, or give them GPU "
                    f"tiers tenant '{t.name}' already uses",
                )
                break


def _flavor_entries(cluster: Cluster) -> Iterator[Diagnostic]:
    """A flavor has at most 8 nodeLabels, nodeTaints and tolerations each, and a DNS-1123 subdomain name."""
    limit = kueue.MAX_FLAVOR_ENTRIES
    tiers = {t.name: t for t in cluster.tiers}
    for f in kueue.all_flavors(cluster):
        first = min(f.pools, key=lambda p: p.path)
        tier = tiers[f.tier].path if f.tier in tiers else first.path
        if len(f.name) > kueue.MAX_NAME:
            yield diag(
                "kueue-limit",
                f"the Kueue flavor of GPU tier '{_short(f.tier)}' and usage {f.usage} would be named with "
                f"{len(f.name)} characters; Kueue allows {kueue.MAX_NAME}",
                (*tier, "name"),
                hint=f"shorten the tier's name to at most {kueue.MAX_NAME - len(f.usage) - 1} characters",
            )
        spec = kueue.flavor_spec(cluster, f)
        labels, taints, tolerations = (len(spec.get(k, ())) for k in ("nodeLabels", "nodeTaints", "tolerations"))
        if labels > limit:
            yield diag(
                "kueue-limit",
                f"flavor '{_short(f.name)}' would have {labels} node labels; Kueue allows {limit}",
                (*tier, "name"),
                hint=_BUG,
            )
        if taints > limit:
            yield diag(
                "kueue-limit",
                f"flavor '{_short(f.name)}' would carry {taints} taints (those of pool"
                f"{f's {_pools(f.pools)} in common' if len(f.pools) > 1 else f' {_pools(f.pools)}'}); Kueue allows "
                f"{limit}",
                (*first.path, "taints") if _own_taints(cluster, first) else (*first.path, "name"),
                hint=f"remove taints from pool '{first.name}': a flavor carries only the taints all its pools "
                "have, and policyc adds the usage and GPU product ones",
            )
        if tolerations > limit:
            yield diag(
                "kueue-limit",
                f"flavor '{_short(f.name)}' would need {tolerations} tolerations (its usage taint and one per GPU "
                f"product: its pools have {len(f.products)}); Kueue allows {limit}",
                (*tier, "products"),
                hint=f"split tier '{_short(f.tier)}' so that its {f.usage} pools have at most {limit - 1} products",
            )


def _own_taints(cluster: Cluster, pool: Pool) -> bool:
    """Whether the pool has taints of the policy's own (not only the usage and product taints policyc adds)."""
    return any(not t.key.startswith(cluster.keys.domain + "/") and t.key != pool.product_key for t in pool.taints)


def _nominal_within_flavors(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # totals over a partly parsed policy would mislead
        return
    by_name = {t.name: t for t in cluster.tenants}
    given: dict[tuple[str, str], list[tuple[Tenant, Quantity]]] = {}  # (flavor, resource) -> each tenant's, in order
    for tenant, quota in kueue.nominal_quotas(cluster).items():
        for flavor, amounts in quota.items():
            for resource, amount in amounts.items():
                if not amount.is_zero():
                    given.setdefault((flavor, resource), []).append((by_name[tenant], amount))
    reported = cluster_capacity.unkeepable(cluster)  # guarantees no split can hold: one error, by the capacity check
    for f in kueue.all_flavors(cluster):
        for resource, available in kueue.flavor_capacity(cluster, f).items():
            if resource in reported:
                continue
            shares = given.get((f.name, resource), [])
            total = sum((a for _, a in shares), Quantity.from_value(0))
            if total > available:
                last = shares[-1][0]
                several = len(f.pools) > 1
                yield diag(
                    "nominal-quota-exceeds-pool",
                    f"flavor '{f.name}' gets nominal quotas of {total} {resource} in total "
                    f"({listing([f'{t.name} {a}' for t, a in shares])}), but its pool{'s' if several else ''} "
                    f"{_pools(f.pools)} ha{'ve' if several else 's'} {available}",
                    (*last.path, "queue", "guarantee", cluster.policy_key(resource)),
                    hint="the pools could hold these guarantees together, but not as policyc fills each queue's "
                    "flavors (dedicated before hybrid, larger first, tenants by name): lower the guarantees of "
                    f"{listing([t.name for t, _ in shares])} by {total - available} in all, or add nodes to "
                    f"{_pools(f.pools)}",
                )


def _preferred_placement(cluster: Cluster) -> Iterator[Diagnostic]:
    """Kueue injects an admitted flavor's nodeLabels and tolerations into the pods, whatever they prefer: a
    preferred-placement workload must only be offered flavors it may use."""
    tenants = {t.name: t for t in cluster.tenants}
    for w in cluster.workloads:
        if w.placement != "preferred":
            continue
        wrong = [
            f.name
            for f in kueue.flavors(cluster, tenants[w.tenant])
            if f.tier != w.tier.name or f.usage not in usages(w)
        ]
        if wrong:
            yield diag(
                "flavor-admits-forbidden-pool",
                f"{w.type} workload '{w.name}' only prefers its pools, and the queue of tenant '{w.tenant}' offers "
                f"flavor{'s' if len(wrong) > 1 else ''} {listing([repr(n) for n in wrong])}: Kueue could admit it "
                "there and add the flavor's node selector and tolerations to its pods",
                (*w.path, "placement"),
                hint="use placement: strict (Kueue then offers it only the flavors its affinity allows)",
            )


def _gang_minimum(cluster: Cluster) -> Iterator[Diagnostic]:
    """Kueue admits a PyTorchJob's pod sets whole (no partial admission; it reads neither minAvailable nor
    elasticPolicy): a smaller gang than its replicas only delays it. A batch Job's becomes partial admission."""
    for w in cluster.workloads:
        if w.kind != "PyTorchJob" or w.gang >= w.replicas:
            continue
        whole = f"Kueue admits a PyTorchJob only whole: it waits until queue '{w.tenant}' has room for all {w.replicas}"
        if w.elastic:
            yield diag(
                "gang-minimum-ignored-by-kueue",
                f"elastic PyTorchJob '{w.name}' may run with {w.gang} workers (elastic.minReplicas), but {whole} "
                "it starts with (replicas)",
                (*w.path, "elastic", "minReplicas"),
                hint=f"set elastic.minReplicas to {w.replicas}, or replicas to {w.gang}",
            )
        else:
            yield diag(
                "gang-minimum-ignored-by-kueue",
                f"PyTorchJob '{w.name}' may start with {w.gang} of its {w.replicas} pods (minMember), but {whole}",
                (*w.path, "minMember"),
                hint=f"set minMember to {w.replicas} or remove it; or use kind: Job, which Kueue may start with "
                f"{w.gang} pods (partial admission)",
            )


def _pools(pools: tuple[Pool, ...]) -> str:
    return listing([f"'{p.name}'" for p in pools])


def _short(text: str, size: int = 80) -> str:
    return text if len(text) <= size else text[: size - 3] + "..."


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


CHECKS = (check,)
"""The rules face (`policyc.backends.interface.RulesFace`): run only for policies that select Kueue."""

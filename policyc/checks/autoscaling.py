"""Autoscaled inference workloads: an autoscaler the cluster can run (a Deployment, bounds, metrics its autoscaler
reads, scale to zero only where it exists), a CPU target the pods can reach, and a max whose pods the tenant's quota
admits. That max pods fit the pools and the queue is `policyc.checks.sizing`'s (a workload's `most_pods` is its
autoscaler's max); `headroom` gives the report the largest max each of them allows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from policyc.backends.autoscaling import KEDA_HPA_PREFIX, KEDA_NAME_LIMIT
from policyc.backends.kubernetes import CLASS_QUOTA_PREFIX, QUOTA_NAME, quota_object
from policyc.checks.sizing import pool_room, queue_use
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.gpu import dra
from policyc.ir import Autoscale, Cluster, Quota, Tenant, Workload
from policyc.pods import contract_pod, pod_resources, reachable_pools
from policyc.proof.admitted import QuotaUse, quota_use


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    tenants = {t.name: t for t in cluster.tenants}
    for w in cluster.workloads:
        a = w.autoscale
        if a is None:
            continue
        if w.type != "inference" or w.kind != "Deployment":
            yield _not_deployment(w, a)
            continue
        if a.max < a.min:
            yield diag(
                "autoscale-max-below-min",
                f"workload '{w.name}' autoscales between min {a.min} and max {a.max} pods: max is below min",
                (*a.path, "max"),
                hint=f"raise autoscale.max to at least {a.min}, or lower autoscale.min",
            )
        yield from _metrics(cluster, w, a)
        if cluster.keda and len(KEDA_HPA_PREFIX + w.name) > KEDA_NAME_LIMIT:
            most = KEDA_NAME_LIMIT - len(KEDA_HPA_PREFIX)
            yield diag(
                "autoscale-name-too-long",
                f"KEDA names the HorizontalPodAutoscaler of workload '{w.name}' '{KEDA_HPA_PREFIX}{w.name}', "
                f"{len(KEDA_HPA_PREFIX) + len(w.name)} characters: its webhook refuses more than {KEDA_NAME_LIMIT}",
                (*w.path, "name"),
                hint=f"shorten the workload's name to at most {most} characters",
            )
        if not cluster.complete:  # a pool left out for its errors could size the pods differently
            continue
        yield from _cpu(cluster, w, a)
        if a.max >= a.min:
            yield from _quota(cluster, w, a, tenants[w.tenant])


def _not_deployment(w: Workload, a: Autoscale) -> Diagnostic:
    if w.type != "inference":
        why = f"is {w.type} work ({w.kind}): only inference Deployments autoscale"
        hint = "remove autoscale: a training job runs its replicas (an elastic PyTorchJob grows with elastic)"
    else:
        why = f"is a {w.kind}: only a Deployment autoscales (through its scale subresource)"
        hint = "use kind: Deployment, or remove autoscale"
    return diag("autoscale-not-deployment", f"workload '{w.name}' has autoscale but {why}", a.path, hint=hint)


def _metrics(cluster: Cluster, w: Workload, a: Autoscale) -> Iterator[Diagnostic]:
    if a.cpu is None and a.metric is None and a.prometheus is None:
        yield diag(
            "autoscale-metric-unsupported",
            f"workload '{w.name}' autoscales on no metric",
            a.path,
            hint="add cpu: 70 (target CPU use, in percent of the request)"
            + (", or prometheus: {serverAddress, query, threshold}" if cluster.keda else ", or metric: {name, "
               "averageValue}"),
        )  # fmt: skip
    if a.prometheus is not None and not cluster.keda:
        yield diag(
            "autoscale-metric-unsupported",
            f"workload '{w.name}' autoscales on a Prometheus query, which only KEDA reads, and the policy does not say "
            "KEDA is installed",
            (*a.path, "prometheus"),
            hint="set spec.autoscaling.keda: true where KEDA runs, or scale on metric: {name, averageValue} served "
            "through the custom metrics API (prometheus-adapter)",
        )
    if a.metric is not None and cluster.keda:
        yield diag(
            "autoscale-metric-unsupported",
            f"workload '{w.name}' autoscales on metric '{a.metric[0]}' of the custom metrics API, which KEDA has no "
            "trigger for",
            (*a.path, "metric"),
            hint="scale on its Prometheus query instead: prometheus: {serverAddress, query, threshold}",
        )
    if a.min == 0 and not cluster.keda:
        yield diag(
            "autoscale-scale-to-zero-unsupported",
            f"workload '{w.name}' autoscales from min 0, but a HorizontalPodAutoscaler keeps at least one pod: "
            f"minReplicas 0 needs the alpha feature gate HPAScaleToZero, off by default in Kubernetes "
            f"{cluster.kubernetes_version}",
            (*a.path, "min"),
            hint="set autoscale.min to 1 or more, or scale to zero with KEDA (spec.autoscaling.keda: true and a "
            "prometheus trigger)",
        )
    elif a.min == 0 and a.prometheus is None and a.cpu is not None:
        yield diag(
            "autoscale-scale-to-zero-unsupported",
            f"workload '{w.name}' autoscales from min 0 on CPU alone: KEDA never scales a workload to zero on CPU, "
            "and its webhook refuses the ScaledObject",
            (*a.path, "min"),
            hint="set autoscale.min to 1 or more, or add a prometheus trigger to wake it",
        )


def _cpu(cluster: Cluster, w: Workload, a: Autoscale) -> Iterator[Diagnostic]:
    """A pod uses at most its cpu limit: a target above the limit's share of the request is never reached."""
    if a.cpu is None:
        return
    pods = pod_resources(cluster, w)
    request, limit = pods.requests.get("cpu"), pods.limits.get("cpu")
    if request is None or limit is None or request.is_zero():
        return
    reachable = math.floor(limit.value / request.value * 100)
    if a.cpu <= reachable:
        return
    if w.qos == "Guaranteed":
        hint = f"lower autoscale.cpu to at most {reachable} (a Guaranteed pod's limit is its request)"
    else:
        need = math.ceil(request.value * a.cpu / 100 * 1000)  # millicores
        hint = f"lower autoscale.cpu to at most {reachable}, or raise limits.cpu to at least {need}m"
    yield diag(
        "autoscale-cpu-unreachable",
        f"workload '{w.name}' aims at {a.cpu}% of its cpu request ({request}), but its pods may use at most their "
        f"limit ({limit}), {reachable}% of it: the autoscaler never adds pods for CPU",
        (*a.path, "cpu"),
        hint=hint,
    )


def counting_quotas(tenant: Tenant, priority_class: str | None) -> list[dict]:
    """The tenant's ResourceQuotas that count the workload's pods: its quota, and its priority class's."""
    quota = tenant.quota
    if quota is None:
        return []
    out = [quota_object(QUOTA_NAME, quota)] if quota.hard else []
    if priority_class in quota.per_class:
        scoped = quota_object(f"{CLASS_QUOTA_PREFIX}{priority_class}", Quota(quota.per_class[priority_class]))
        scope = {"scopeName": "PriorityClass", "operator": "In", "values": [priority_class]}
        scoped["spec"]["scopeSelector"] = {"matchExpressions": [scope]}
        out.append(scoped)
    return out


def quota_uses(cluster: Cluster, w: Workload, tenant: Tenant, pods: int) -> list[QuotaUse]:
    """What `pods` pods of the workload take of each key of its namespace's quotas, as admission counts them."""
    resources = pod_resources(cluster, w)
    claimed = {r: int(resources.requests[r].value) for r in dra.claimed(resources.requests)}
    return quota_use([(pods, contract_pod(w, resources))], counting_quotas(tenant, w.priority_class), claimed=[claimed])


def _quota(cluster: Cluster, w: Workload, a: Autoscale, tenant: Tenant) -> Iterator[Diagnostic]:
    uses = quota_uses(cluster, w, tenant, a.max)
    over = sorted((u for u in uses if not u.fits), key=lambda u: (u.admitted, u.quota, u.key))
    largest = min((u.admitted for u in uses), default=a.max)
    if not over or largest == 0:  # not even one pod: its template is refused, which the admission proof reports
        return
    first = over[0]
    raise_ = " and ".join(f"{'.'.join(quota_field(cluster, tenant.name, u))} to at least {u.need}" for u in over)
    bound, at = ("max", "max") if largest >= a.min else ("min and autoscale.max", "min")
    yield diag(
        "autoscale-exceeds-quota",
        f"workload '{w.name}' may scale to {a.max} pods, which take {first.need} {first.key} in namespace "
        f"'{w.namespace}', but ResourceQuota '{first.quota}' allows {first.hard}: it admits {largest} of them"
        + (f" (also over: {listing([f'{u.key} {u.need} of {u.hard}' for u in over if u is not first])})"
           if len(over) > 1 else ""),
        (*a.path, at),
        hint=f"lower autoscale.{bound} to at most {largest}, or raise tenant '{tenant.name}' {raise_}",
    )  # fmt: skip


def quota_field(cluster: Cluster, tenant: str, use: QuotaUse) -> tuple[str, ...]:
    """The policy field (under the tenant) that sets a quota key, e.g. (quota, requests, gpu) or
    (quota, perPriorityClass, <class>, gpu)."""
    key = cluster.tenant_key(tenant, use.key.removeprefix("requests.").removeprefix("limits."))
    if use.quota.startswith(CLASS_QUOTA_PREFIX):
        return ("quota", "perPriorityClass", use.quota.removeprefix(CLASS_QUOTA_PREFIX), key)
    if use.key.startswith(("requests.", "limits.")) or dra.is_devices_key(use.key):
        part = "limits" if use.key.startswith("limits.") else "requests"
        return ("quota", part, key)
    return ("quota", "objects", use.key)


@dataclass(frozen=True, slots=True, eq=False)
class Headroom:
    """The most pods of an autoscaled workload each bound admits (None: it sets none)."""

    workload: str
    min: int
    max: int
    quota: int | None
    queue: int | None
    pools: int


def headroom(cluster: Cluster, w: Workload) -> Headroom:
    a = w.autoscale
    assert a is not None
    tenants = {t.name: t for t in cluster.tenants}
    pods = pod_resources(cluster, w)
    quota = min((_pods_within(u) for u in quota_uses(cluster, w, tenants[w.tenant], a.max)), default=None)
    queued = [math.floor(u.cap.value / u.each.value) for u in queue_use(w, pods, tenants) if not u.each.is_zero()]
    room = sum(p.max_nodes * n for p, n in pool_room(cluster, w, pods, reachable_pools(cluster, w)))
    return Headroom(w.name, a.min, a.max, quota, min(queued, default=None), room)


def _pods_within(use: QuotaUse) -> int:
    """How many of the workload's pods a quota key admits (each takes need / pods of it)."""
    return use.pods if use.need.is_zero() else math.floor(use.hard.value * use.pods / use.need.value)

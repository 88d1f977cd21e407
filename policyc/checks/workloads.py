"""Workload classes the backend cannot run, whose pods cannot be sized, whose limits contradict their requests, or
that tolerate every taint or beyond what the policy grants them (`policyc.tenancy.grant.excess`)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster, Pool, Workload
from policyc.pods import pod_resources, reachable_pools
from policyc.registry import settings
from policyc.tenancy.grant import Excess, excess, grant


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _kinds(cluster)
    for w in cluster.workloads:
        yield from _limits(w)
        yield from _tolerations(cluster, w)
        unsized = pod_resources(cluster, w).unsized
        pools = reachable_pools(cluster, w)
        # Without a pool to land on, the placement proof says why; a left-out pool may have stated allocatable.
        if unsized and pools and cluster.complete:
            yield _unsized(w, unsized, pools)


def _kinds(cluster: Cluster) -> Iterator[Diagnostic]:
    backend = cluster.scheduler.backend
    kinds = settings(backend).WORKLOAD_KINDS
    for w in cluster.workloads:
        if w.kind not in kinds:
            yield diag(
                "kind-not-supported-by-backend",
                f"workload '{w.name}' is a {w.kind}, which the {backend} backend cannot run",
                (*w.path, "kind"),
                hint=f"use one of {', '.join(kinds)}",
            )


def _tolerations(cluster: Cluster, w: Workload) -> Iterator[Diagnostic]:
    for i, t in enumerate(w.tolerations):
        if not t.get("key") and t.get("operator") == "Exists":
            yield diag(
                "toleration-of-everything",
                f"workload '{w.name}' tolerates every taint (a toleration with no key and operator Exists): its pods "
                "stay on NotReady and unreachable nodes forever and ignore every taint added to keep them off",
                (*w.path, "tolerations", i),
                hint="name the taint key it must tolerate (policyc adds the usage and GPU product tolerations)",
            )
        why = excess(cluster, w, t)
        if why is not None and not (why.kind == "slurm-only" and _slurm_only_reached(cluster, w)):
            yield _beyond_grant(cluster, w, t, why, (*w.path, "tolerations", i))


def _slurm_only_reached(cluster: Cluster, w: Workload) -> bool:
    """Whether the workload reaches a Slurm-only pool, which PC464 reports."""
    return any(p.slurm is not None and not p.slurm.shared for p in reachable_pools(cluster, w))


def _beyond_grant(cluster: Cluster, w: Workload, t: dict, why: Excess, path: tuple) -> Diagnostic:
    key = t["key"]
    if t.get("operator") == "Exists":
        shown = f"{key} (operator Exists)"
    else:
        shown = f"{key}={t['value']}" if t.get("value") else f"{key} (no value)"
    if why.kind == "control-plane":
        reach = "tolerates the control plane's taint"
    elif why.kind == "registration":
        reach = "tolerates the taint nodes carry as they register, before their pool's labels and taints are set"
    elif why.kind == "slurm-only":
        reach = f"tolerates the taint of Slurm-only {_pools(why.pools)}"
    elif why.pools:
        reach = f"tolerates the taint of {_pools(why.pools)}, which its class is not granted"
    else:
        reach = "matches no pool's taint"
    granted = ", ".join(f"{k}={'|'.join(v)}" for k, v in grant(cluster, w).items()) or "no pool taint"
    tenant = next(t for t in cluster.tenants if t.name == w.tenant)
    refused = (
        f", and the admission policy of tenant '{w.tenant}' refuses such pods" if tenant.admission != "off" else ""
    )
    message = f"workload '{w.name}' tolerates {shown}, beyond its grant ({granted}): it {reach}{refused}"
    if why.instead:
        hint = "write " + ", ".join(_toleration(o) for o in why.instead) + " instead, the taint of its own pools"
    elif why.kind == "slurm-only":
        hint = "remove it; to share the pool with Kubernetes workloads, set the pool's slurm.shared: true"
    elif why.kind == "control-plane":
        hint = "remove it: no tenant workload runs on the control plane"
    elif why.kind == "registration":
        hint = "remove it: no tenant workload runs on a node before nodes/release.sh releases it"
    else:
        hint = ("remove it: policyc's own tolerations cover what the class is granted; give work for other pools a "
                "workload class of its own")  # fmt: skip
    return diag("toleration-beyond-grant", message, path, hint=hint)


def _pools(pools: tuple[Pool, ...]) -> str:
    names = listing([f"'{p.name}'" for p in pools])
    return f"pool {names}" if len(pools) == 1 else f"pools {names}"


def _toleration(t: dict) -> str:
    """A toleration as a user writes it in the policy."""
    parts = [f"key: {t['key']}"] + ([f"value: {t['value']}"] if t.get("value") else []) + [f"effect: {t['effect']}"]
    return "{" + ", ".join(parts) + "}"


def _limits(w: Workload) -> Iterator[Diagnostic]:
    for resource, limit in w.limits.items():
        request = getattr(w, resource)
        if request is None:
            continue
        if limit < request:
            yield diag(
                "workload-resources-inconsistent",
                f"workload '{w.name}' limits {resource} to {limit} per pod, below its request of {request}",
                (*w.path, "limits", resource),
                hint=f"raise limits.{resource} to at least {request}, or lower {resource}",
            )
        elif w.qos == "Guaranteed" and limit != request:
            yield diag(
                "workload-resources-inconsistent",
                f"workload '{w.name}' asks for qos Guaranteed, but limits {resource} to {limit}, not its request "
                f"of {request}",
                (*w.path, "limits", resource),
                hint=f"remove limits.{resource} (Guaranteed sets it to the request), or use qos: Burstable",
            )


def _unsized(w: Workload, missing: tuple[str, ...], pools: tuple[Pool, ...]) -> Diagnostic:
    what = " and ".join(missing)
    names = listing([f"'{p.name}'" for p in pools], 3)
    return diag(
        "workload-unsized",
        f"workload '{w.name}' states no {what} request per pod, and no pool it can use ({names}) states its "
        f"allocatable {what} to size it from",
        (*w.path, "name"),
        hint=f"set {' and '.join(f'{r}: ...' for r in missing)} on the workload, or allocatable on '{pools[0].name}'",
    )

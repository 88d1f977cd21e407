"""Workload classes the backend cannot run, whose pods cannot be sized, whose limits contradict their requests, or
that tolerate every taint."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.contract import pod_resources, reachable_pools
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster, Pool, Workload


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _kinds(cluster)
    for w in cluster.workloads:
        yield from _limits(w)
        yield from _tolerations(w)
        unsized = pod_resources(cluster, w).unsized
        pools = reachable_pools(cluster, w)
        # Without a pool to land on, the placement proof says why; a left-out pool may have stated allocatable.
        if unsized and pools and cluster.complete:
            yield _unsized(w, unsized, pools)


def _kinds(cluster: Cluster) -> Iterator[Diagnostic]:
    from policyc.backends import settings

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


def _tolerations(w: Workload) -> Iterator[Diagnostic]:
    for i, t in enumerate(w.tolerations):
        if not t.get("key") and t.get("operator") == "Exists":
            yield diag(
                "toleration-of-everything",
                f"workload '{w.name}' tolerates every taint (a toleration with no key and operator Exists): its pods "
                "stay on NotReady and unreachable nodes forever and ignore every taint added to keep them off",
                (*w.path, "tolerations", i),
                hint="name the taint key it must tolerate (policyc adds the usage and GPU product tolerations)",
            )


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

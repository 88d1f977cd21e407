"""Workload classes the backend cannot run, or that cannot fit: more GPUs per pod than any node of the tier has."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _kinds(cluster)
    yield from _gpus_per_node(cluster)


def _kinds(cluster: Cluster) -> Iterator[Diagnostic]:
    from policyc.backends import SCHEDULERS

    backend = cluster.scheduler.backend
    kinds = SCHEDULERS[backend].KINDS
    for w in cluster.workloads:
        if w.kind not in kinds:
            yield diag(
                "kind-not-supported-by-backend",
                f"workload '{w.name}' is a {w.kind}, which the {backend} backend cannot run",
                (*w.path, "kind"),
                hint=f"use one of {', '.join(kinds)}",
            )


def _gpus_per_node(cluster: Cluster) -> Iterator[Diagnostic]:
    largest: dict[str, int] = {}
    for p in cluster.pools:
        largest[p.tier] = max(largest.get(p.tier, 0), p.gpus_per_node)
    for w in cluster.workloads:
        most = largest.get(w.tier.name)
        if most is not None and w.gpus > most:
            yield diag(
                "workload-without-gpus-per-node",
                f"workload '{w.name}' asks for {w.gpus} GPUs per pod, but nodes of tier '{w.tier.name}' "
                f"have at most {most}",
                (*w.path, "gpus"),
                hint=f"use gpus: {most} or less per pod and more replicas",
            )

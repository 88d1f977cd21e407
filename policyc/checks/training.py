"""The shape of a workload's pods: RDMA pools it can use, a shared memory its pods can hold, and several GPUs per pod
on shared cards."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import RDMA_LABEL, Cluster, Workload
from policyc.pods import pod_resources, rdma_resources, reachable_pools, usages


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    for w in cluster.workloads:
        if w.rdma:
            resources = rdma_resources(cluster, w)
            if not resources and cluster.complete:
                yield _without_rdma_pool(cluster, w)
            elif len(resources) > 1:
                yield diag(
                    "rdma-resources-differ",
                    f"the pools workload '{w.name}' may use advertise RDMA as {listing(resources)}: its pods can "
                    "request only one of them",
                    (*w.path, "rdma"),
                    hint="name the RDMA resource alike on those pools, or keep the workload to one of them with "
                    "nodeSelector",
                )
        shared = [p for p in reachable_pools(cluster, w) if p.sharing is not None]
        if w.gpus > 1 and shared:
            each = [f"{p.name} ({p.sharing[0]}, {p.sharing[1]} ways)" for p in shared]  # type: ignore[index]
            yield diag(
                "several-shared-gpus-per-pod",
                f"workload '{w.name}' asks for {w.gpus} GPUs per pod, and pool{'s' if len(shared) > 1 else ''} "
                f"{listing(each)} share{'' if len(shared) > 1 else 's'} each card: its pods may get {w.gpus} shares "
                "of one card, no faster than one",
                (*w.path, "gpus"),
                hint="ask for 1 GPU on shared pools, or keep the workload to unshared pools (nodeSelector)",
            )
        if w.shm is not None:
            limit = pod_resources(cluster, w).limits.get("memory")
            if limit is not None and w.shm > limit:
                yield diag(
                    "shm-above-memory-limit",
                    f"workload '{w.name}' has a {w.shm} /dev/shm, more than its pods' memory limit of {limit}: what "
                    "it holds counts against that limit, and the pod would be killed before it is full",
                    (*w.path, "shm"),
                    hint=f"lower shm below {limit}, or raise the workload's memory",
                )


def _without_rdma_pool(cluster: Cluster, w: Workload) -> Diagnostic:
    """No pool the workload may use advertises an RDMA resource: those with `rdma: true` (a label, no device) are
    named apart from those without RDMA at all."""
    candidates = [p for p in cluster.pools if p.tier == w.tier.name and p.usage in usages(w)]
    flagged = [p.name for p in candidates if p.labels.get(RDMA_LABEL) == "true"]
    others = [p.name for p in candidates if p.name not in flagged]
    why = []
    if flagged:
        states = "states" if len(flagged) == 1 else "state"
        why.append(
            f"{listing(flagged)} {states} rdma: true, which labels the nodes but names no RDMA device to request"
        )
    if others:
        why.append(f"{listing(others)} {'has' if len(others) == 1 else 'have'} none")
    stanza = "rdma: {resource: rdma/<name>, perNode: <devices per node>}"
    if flagged:
        hint = f"on pool {listing(flagged)}, name the RDMA device plugin's resource instead of rdma: true: {stanza}"
    else:
        hint = f"give its pools the RDMA device plugin's resource: {stanza}"
    return diag(
        "rdma-without-rdma-pool",
        f"workload '{w.name}' asks for {w.rdma} RDMA device{'s' if w.rdma > 1 else ''} per pod, and no pool it may use "
        "advertises an RDMA resource" + (f" ({'; '.join(why)})" if why else ""),
        (*w.path, "rdma"),
        hint=f"{hint}; or remove rdma from the workload",
    )

"""The distributed-training shape of a workload: RDMA pools it can use, and a shared memory its pods can hold."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.contract import pod_resources, rdma_resources, usages
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    for w in cluster.workloads:
        if w.rdma:
            resources = rdma_resources(cluster, w)
            if not resources and cluster.complete:
                candidates = [p.name for p in cluster.pools if p.tier == w.tier.name and p.usage in usages(w)]
                yield diag(
                    "rdma-without-rdma-pool",
                    f"workload '{w.name}' asks for {w.rdma} RDMA device{'s' if w.rdma > 1 else ''} per pod, and no "
                    f"pool it may use has RDMA" + (f" ({listing(candidates)} have none)" if candidates else ""),
                    (*w.path, "rdma"),
                    hint="give its pools rdma: {resource: rdma/<name>, perNode: N}, or remove rdma from the workload",
                )
            elif len(resources) > 1:
                yield diag(
                    "rdma-resources-differ",
                    f"the pools workload '{w.name}' may use advertise RDMA as {listing(resources)}: its pods can "
                    "request only one of them",
                    (*w.path, "rdma"),
                    hint="name the RDMA resource alike on those pools, or keep the workload to one of them with "
                    "nodeSelector",
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

"""Whether each workload's pods fit: one pod on a node of a pool it can use, all its pods at once on those pools,
and all its pods within its queue's capability (the schedulers admit a gang only whole). Figures come from the
pods' contract (`policyc.pods`); the namespace quota is the proof's (it needs the pods as admission makes them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster, Pool, Tenant, Workload, queue_chain
from policyc.k8s.quantity import Quantity
from policyc.pods import (
    PodResources,
    accelerator,
    devices_per_node,
    pod_resources,
    pods_per_node,
    rdma_resources,
    reachable_pools,
)


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # a pool left out for its errors could be the one a workload fits on
        return
    tenants = {t.name: t for t in cluster.tenants}
    for w in cluster.workloads:
        pods, pools = pod_resources(cluster, w), reachable_pools(cluster, w)
        if pods.unsized or not pools:  # reported as workload-unsized, or by the placement proof
            continue
        per_pod = list(_pod_too_large(cluster, w, pods, pools))
        yield from per_pod
        if not per_pod:
            yield from _gang_on_pools(cluster, w, pods, pools)
        yield from _gang_in_queue(cluster, w, pods, tenants)


def _pod_too_large(cluster: Cluster, w: Workload, pods: PodResources, pools: Sequence[Pool]) -> Iterator[Diagnostic]:
    if any(pods_per_node(p, pods.requests) for p in pools):
        return
    gpu = accelerator(cluster, w)
    most = max(devices_per_node(p, gpu) for p in pools)
    if w.gpus > most:
        yield diag(
            "workload-without-gpus-per-node",
            f"workload '{w.name}' asks for {w.gpus} GPUs per pod, but nodes of the pools it can use have at most "
            f"{most} ({listing([f'{p.name} {devices_per_node(p, gpu)}' for p in pools])})",
            (*w.path, "gpus"),
            hint=f"use gpus: {most} or less per pod and more replicas",
        )
        return
    rdma = rdma_resources(cluster, w)
    if len(rdma) == 1:
        offered = [(p, p.allocatable.get(rdma[0], Quantity.from_value(0))) for p in pools]
        most_rdma = max(amount for _, amount in offered)
        if pods.requests[rdma[0]] > most_rdma:
            yield diag(
                "pod-larger-than-nodes",
                f"workload '{w.name}' asks for {w.rdma} RDMA devices ({rdma[0]}) per pod, but nodes of the pools it "
                f"can use offer at most {most_rdma} ({listing([f'{p.name} {amount}' for p, amount in offered])})",
                (*w.path, "rdma"),
                hint=f"lower rdma to at most {most_rdma} per pod, or set the pools' rdma.perNode to what their nodes "
                "offer if it is more",
            )
            return
    for resource in ("cpu", "memory"):
        stated = [p.allocatable[resource] for p in pools if resource in p.allocatable]
        asked = pods.requests[resource]
        if len(stated) < len(pools) or asked <= max(stated):
            continue
        largest = max(stated)
        at = (*w.path, resource) if getattr(w, resource) is not None else (*w.path, "name")
        yield diag(
            "pod-larger-than-nodes",
            f"workload '{w.name}' asks for {asked} {resource} per pod, but nodes of the pools it can use have at "
            f"most {largest} allocatable ({listing([f'{p.name} {p.allocatable[resource]}' for p in pools])})",
            at,
            hint=f"lower {resource} to at most {largest}, or use a tier with larger nodes",
        )
        return
    shown = [f"{p.name} {p.allocatable.get('cpu', '?')} cpu {p.allocatable.get('memory', '?')}" for p in pools]
    yield diag(
        "pod-larger-than-nodes",
        f"workload '{w.name}' asks for {pods.requests['cpu']} cpu and {pods.requests['memory']} memory per pod, "
        f"and no pool it can use has nodes with both ({listing(shown)})",
        (*w.path, "name"),
        hint="lower cpu or memory to what one pool's nodes have",
    )


def _pod_figures(cluster: Cluster, pods: PodResources) -> str:
    r = pods.requests
    gpus = [f"{r[gpu]} {gpu}, " for gpu in cluster.accelerators if gpu in r]
    return f"{''.join(gpus)}{r['cpu']} cpu, {r['memory']} memory"


def _pods_at(w: Workload) -> tuple:
    """Where the policy says how many pods the workload runs at once."""
    if w.autoscale:
        return (*w.autoscale.path, "max")
    return (*w.path, "elastic", "maxReplicas") if w.elastic else (*w.path, "replicas")


def pool_room(cluster: Cluster, w: Workload, pods: PodResources, pools: Sequence[Pool]) -> list[tuple[Pool, int]]:
    """Each pool with how many of the workload's pods one of its nodes holds (at most one if it runs one per node)."""
    room = [(p, pods_per_node(p, pods.requests)) for p in pools]
    return [(p, min(n, 1)) for p, n in room] if w.one_per_node else room


def _gang_on_pools(cluster: Cluster, w: Workload, pods: PodResources, pools: Sequence[Pool]) -> Iterator[Diagnostic]:
    fits = pool_room(cluster, w, pods, pools)
    room = sum(p.max_nodes * n for p, n in fits)
    if w.most_pods <= room:
        return
    parts = [f"{p.name} {_most(p)} x {n}" for p, n in fits]
    yield diag(
        "workload-exceeds-pools",
        f"workload '{w.name}' runs {w.most_pods} pods at once ({_pod_figures(cluster, pods)} each), but the pools "
        f"it can use hold at most {room} such pods ({listing(parts)})",
        _pods_at(w),
        hint=f"lower {_pods_at(w)[-1]} to at most {room}, or add nodes to those pools",
    )


def _most(p: Pool) -> str:
    """A pool's most nodes: '16 nodes', or 'up to 16 nodes' for a pool by size."""
    most = f"{p.max_nodes} node{'s' if p.max_nodes != 1 else ''}"
    return most if p.min_nodes == p.max_nodes else f"up to {most}"


@dataclass(frozen=True, slots=True, eq=False)
class QueueUse:
    """What all of a workload's pods take of one resource its queue (or the nearest ancestor) caps."""

    resource: str
    each: Quantity
    need: Quantity
    cap: Quantity
    capped_by: Tenant


def queue_use(w: Workload, pods: PodResources, tenants: dict[str, Tenant]) -> list[QueueUse]:
    chain = queue_chain(tenants[w.tenant], tenants)
    out = []
    for resource, each in pods.requests.items():
        capped = next((t for t in chain if resource in t.queue.capability), None)
        if capped is not None:
            out.append(QueueUse(resource, each, each * w.most_pods, capped.queue.capability[resource], capped))
    return out


def _gang_in_queue(
    cluster: Cluster, w: Workload, pods: PodResources, tenants: dict[str, Tenant]
) -> Iterator[Diagnostic]:
    for use in queue_use(w, pods, tenants):
        if use.need <= use.cap:
            continue
        capped, r = use.capped_by, use.resource
        whose = f"'{w.tenant}'" if capped.name == w.tenant else f"'{capped.name}' (an ancestor of '{w.tenant}')"
        yield diag(
            "workload-exceeds-queue",
            f"workload '{w.name}' needs {w.most_pods} pods x {use.each} {r} = {use.need} {r} at once, but "
            f"queue {whose} caps {r} at {use.cap}: the scheduler never starts it",
            _pods_at(w),
            hint=f"raise tenant '{capped.name}' queue.capability.{cluster.tenant_key(capped.name, r)} to at least "
            f"{use.need}, "
            f"or lower {_pods_at(w)[-1]}",
        )

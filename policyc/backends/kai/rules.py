"""KAI's rules on a policy: queue resources and fields KAI queues cannot express, queue names KAI's output or its
Helm chart already use, jobs only in leaf queues, non-preemptible workloads beyond their queue's quota, and a GPU
resource KAI's queues do not count."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.backends.kai import backend as kai
from policyc.checks import queue_tree, queues
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster, Workload
from policyc.k8s.quantity import Quantity
from policyc.pods import pod_resources

KAI_DEFAULT_CLASSES = {"Deployment": ("inference", 125)}
"""KAI's priority class for a workload whose pods name none (when the cluster has no globalDefault class), by
kind; every other kind gets `OTHER_DEFAULT_CLASS`. Classes KAI's Helm chart ships."""
OTHER_DEFAULT_CLASS = ("train", 50)


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _queue_resources(cluster)
    yield from _queue_fields(cluster)
    yield from _queue_names(cluster)
    yield from queue_tree.leaf_queues_only(cluster, "the KAI Scheduler")
    yield from _non_preemptible(cluster)
    yield from _gpu_resource(cluster)


def _queue_resources(cluster: Cluster) -> Iterator[Diagnostic]:
    known = [r for _, r in kai.kai_resources(cluster)]
    for t, field, resource, at in queues.unknown_queue_resources(cluster, known):
        yield diag(
            "resource-not-in-kai-queues",
            f"tenant '{t.name}' queue {field} names {resource}; KAI queues know only gpu ({kai.NVIDIA_GPU}), "
            "cpu and memory",
            at,
            hint=queues.UNKNOWN_RESOURCE_HINT,
        )


def _queue_fields(cluster: Cluster) -> Iterator[Diagnostic]:
    for t in cluster.tenants:
        q, base = t.queue, (*t.path, "queue")
        if not q.reclaimable:
            yield diag(
                "queue-field-ignored-by-kai",
                f"tenant '{t.name}' sets reclaimable: false; KAI queues have no such field: KAI reclaims from any "
                "queue what it uses beyond its fair share",
                (*base, "reclaimable"),
                hint="remove it; KAI never preempts work of priority 100 or more (it runs it only within the "
                "queue's quota), and reclaims from queues of higher queue.priority last",
            )
        differing = [cluster.policy_key(r) for r in queues.deserved_apart(q)]
        if differing:
            yield diag(
                "queue-field-ignored-by-kai",
                f"tenant '{t.name}' sets a deserved share other than its guarantee ({', '.join(differing)}); with "
                "KAI the guarantee is the queue's quota, its deserved share",
                (*base, "deserved"),
                hint="remove deserved; queue.weight (KAI's overQuotaWeight) shares what is left beyond the quotas",
            )


def _queue_names(cluster: Cluster) -> Iterator[Diagnostic]:
    parent = kai.parent_queue(cluster)
    if parent in kai.HELM_QUEUES:
        yield diag(
            "kai-queue-name-taken",
            f"the policy's parent queue is named after the policy, '{parent}', a queue KAI's Helm chart creates "
            "and keeps",
            ("metadata", "name"),
            hint="give the policy another name",
        )
    for t in cluster.tenants:
        if t.name == parent:
            yield diag(
                "kai-queue-name-taken",
                f"tenant '{t.name}' would own the queue '{t.name}', the parent queue of every tenant, which is named "
                "after the policy",
                (*t.path, "name"),
                hint="give the tenant another name, or the policy (metadata.name)",
            )
        elif t.name in kai.HELM_QUEUES:
            yield diag(
                "kai-queue-name-taken",
                f"tenant '{t.name}' would own the queue '{t.name}', which KAI's Helm chart creates and keeps (it "
                "takes the pods that name no queue)",
                (*t.path, "name"),
                hint="give the tenant another name",
            )


def priority(cluster: Cluster, w: Workload) -> tuple[int, str]:
    """The priority KAI gives the workload, and where it comes from (for messages): its class (the policy's
    globalDefault class when it names none, which admission gives its pods); without either, KAI's default class for
    its kind."""
    classes = {c.name: c for c in cluster.priority_classes}
    if w.priority_class in classes:
        return classes[w.priority_class].value, f"priority class '{w.priority_class}'"
    name, value = KAI_DEFAULT_CLASSES.get(w.kind, OTHER_DEFAULT_CLASS)
    return value, f"KAI's default class for a {w.kind}, '{name}'"


def _non_preemptible(cluster: Cluster) -> Iterator[Diagnostic]:
    """KAI runs work of priority 100 or more as non-preemptible, and such work only within its queue's quota: a
    workload whose pods together need more than the quota never runs whole."""
    tenants = {t.name: t for t in cluster.tenants}
    for w in cluster.workloads:
        value, source = priority(cluster, w)
        tenant = tenants.get(w.tenant)
        if value < kai.DEFAULT_PRIORITY or tenant is None:
            continue
        requests = pod_resources(cluster, w).requests
        over: list[tuple[str, Quantity, Quantity]] = []
        for _, resource in kai.kai_resources(cluster):
            each = requests.get(resource)
            if each is None:  # unsized: reported by the shared checks
                continue
            need, quota = each * w.most_pods, tenant.queue.guarantee.get(resource, Quantity.from_value(0))
            if need > quota:
                over.append((resource, need, quota))
        if not over:
            continue
        pods = "its pod needs {}" if w.most_pods == 1 else f"its {w.most_pods} pods need {{}} at once"
        yield diag(
            "non-preemptible-above-quota",
            f"workload '{w.name}' has priority {value} ({source}), so KAI runs it as non-preemptible, only within "
            f"the quota of queue '{w.tenant}'; {pods.format(listing([f'{n} {r}' for r, n, _ in over]))}, and the "
            f"quota is {listing([f'{q} {r}' for r, _, q in over])}",
            (*w.path, "priorityClass"),  # the workload itself when its class is the default
            hint=f"guarantee tenant '{w.tenant}' at least "
            f"{', '.join(f'{cluster.policy_key(r)}: {n}' for r, n, _ in over)} (queue.guarantee), or give the "
            "workload a priority class below 100 (KAI then runs it preemptible, beyond the quota too)",
        )


def _gpu_resource(cluster: Cluster) -> Iterator[Diagnostic]:
    """The policy's GPU resource, then each pool's accelerator resource, where KAI's queues do not count it."""
    for resource, at in cluster.accelerator_sources().items():
        if resource == kai.NVIDIA_GPU:
            continue
        yield diag(
            "gpu-resource-not-in-kai-queues",
            f"the GPU resource is {resource}; KAI queues count NVIDIA GPUs ({kai.NVIDIA_GPU}) as gpu, "
            "and cannot quota other extended resources (MIG devices included): their gpu quota and limit will "
            f"not bound {resource}",
            at,
            hint=f"use gpuResource: {kai.NVIDIA_GPU} with KAI, or quota the GPUs per namespace (tenants[].quota)"
            if at == ("spec", "gpuResource")
            else "KAI's queues do not hold this pool's accelerators: quota them per namespace (tenants[].quota)",
        )


CHECKS = (check,)
"""The rules face (`policyc.backends.interface.RulesFace`): run only for policies that select KAI."""

"""YuniKorn's rules on a policy: queue paths a pod's label can name, resources its queues cannot count, classes kept
from preemption, gangs' placeholders within their namespace's quota and their queues sorted fifo, queue fields
YuniKorn has no equivalent for, and jobs only in leaf queues. Last, the `queues.yaml` the backend would write goes
through the strict model of YuniKorn's parser (`queues_conf`)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.backends.yunikorn import backend as yunikorn
from policyc.backends.yunikorn import queues_conf, settings
from policyc.checks import queue_tree, queues
from policyc.checks.autoscaling import counting_quotas, quota_field
from policyc.diagnostics import Diagnostic, diag, did_you_mean, listing
from policyc.gpu import dra
from policyc.ir import Cluster
from policyc.k8s.names import LABEL_VALUE_MAX_LENGTH
from policyc.pods import contract_pod, pod_resources
from policyc.proof.admitted import quota_use

_BUG = "this is a policyc bug; please report it"


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _queue_paths(cluster)
    yield from _resource_names(cluster)
    yield from _queue_fields(cluster)
    yield from _non_preemptible_classes(cluster)
    yield from _placeholders_within_quota(cluster)
    yield from _gangs_in_fair_queues(cluster)
    yield from queue_tree.leaf_queues_only(cluster, "Apache YuniKorn")


def _queue_paths(cluster: Cluster) -> Iterator[Diagnostic]:
    for t in cluster.tenants:
        path = yunikorn.queue_path(cluster, t.name)
        if len(path) > LABEL_VALUE_MAX_LENGTH:
            yield diag(
                "queue-path-too-long",
                f"tenant '{t.name}' would own the queue {path}, {len(path)} characters: its pods name it in the label "
                f"{yunikorn.QUEUE_KEY}, whose value has at most {LABEL_VALUE_MAX_LENGTH}",
                (*t.path, "name"),
                hint=f"shorten the tenant's name, or its parents' (queue.parent), by "
                f"{len(path) - LABEL_VALUE_MAX_LENGTH} characters",
            )


def _resource_names(cluster: Cluster) -> Iterator[Diagnostic]:
    """YuniKorn's queues count what pods request; a resource no container requests is bounded by no queue."""
    for t in cluster.tenants:
        for field in ("guarantee", "capability"):
            for resource in getattr(t.queue, field):
                if resource in yunikorn.NOT_REQUESTED:
                    yield diag(
                        "resource-name",
                        f"tenant '{t.name}' queue {field} names {resource}, which no container requests "
                        f"(PersistentVolumeClaims do): YuniKorn's queues count what pods request, so it bounds nothing",
                        (*t.path, "queue", field, resource),
                        hint=queues.UNKNOWN_RESOURCE_HINT,
                    )


def _queue_fields(cluster: Cluster) -> Iterator[Diagnostic]:
    for t in cluster.tenants:
        q, base = t.queue, (*t.path, "queue")
        if q.weight != 1:
            yield diag(
                "queue-field-ignored-by-yunikorn",
                f"tenant '{t.name}' sets weight {q.weight}; YuniKorn queues have no weight: a parent shares among "
                "its children by their usage relative to their guarantee",
                (*base, "weight"),
                hint="remove it; give the queue a larger guarantee for a larger share",
            )
        differing = [cluster.policy_key(r) for r in queues.deserved_apart(q)]
        if differing:
            yield diag(
                "queue-field-ignored-by-yunikorn",
                f"tenant '{t.name}' sets a deserved share other than its guarantee ({', '.join(differing)}); "
                "YuniKorn knows only the guarantee and the max",
                (*base, "deserved"),
                hint="remove deserved",
            )


def _non_preemptible_classes(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # the class named may be one the parse left out for its own error, reported already
        return
    classes = [c.name for c in cluster.priority_classes]
    for i, name in enumerate(cluster.scheduler.non_preemptible_classes):
        if name not in classes:
            yield diag(
                "non-preemptible-class-unknown",
                f"nonPreemptibleClasses names '{name}', which is not among the policy's priority classes"
                + (f" ({', '.join(classes)})" if classes else ""),
                ("spec", "scheduler", "nonPreemptibleClasses", i),
                hint=(did_you_mean(name, classes, list_few=False) or "name one of spec.priorityClasses, or remove it")
                if classes
                else "remove it",
            )


PLACEHOLDER_RULES = {
    "Hard": ("placeholders-exceed-quota", "the gang fails when its placeholders time out (gangStyle Hard)"),
    "Soft": (
        "placeholders-exceed-quota-soft",
        "when its placeholders time out the job runs without a gang, its pods placed one by one (gangStyle Soft)",
    ),
}
"""The gang style -> the rule of a gang whose placeholders do not fit, and what becomes of the gang."""


def _placeholders_within_quota(cluster: Cluster) -> Iterator[Diagnostic]:
    """YuniKorn creates a gang's placeholder pods in its namespace while the gang's own pods wait there: its
    ResourceQuotas count both. Placeholders the API server refuses never reserve the gang's room."""
    rule, outcome = PLACEHOLDER_RULES[cluster.scheduler.gang_style]
    tenants = {t.name: t for t in cluster.tenants}
    for w in cluster.workloads:
        tenant = tenants.get(w.tenant)
        if w.kind not in settings.GANG_KINDS or tenant is None or tenant.quota is None:
            continue
        resources = pod_resources(cluster, w)
        claimed = {r: int(resources.requests[r].value) for r in dra.claimed(resources.requests)}
        pods = [(w.most_pods, contract_pod(w, resources)), (w.gang, yunikorn.placeholder(cluster, w))]
        uses = quota_use(pods, counting_quotas(tenant, w.priority_class), claimed=[claimed, {}])
        over = [u for u in uses if not u.fits]
        if not over:
            continue
        first = over[0]
        raise_ = " and ".join(f"{'.'.join(quota_field(cluster, tenant.name, u))} to at least {u.need}" for u in over)
        yield diag(
            rule,
            f"workload '{w.name}' runs {w.most_pods} pods and YuniKorn creates {w.gang} placeholders for its gang "
            f"beside them, which take {first.need} {first.key} in namespace '{w.namespace}', but ResourceQuota "
            f"'{first.quota}' allows {first.hard}: the placeholders cannot all be created, and {outcome}",
            w.path,
            hint=f"raise tenant '{tenant.name}' {raise_}",
        )


def _gangs_in_fair_queues(cluster: Cluster) -> Iterator[Diagnostic]:
    """YuniKorn's gang scheduling guide makes FIFO application sorting in the queue its prerequisite."""
    if cluster.scheduler.application_sort == yunikorn.DEFAULT_SORT:
        return
    gangs = [w.name for w in cluster.workloads if w.kind in settings.GANG_KINDS]
    if gangs:
        yield diag(
            "gang-in-fair-queue",
            f"applicationSort is {cluster.scheduler.application_sort}, and workloads run as gangs ({listing(gangs)}): "
            "YuniKorn's gang scheduling needs its queues to sort applications fifo",
            ("spec", "scheduler", "applicationSort"),
            hint="remove applicationSort (fifo is the default)",
        )


def _generated(cluster: Cluster) -> Iterator[Diagnostic]:
    """The queues.yaml the backend would write, through the strict model and the core's rules."""
    for problem in queues_conf.schema_problems(yunikorn.queues_config(cluster)):
        yield diag("output-schema", f"the generated queues.yaml: {problem}", ("spec", "scheduler"), hint=_BUG)


CHECKS = (check, _generated)
"""The rules face (`policyc.backends.interface.RulesFace`): run only for policies that select YuniKorn."""

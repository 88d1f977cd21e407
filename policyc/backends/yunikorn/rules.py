"""YuniKorn's rules on a policy: queue paths a pod's label can name, resources its queues cannot count, classes kept
from preemption, queue fields YuniKorn has no equivalent for, and jobs only in leaf queues. Last, the `queues.yaml`
the backend would write goes through the strict model of YuniKorn's parser (`queues_conf`)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.backends.yunikorn import backend as yunikorn
from policyc.backends.yunikorn import queues_conf
from policyc.checks import queue_tree, queues
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.k8s.names import LABEL_VALUE_MAX_LENGTH

_BUG = "this is a policyc bug; please report it"


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    yield from _queue_paths(cluster)
    yield from _resource_names(cluster)
    yield from _queue_fields(cluster)
    yield from _non_preemptible_classes(cluster)
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
        differing = [cluster.policy_key(r) for r, amount in q.deserved_given.items() if q.guarantee.get(r) != amount]
        if differing:
            yield diag(
                "queue-field-ignored-by-yunikorn",
                f"tenant '{t.name}' sets a deserved share other than its guarantee ({', '.join(differing)}); "
                "YuniKorn knows only the guarantee and the max",
                (*base, "deserved"),
                hint="remove deserved",
            )


def _non_preemptible_classes(cluster: Cluster) -> Iterator[Diagnostic]:
    classes = [c.name for c in cluster.priority_classes]
    for i, name in enumerate(cluster.scheduler.non_preemptible_classes):
        if name not in classes:
            yield diag(
                "non-preemptible-class-unknown",
                f"nonPreemptibleClasses names '{name}', which is not among the policy's priority classes"
                + (f" ({', '.join(classes)})" if classes else ""),
                ("spec", "scheduler", "nonPreemptibleClasses", i),
                hint="name one of spec.priorityClasses, or remove it" if classes else "remove it",
            )


def _generated(cluster: Cluster) -> Iterator[Diagnostic]:
    """The queues.yaml the backend would write, through the strict model and the core's rules."""
    for problem in queues_conf.schema_problems(yunikorn.queues_config(cluster)):
        yield diag("output-schema", f"the generated queues.yaml: {problem}", ("spec", "scheduler"), hint=_BUG)


CHECKS = (check, _generated)
"""The rules face (`policyc.backends.interface.RulesFace`): run only for policies that select YuniKorn."""

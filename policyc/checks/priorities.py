"""PriorityClass rules the API server enforces (no 'system-' names, one default; user values at most 10^9 is the
policy model's own rule), tenants that may not use the default class, and quotas per class within the total."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.k8s.names import is_valid_label_value
from policyc.k8s.validation import SYSTEM_PRIORITY_CLASS_PREFIX


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    defaults = [c for c in cluster.priority_classes if c.global_default]
    for c in cluster.priority_classes:
        if c.name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
            yield diag(
                "reserved-priority-class-name",
                f"priority class '{c.name}' uses the reserved 'system-' prefix",
                (*c.path, "name"),
                hint=f"rename it, e.g. '{c.name.removeprefix(SYSTEM_PRIORITY_CLASS_PREFIX)}'",
            )
    yield from _scope_values(cluster)
    yield from _class_quotas(cluster)
    if defaults:
        default = min(defaults, key=lambda c: c.path).name
        for t in cluster.tenants:
            if default in t.forbidden_priority_classes:
                yield diag(
                    "forbidden-default-priority",
                    f"tenant '{t.name}' may not use '{default}', the default priority class, so its pods "
                    "without a priorityClassName will be refused",
                    (*t.path, "priorityClasses"),
                    hint=f"allow '{default}' or make sure every pod of the tenant names a priority class",
                )
    if len(defaults) > 1:
        first = min(defaults, key=lambda c: c.path)
        for c in defaults:
            if c is not first:
                yield diag(
                    "several-global-defaults",
                    f"priority classes '{first.name}' and '{c.name}' are both globalDefault",
                    (*c.path, "globalDefault"),
                    hint=f"at most one priority class may be the default: remove globalDefault: true here, or from "
                    f"'{first.name}'",
                )


def _scope_values(cluster: Cluster) -> Iterator[Diagnostic]:
    """Class names the tenants' priority quotas list (`policyc.backends.kubernetes`) must be label values: the
    server reads the scope as a label selector when a pod is created, and fails the create if it cannot."""
    if not cluster.tenants:
        return
    every = {c.name for c in cluster.priority_classes}
    listed = set().union(*(every if t.allowed_priority_classes is None else t.allowed_priority_classes
                           for t in cluster.tenants))  # fmt: skip
    for c in cluster.priority_classes:
        if c.name in listed and is_valid_label_value(c.name):
            yield diag(
                "priority-class-name-too-long-for-quota",
                f"priority class '{c.name[:40]}...' has a name of {len(c.name)} characters; tenants' quotas list "
                "it in a PriorityClass scope, which takes at most 63, and the API server would then fail every pod "
                "create in their namespaces",
                (*c.path, "name"),
                hint="give the class a name of at most 63 characters",
            )


def _class_quotas(cluster: Cluster) -> Iterator[Diagnostic]:
    """A quota for one priority class above the tenant's quota for all its pods promises what the total refuses."""
    for t in cluster.tenants:
        if t.quota is None:
            continue
        for cls, hard in t.quota.per_class.items():
            for key, amount in hard.items():
                total = t.quota.hard.get(key)
                if total is not None and amount > total:
                    resource = cluster.policy_key(key.removeprefix("requests."))
                    yield diag(
                        "priority-class-quota-above-total",
                        f"tenant '{t.name}' may request {amount} {resource} with priority class '{cls}', but only "
                        f"{total} with all its pods (quota.requests.{resource})",
                        (*t.path, "quota", "perPriorityClass", cls, resource),
                        hint=f"lower it to at most {total}, or raise quota.requests.{resource}",
                    )

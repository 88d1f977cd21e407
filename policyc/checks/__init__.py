"""Semantic checks over the resolved cluster: each module one concern, each check a function
``Cluster -> Iterable[Diagnostic]``. All checks run; all their findings are reported together."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from policyc.checks import (
    capacity,
    devices,
    kueue,
    limits,
    namespaces,
    priorities,
    queue_tree,
    queues,
    sizing,
    volcano_scheduler,
    workloads,
)
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster

Check = Callable[[Cluster], Iterable[Diagnostic]]

CHECKS: tuple[Check, ...] = (
    devices.check,
    namespaces.check,
    priorities.check,
    queues.check,
    limits.check,
    workloads.check,
    sizing.check,
    capacity.check,
)

BACKEND_CHECKS: dict[str, tuple[Check, ...]] = {
    "volcano": (queues.volcano_names, queue_tree.check, volcano_scheduler.check),
    "kueue": (kueue.check,),
}
"""Checks of what one scheduler backend accepts, run only when the policy compiles for it."""


def run_checks(cluster: Cluster) -> list[Diagnostic]:
    checks = (*CHECKS, *BACKEND_CHECKS.get(cluster.scheduler.backend, ()))
    return [d for check in checks for d in check(cluster)]

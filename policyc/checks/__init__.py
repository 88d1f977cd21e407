"""Semantic checks over the resolved cluster: each module one concern, each check a function
``Cluster -> Iterable[Diagnostic]``. All checks run; all their findings are reported together."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from policyc.checks import (
    capacity,
    devices,
    limits,
    namespaces,
    priorities,
    queues,
    sizing,
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


def _volcano() -> tuple[Check, ...]:
    from policyc.checks import queue_tree, volcano_scheduler

    return queues.volcano_names, queue_tree.check, volcano_scheduler.check


def _kueue() -> tuple[Check, ...]:
    from policyc.checks import kueue

    return (kueue.check,)


BACKEND_CHECKS: dict[str, Callable[[], tuple[Check, ...]]] = {"volcano": _volcano, "kueue": _kueue}
"""Checks of what one scheduler backend accepts, imported and run only when a policy compiles for it (the Kueue
ones load strict models of Kueue's and kube-scheduler's configuration: a tenth of a second)."""


def run_checks(cluster: Cluster) -> list[Diagnostic]:
    backend = BACKEND_CHECKS.get(cluster.scheduler.backend)
    checks = (*CHECKS, *(backend() if backend else ()))
    return [d for check in checks for d in check(cluster)]

"""Semantic checks over the resolved cluster: each module one concern, each check a function
``Cluster -> Iterable[Diagnostic]``. All checks run; all their findings are reported together."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from policyc.checks import limits, priorities, queues, workloads
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster

Check = Callable[[Cluster], Iterable[Diagnostic]]

CHECKS: tuple[Check, ...] = (
    priorities.check,
    queues.check,
    limits.check,
    workloads.check,
)


def run_checks(cluster: Cluster) -> list[Diagnostic]:
    return [d for check in CHECKS for d in check(cluster)]

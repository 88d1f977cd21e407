"""Semantic checks over the resolved cluster: each module one concern, each check a function
``Cluster -> Iterable[Diagnostic]``. All checks run; all their findings are reported together. A scheduler
backend's own checks live in its package and run only for policies that select it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from policyc.checks import (
    autoscaling,
    capacity,
    devices,
    limits,
    monitoring,
    namespaces,
    partitions,
    priorities,
    queue_tree,
    queues,
    quota_queue,
    sizing,
    slurm,
    training,
    workloads,
)
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster

Check = Callable[[Cluster], Iterable[Diagnostic]]

CHECKS: tuple[Check, ...] = (
    devices.check,
    partitions.check,
    namespaces.check,
    priorities.check,
    queues.check,
    queue_tree.check,
    limits.check,
    workloads.check,
    training.check,
    sizing.check,
    capacity.check,
    quota_queue.check,
    autoscaling.check,
    monitoring.check,
    slurm.check,
)


def run_checks(cluster: Cluster) -> list[Diagnostic]:
    from policyc.backends import SCHEDULERS, scheduler

    backend = cluster.scheduler.backend
    checks = (*CHECKS, *(scheduler(backend).checks() if backend in SCHEDULERS else ()))
    return [d for check in checks for d in check(cluster)]

"""Semantic checks over the resolved cluster: each module one concern, each check a function
``Cluster -> Iterable[Diagnostic]``. All checks run; all their findings are reported together. A scheduler
backend's own checks live in its package and run only for policies that select it. A few also read the policy as
written (`written.Written`): fields that have no effect where they stand, memory units as they were spelt, and the
label and taint keys a pool states (`label_domains`)."""

from __future__ import annotations

from collections.abc import Iterable

from policyc.backends.interface import Check
from policyc.checks import (
    autoscaling,
    cluster_capacity,
    devices,
    kubernetes_version,
    label_domains,
    limits,
    monitoring,
    namespaces,
    no_effect,
    partitions,
    priorities,
    queue_tree,
    queues,
    quota_queue,
    resource_names,
    sizing,
    slurm,
    training,
    workloads,
)
from policyc.checks.written import Written
from policyc.codes import Severity
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster

CHECKS: tuple[Check, ...] = (
    kubernetes_version.check,
    label_domains.domain,
    devices.check,
    partitions.check,
    namespaces.check,
    priorities.check,
    queues.check,
    queue_tree.check,
    resource_names.check,
    limits.check,
    workloads.check,
    training.check,
    sizing.check,
    cluster_capacity.check,
    quota_queue.check,
    autoscaling.check,
    monitoring.check,
    slurm.check,
)


def run_checks(cluster: Cluster, written: Written, backend_checks: Iterable[Check] = ()) -> list[Diagnostic]:
    """Every check of `cluster`, resolved from the policy `written`, and `backend_checks`: its scheduler backend's
    (`policyc.backends.interface.RulesFace`)."""
    checks = (*CHECKS, *backend_checks)
    # Whether a field has an effect depends on the items around it: not knowable while some were left out.
    idle = no_effect.check(cluster, written) if cluster.complete else ()
    as_written = (*label_domains.pool_keys(cluster, written), *limits.decimal_memory(cluster, written))
    found = [*(d for check in checks for d in check(cluster)), *idle, *as_written]
    # A value that is an error is the cause: what else is said of it follows from it.
    wrong = {d.path for d in found if d.severity is Severity.ERROR}
    return [d for d in found if d.severity is Severity.ERROR or d.path not in wrong]

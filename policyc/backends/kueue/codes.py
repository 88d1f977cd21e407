"""Kueue's diagnostic rules, part of the catalogue in `policyc.codes`."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        "PC703",
        "queue-field-ignored-by-kueue",
        Severity.WARNING,
        "A queue field Kueue has no equivalent for (priority, deserved); it is not compiled.",
    ),
    Rule(
        "PC704",
        "pool-without-allocatable",
        Severity.ERROR,
        "A pool without allocatable cpu or memory: Kueue needs every flavor's capacity to give quota.",
    ),
    Rule(
        "PC705",
        "nominal-quota-exceeds-pool",
        Severity.ERROR,
        "The nominal quotas of a flavor add up to more than its pool has.",
    ),
    Rule(
        "PC706",
        "flavor-admits-forbidden-pool",
        Severity.ERROR,
        "A queue offers a flavor that a workload with preferred placement must not use; Kueue would place it there.",
    ),
    Rule(
        "PC707",
        "kueue-limit",
        Severity.ERROR,
        "The policy needs more than Kueue allows: over 64 flavors in a queue, over 8 node labels, taints or "
        "tolerations on a flavor, or a flavor name over 253 characters.",
    ),
    Rule(
        "PC708",
        "gang-minimum-ignored-by-kueue",
        Severity.WARNING,
        "A PyTorchJob's gang minimum (minMember, elastic.minReplicas) below its replicas: Kueue admits a PyTorchJob "
        "only whole, so it waits until all its replicas fit.",
    ),
)

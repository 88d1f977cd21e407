"""Apache YuniKorn's diagnostic rules, part of the catalogue in `policyc.codes` (printed as yunikorn/<rule>)."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        None,
        "queue-path-too-long",
        Severity.ERROR,
        "A tenant's queue path (root.<parents>.<tenant>) is longer than 63 characters, which a label value cannot be: "
        "its pods could not name it.",
    ),
    Rule(
        None,
        "resource-name",
        Severity.ERROR,
        "A queue guarantee or capability of a resource no container requests (storage): YuniKorn's queues count what "
        "pods request, so it would bound nothing.",
    ),
    Rule(
        None,
        "non-preemptible-class-unknown",
        Severity.ERROR,
        "spec.scheduler.nonPreemptibleClasses names a priority class the policy does not define.",
    ),
    Rule(
        None,
        "placeholders-exceed-quota",
        Severity.ERROR,
        "A gang's pods and the placeholder pods YuniKorn creates beside them do not fit in their namespace's "
        "ResourceQuota: with gangStyle Hard, the gang fails when its placeholders time out.",
    ),
    Rule(
        None,
        "placeholders-exceed-quota-soft",
        Severity.WARNING,
        "A gang's pods and the placeholder pods YuniKorn creates beside them do not fit in their namespace's "
        "ResourceQuota: with gangStyle Soft, the job runs without a gang once its placeholders time out.",
    ),
    Rule(
        None,
        "gang-in-fair-queue",
        Severity.WARNING,
        "Queues sort applications fair while workloads run as gangs: YuniKorn's gang scheduling needs fifo.",
    ),
    Rule(
        None,
        "queue-field-ignored-by-yunikorn",
        Severity.WARNING,
        "A queue field YuniKorn has no equivalent for (weight, a deserved share other than the guarantee); it is "
        "not compiled.",
    ),
)

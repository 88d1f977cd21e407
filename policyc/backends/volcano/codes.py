"""Volcano's diagnostic rules, part of the catalogue in `policyc.codes`."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        "PC408",
        "reserved-queue-name",
        Severity.ERROR,
        "A tenant named like a queue Volcano creates itself ('root', 'default').",
    ),
    Rule("PC417", "queue-tree-too-deep", Severity.ERROR, "A queue nested deeper than Volcano allows (5 levels)."),
    Rule(
        "PC421", "hierarchy-needs-capacity", Severity.ERROR, "Queue parents are used without the capacity queue plugin."
    ),
    Rule(
        "PC423",
        "deserved-ignored",
        Severity.WARNING,
        "deserved is set with the proportion plugin, which ignores it (it only satisfies the webhook).",
    ),
    Rule(
        "PC424", "weight-ignored", Severity.WARNING, "A queue weight is set with the capacity plugin, which ignores it."
    ),
    Rule("PC601", "unknown-scheduler-action", Severity.ERROR, "An action Volcano does not have."),
    Rule("PC602", "unknown-scheduler-plugin", Severity.ERROR, "A plugin Volcano does not have."),
    Rule(
        "PC603",
        "unknown-plugin-option",
        Severity.ERROR,
        "A plugin option (enable... flag) Volcano does not read; it would be silently ignored.",
    ),
    Rule(
        "PC604",
        "unknown-plugin-argument",
        Severity.ERROR,
        "A plugin argument Volcano does not read; it would be silently ignored.",
    ),
    Rule(
        "PC605",
        "plugin-argument-type",
        Severity.ERROR,
        "A plugin argument of the wrong type: ignored by Volcano, or a crash-loop of the scheduler.",
    ),
    Rule("PC606", "conflicting-plugins", Severity.ERROR, "Plugins that must not be enabled together."),
    Rule("PC607", "duplicate-plugin", Severity.ERROR, "A plugin configured twice."),
    Rule(
        "PC608",
        "missing-scheduler-action",
        Severity.WARNING,
        "An action the policy relies on (reclaim for guarantees, enqueue) is not enabled.",
    ),
    Rule(
        "PC699",
        "preemption-held-by-queue",
        Severity.WARNING,
        "A tenant's higher priority class cannot displace its lower ones in a full queue: Volcano holds the job "
        "before enqueue, where preempt never sees it.",
    ),
)

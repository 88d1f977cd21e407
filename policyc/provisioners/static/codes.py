"""The static provisioner's diagnostic rules, part of the catalogue in `policyc.codes` (family `static`)."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        None,
        "not-set-by-nfd",
        Severity.WARNING,
        "A taint of a static pool that Node Feature Discovery refuses to set: the pool's NodeFeatureRule leaves it "
        "out, and a node that joins keeps its registration taint until nodes/apply.sh sets it.",
    ),
)

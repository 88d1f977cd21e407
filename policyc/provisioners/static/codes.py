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
    Rule(
        None,
        "domain-not-set-by-nfd",
        Severity.WARNING,
        "The policy's domain is one where Node Feature Discovery sets no label or taint (under kubernetes.io): the "
        "static pools' NodeFeatureRules leave out policyc's usage, tier and pool labels and its usage taints, and a "
        "node that joins keeps its registration taint until nodes/apply.sh runs.",
    ),
)

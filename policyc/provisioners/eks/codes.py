"""The EKS provisioner's diagnostic rules, part of the catalogue in `policyc.codes` (family `eks`)."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        None,
        "label-too-long",
        Severity.ERROR,
        "A label of an EKS pool whose key is longer than 63 characters in all, or whose value is empty: EKS refuses it "
        "on a node group.",
    ),
    Rule(None, "too-many-taints", Severity.ERROR, "An EKS pool with more than 50 taints: EKS refuses the node group."),
)

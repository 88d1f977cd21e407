"""The GKE provisioner's diagnostic rules, part of the catalogue in `policyc.codes` (family `gke`)."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        None,
        "reserved-label",
        Severity.ERROR,
        "A label of a GKE pool under kubernetes.io/ or k8s.io/, which GKE reserves for node-pool labels.",
    ),
)

"""The AKS provisioner's diagnostic rules, part of the catalogue in `policyc.codes` (family `aks`): none yet (the
reference sheet policyc's AKS facts come from states no limit of its own on node-pool labels or taints)."""

from __future__ import annotations

from policyc.codes import Rule

RULES: tuple[Rule, ...] = ()

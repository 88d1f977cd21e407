"""The nfd provisioner's diagnostic rules, part of the catalogue in `policyc.codes` (family `nfd`): what Node Feature
Discovery's master refuses though its CRD accepts it, and matches that would give a node two pools."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(None, "pci-id-form", Severity.ERROR,
         "A PCI vendor, device or class ID that is not 4 lower-case hex digits, as NFD reports them: it matches no "
         "node."),
    Rule(None, "hardware-unstated", Severity.ERROR,
         "A pool matched by hardware with nothing to match: no PCI vendor (stated or known for its GPU vendor) and no "
         "further term."),
    Rule(None, "feature-form", Severity.ERROR,
         "A further match term whose feature is not <domain>.<feature>: nfd-master refuses the rule."),
    Rule(None, "expression-values", Severity.ERROR,
         "A match expression with values its operator does not take (none for Exists, one integer for Gt, ...): "
         "nfd-master refuses the rule."),
    Rule(None, "label-nfd-refuses", Severity.ERROR,
         "A label of a pool matched by hardware that NFD does not set (under kubernetes.io, or without a prefix): no "
         "node of the pool would ever have it."),
    Rule(None, "taint-nfd-refuses", Severity.ERROR,
         "A taint of a pool matched by hardware that NFD does not set: a node of the pool keeps its registration "
         "taint for ever."),
    Rule(None, "domain-nfd-refuses", Severity.ERROR,
         "The policy's domain is one where NFD sets no label or taint (under kubernetes.io): no node of a pool "
         "matched by hardware would carry policyc's labels, and each keeps its registration taint for ever."),
    Rule(None, "hardware-overlap", Severity.ERROR,
         "Two pools whose hardware matches nothing tells apart, or a pool matched by hardware whose rule the nodes of "
         "a pool of another provisioner match: a node would get the labels and taints of both."),
)  # fmt: skip

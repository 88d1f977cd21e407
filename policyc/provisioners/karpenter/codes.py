"""The Karpenter provisioner's diagnostic rules, part of the catalogue in `policyc.codes` (family `karpenter`)."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        None,
        "restricted-label",
        Severity.ERROR,
        "A label or requirement key of a Karpenter pool in a domain the policy's Karpenter version refuses "
        "(karpenter.sh, karpenter.k8s.aws, kubernetes.io/hostname; before 1.9 also kubernetes.io and k8s.io).",
    ),
    Rule(
        None,
        "too-many-labels",
        Severity.ERROR,
        "A Karpenter pool with more than 100 labels: its NodePool's template holds 100 at most.",
    ),
    Rule(
        None,
        "nodepool-name-too-long",
        Severity.ERROR,
        "A Karpenter pool whose NodePool name (policyc-<pool>) is longer than 63 characters: Karpenter labels each "
        "node with it (karpenter.sh/nodepool), and a label value holds 63.",
    ),
    Rule(
        None,
        "karpenter-taint",
        Severity.ERROR,
        "A taint of a Karpenter pool with a key Karpenter puts on nodes itself (karpenter.sh/disrupted, "
        "karpenter.sh/unregistered): Karpenter refuses it in a NodePool.",
    ),
    Rule(
        None,
        "ill-formed-requirement",
        Severity.ERROR,
        "A requirement Karpenter refuses: In or NotIn without values, Exists or DoesNotExist with values, Gt/Lt/Gte/"
        "Lte without exactly one non-negative integer, minValues above its values.",
    ),
    Rule(
        None,
        "requirement-value",
        Severity.ERROR,
        "A value of a Karpenter requirement (instance type, GPU name, zone, a requirement's values) that is not a "
        "label value: the API server stores it, Karpenter refuses the NodePool.",
    ),
    Rule(
        None,
        "no-instance-shape",
        Severity.ERROR,
        "A Karpenter pool that says neither its instance types nor (for NVIDIA or AMD GPUs) its GPU's name: Karpenter "
        "would make any instance for it.",
    ),
    Rule(
        None,
        "not-provisionable",
        Severity.ERROR,
        "A workload selects on a node label that no NodePool of its pools gives, nor Karpenter knows: Karpenter never "
        "makes a node for its pods.",
    ),
    Rule(
        None,
        "conflicting-requirement",
        Severity.ERROR,
        "A label of a Karpenter pool that its NodePool's requirements exclude (a zone, an instance type, a capacity "
        "type): Karpenter makes no node for it.",
    ),
    Rule(
        None,
        "minimum-not-kept",
        Severity.WARNING,
        "A Karpenter pool with a minimum (minNodes or count): Karpenter makes nodes only for pods that wait, so the "
        "pool may have none.",
    ),
    Rule(
        None,
        "enqueue-blocks-scale-up",
        Severity.WARNING,
        "The scheduler's enqueue action with Karpenter pools: a job whose gang the nodes that exist cannot hold is "
        "kept back with no pods, and Karpenter, which makes nodes for pods that wait, never makes its nodes.",
    ),
    Rule(
        None,
        "spot-training",
        Severity.WARNING,
        "A training or hybrid Karpenter pool on spot capacity: an interruption takes a node out of a running gang.",
    ),
)

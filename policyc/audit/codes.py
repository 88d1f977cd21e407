"""The rules of `policyc audit`'s findings, part of the catalogue in `policyc.codes` (family `audit`).

A finding is about an object of a running cluster (a node, a pod, an object of the build), located in the policy where
the expectation it breaks was declared."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        None,
        "node-labels",
        Severity.ERROR,
        "A node of a pool lacks one of the pool's labels, has another value, or carries a label under the policy's "
        "domain that its pool does not set.",
    ),
    Rule(
        None,
        "node-taints",
        Severity.ERROR,
        "A node of a pool (or of the control plane) lacks one of its taints, or carries a taint under the policy's "
        "domain that it should not.",
    ),
    Rule(
        None,
        "unmanaged-node",
        Severity.ERROR,
        "A GPU node (a GPU resource in its capacity, or GPU Feature Discovery labels) in no pool of the policy and "
        "not of the control plane: nothing keeps pods off it.",
    ),
    Rule(
        None,
        "node-shape",
        Severity.ERROR,
        "A node whose GPU count (capacity or allocatable of its pool's GPU resource, as the build counts MIG devices "
        "and time-slicing replicas) or GPU Feature Discovery product differs from its pool's declaration.",
    ),
    Rule(
        None,
        "node-missing",
        Severity.WARNING,
        "A node the policy names (in a pool, or of the control plane) that the cluster does not have (an error with "
        "--strict).",
    ),
    Rule(
        None,
        "object-missing",
        Severity.ERROR,
        "An object of the build (of what Argo CD syncs; never the templates) is absent from the cluster.",
    ),
    Rule(
        None,
        "object-changed",
        Severity.ERROR,
        "An object of the build differs on the cluster on a field the build sets, and not as its last "
        "`kubectl apply` left it: someone edited it.",
    ),
    Rule(
        None,
        "object-outdated",
        Severity.WARNING,
        "An object of the build differs on the cluster but is as its last `kubectl apply` left it: the cluster runs "
        "another build.",
    ),
    Rule(
        None,
        "object-stale",
        Severity.ERROR,
        "An object carrying policyc's ownership labels for the policy that the build does not have (workloads, which "
        "teams copy from the templates with their labels, excepted).",
    ),
    Rule(
        None,
        "pod-placement",
        Severity.ERROR,
        "A tenant's pod runs on a node of a pool its tenant is not granted, or of another usage than its workload's.",
    ),
    Rule(
        None,
        "pod-priority",
        Severity.ERROR,
        "A tenant's pod runs at a priority class its tenant is not granted.",
    ),
    Rule(
        None,
        "pod-contract",
        Severity.ERROR,
        "A tenant's running pod that its admission contract would refuse today for another reason (a foreign "
        "toleration, another scheduler or queue, spec.nodeName set by its creator).",
    ),
    Rule(
        None,
        "capacity-short",
        Severity.WARNING,
        "Queue guarantees the nodes the cluster has now cannot hold (the pools' nodes present, not those the policy "
        "declares).",
    ),
)

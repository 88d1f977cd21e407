"""The Cluster API provisioner's diagnostic rules, part of the catalogue in `policyc.codes` (family `clusterapi`)."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        None,
        "label-not-synced",
        Severity.ERROR,
        "A label of a Cluster API pool that Cluster API does not copy from a Machine to its Node: the nodes would "
        "never carry it.",
    ),
    Rule(
        None,
        "needs-newer-version",
        Severity.ERROR,
        "A setting of spec.provisioning.clusterapi that the stated Cluster API version does not have.",
    ),
    Rule(
        None,
        "invalid-sync-regex",
        Severity.ERROR,
        "An entry of spec.provisioning.clusterapi.additionalSyncMachineLabels that is not a regular expression.",
    ),
    Rule(
        None,
        "object-of-two-pools",
        Severity.ERROR,
        "Two Cluster API pools name one MachineDeployment or KubeadmConfigTemplate.",
    ),
    Rule(
        None,
        "reserved-taint",
        Severity.ERROR,
        "A taint of a Cluster API pool that Cluster API refuses on a worker Machine (with MachineTaintPropagation).",
    ),
)

"""The Cluster API provisioner's rules on a policy: every label of its pools is one Cluster API copies from a Machine
to its Node; the settings exist in the stated version; with MachineTaintPropagation, no taint Cluster API refuses on
a worker Machine."""

from __future__ import annotations

import re
from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster, Pool
from policyc.provisioners.clusterapi.backend import (
    ADDITIONAL_SYNC,
    LABEL_SYNC,
    NAME,
    TAINT_PROPAGATION,
    minor,
    names,
    synced,
)
from policyc.provisioners.node_labels import label_at
from policyc.tenancy.grant import own_taints

SETTINGS = ("spec", "provisioning", NAME)
RESERVED_TAINTS = (
    "node.cluster.x-k8s.io/uninitialized",
    "node.cluster.x-k8s.io/outdated-revision",
    "node-role.kubernetes.io/master",
    "node-role.kubernetes.io/control-plane",
)
RESERVED_TAINT_DOMAINS = ("node.kubernetes.io", "node.cloudprovider.kubernetes.io")
"""Taint keys Cluster API refuses on a worker Machine: these, and every key in these domains but
`node.kubernetes.io/out-of-service`."""


def _pools(cluster: Cluster) -> list[Pool]:
    return [p for p in cluster.pools if p.provisioning == NAME]


def _regexes(cluster: Cluster) -> list[str] | None:
    """The additional sync regexes where the version has them (`needs_newer_version` reports the others); None if
    one does not compile (`sync_regexes` reports it: what the manager syncs is then unknown)."""
    settings = cluster.provisioning[NAME]
    if minor(settings.version) < ADDITIONAL_SYNC:
        return []
    for regex in settings.additional_sync_machine_labels:
        try:
            re.compile(regex)
        except re.error:
            return None
    return settings.additional_sync_machine_labels


def label_not_synced(cluster: Cluster) -> Iterator[Diagnostic]:
    if minor(cluster.provisioning[NAME].version) < LABEL_SYNC:  # `needs_newer_version` says so
        return
    regexes = _regexes(cluster)
    if regexes is None:
        return
    domain_told = False  # the policy's domain is every pool's: said once
    for pool in _pools(cluster):
        for key in pool.labels:
            if synced(key, regexes):
                continue
            path, at_key = label_at(cluster, pool, key)
            if path == ("spec", "domain"):
                if domain_told:
                    continue
                domain_told = True
            yield _not_synced(cluster, pool, key, path, at_key)


def _not_synced(cluster: Cluster, pool: Pool, key: str, path: tuple, at_key: bool) -> Diagnostic:
    """The diagnostic of a label Cluster API does not sync: one under the policy's domain (said once, at the domain),
    one policyc derives from the pool (an NVIDIA GPU Operator's setting), or one of the pool's own."""
    domain = cluster.keys.domain
    if path == ("spec", "domain"):
        what = f"the labels under the policy's domain '{domain}' (such as '{key}')"
        instead = f"use the domain '{domain}.node-restriction.kubernetes.io' (a kubelet cannot set it on itself), or "
        regex = f"^{re.escape(domain)}/"
    elif path == pool.path:
        what, instead, regex = f"label '{key}' that policyc gives pool '{pool.name}'", "", f"^{re.escape(key)}$"
    else:
        what = f"label '{key}' of pool '{pool.name}'"
        own = f"example.com.node-restriction.kubernetes.io/{key.rpartition('/')[2]}"
        instead = f"use a key under node-restriction.kubernetes.io such as '{own}', or "
        regex = f"^{re.escape(key)}$"
    return diag(
        "label-not-synced",
        f"{what} would stay on the Machines: Cluster API copies to a Node only labels under node-role.kubernetes.io, "
        "node-restriction.kubernetes.io or node.cluster.x-k8s.io, and those its manager's "
        "--additional-sync-machine-labels match",
        path,
        at_key=at_key,
        hint=f"{instead}give the Cluster API manager (v1.10 and later) --additional-sync-machine-labels="
        f"'{regex}' and add '{regex}' to spec.provisioning.clusterapi.additionalSyncMachineLabels",
    )


def needs_newer_version(cluster: Cluster) -> Iterator[Diagnostic]:
    if not _pools(cluster):
        return
    settings = cluster.provisioning[NAME]
    version = minor(settings.version)
    wanted = (
        (LABEL_SYNC, "version", "syncs no label from Machines to Nodes", True),
        (ADDITIONAL_SYNC, "additionalSyncMachineLabels", "has no --additional-sync-machine-labels",
         bool(settings.additional_sync_machine_labels)),
        (TAINT_PROPAGATION, "machineTaintPropagation", "has no feature gate MachineTaintPropagation",
         settings.machine_taint_propagation),
    )  # fmt: skip
    for first, field, lacks, used in wanted:
        if used and version < first:
            since = ".".join(map(str, first))
            yield diag(
                "needs-newer-version",
                f"Cluster API {settings.version} {lacks}: it came in v{since}",
                (*SETTINGS, field),
                hint=f'upgrade Cluster API to v{since} or later and set version: "{since}"'
                if field == "version"
                else f'remove {field}, or upgrade Cluster API to v{since} or later and set version: "{since}"',
            )


def sync_regexes(cluster: Cluster) -> Iterator[Diagnostic]:
    if not _pools(cluster):
        return
    for i, regex in enumerate(cluster.provisioning[NAME].additional_sync_machine_labels):
        try:
            re.compile(regex)
        except re.error as e:
            yield diag(
                "invalid-sync-regex",
                f"'{regex}' is not a regular expression: {e}",
                (*SETTINGS, "additionalSyncMachineLabels", i),
                hint="write the regex the manager's --additional-sync-machine-labels is given, e.g. '^example\\.com/'",
            )


def reserved_taint(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.provisioning[NAME].machine_taint_propagation:
        return
    for pool in _pools(cluster):
        for t in own_taints(cluster, pool):
            domain = t.key.partition("/")[0]
            if t.key in RESERVED_TAINTS or (
                domain in RESERVED_TAINT_DOMAINS and t.key != "node.kubernetes.io/out-of-service"
            ):
                yield diag(
                    "reserved-taint",
                    f"taint '{t.key}' of pool '{pool.name}' is one Cluster API refuses on a worker Machine",
                    (*pool.path, "taints"),
                    hint=f"use a key of your own, e.g. 'example.org/{t.key.rpartition('/')[2]}', here and in the "
                    "tolerations of the workloads that run on the pool",
                )


OBJECTS = (("MachineDeployment", "machineDeployment", "machine_deployment"),
           ("KubeadmConfigTemplate", "kubeadmConfigTemplate", "kubeadm_config_template"))  # fmt: skip
"""The objects a pool's fragments go into: (kind, its field in the pool's block, the field's name in the model)."""


def object_of_two_pools(cluster: Cluster) -> Iterator[Diagnostic]:
    """No two pools name one MachineDeployment or KubeadmConfigTemplate: its Machines would carry one pool's labels
    and taints, and the fragments of both would be merged into it."""
    seen: dict[tuple[str, str], str] = {}
    for pool in _pools(cluster):
        own = pool.provisioning_settings
        for (kind, field, attribute), name in zip(OBJECTS, names(pool), strict=True):
            other = seen.setdefault((kind, name), pool.name)
            if other == pool.name:
                continue
            stated = own is not None and getattr(own, attribute) is not None
            yield diag(
                "object-of-two-pools",
                f"pool '{pool.name}' and pool '{other}' both have {kind} '{name}': its Machines can carry the "
                "labels and taints of one pool only",
                (*pool.path, NAME, field) if stated else (*pool.path, "name"),
                hint=f"give pool '{pool.name}' a {kind} of its own (clusterapi: {{{field}: <name>}})",
            )
            break


CHECKS = (label_not_synced, needs_newer_version, sync_regexes, reserved_taint, object_of_two_pools)

"""The GKE provisioner's rules on a policy: no label of its pools under the prefixes GKE reserves."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.provisioners.gke.backend import NAME
from policyc.provisioners.node_labels import kubelet_labels, label_at

RESERVED_PREFIXES = ("kubernetes.io/", "k8s.io/")


def reserved_label(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in cluster.pools:
        if pool.provisioning != NAME:
            continue
        for key in pool.labels:
            prefix = next((p for p in RESERVED_PREFIXES if key.startswith(p)), None)
            if prefix is not None:
                path, at_key = label_at(cluster, pool, key)
                yield diag(
                    "reserved-label",
                    f"label '{key}' of GKE pool '{pool.name}' is under '{prefix}', which GKE reserves: it refuses "
                    "such node-pool labels",
                    path,
                    at_key=at_key,
                    hint=f"use a key with a prefix of your own, e.g. 'example.org/{key.rpartition('/')[2]}'",
                )


def kubelet_refused(cluster: Cluster) -> Iterator[Diagnostic]:
    return kubelet_labels(cluster, NAME, "GKE", RESERVED_PREFIXES)


CHECKS = (
    kubelet_refused,
    reserved_label,
)

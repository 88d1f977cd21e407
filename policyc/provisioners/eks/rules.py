"""The EKS provisioner's rules on a policy: its node groups' limits on labels and taints."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.provisioners.eks.backend import NAME
from policyc.provisioners.node_labels import kubelet_labels, label_at

LONGEST = 63
"""A label's key, prefix included, and its value: 1 to 63 characters."""
MOST_TAINTS = 50


def label_too_long(cluster: Cluster) -> Iterator[Diagnostic]:
    told: set[str] = set()
    for pool in cluster.pools:
        if pool.provisioning != NAME:
            continue
        for key, value in pool.labels.items():
            path, at_key = label_at(cluster, pool, key)
            if len(key) > LONGEST and key not in told:
                told.add(key)  # a key under the policy's domain is every pool's: said once
                yield diag(
                    "label-too-long",
                    f"label key '{key}' of EKS pool '{pool.name}' has {len(key)} characters: EKS takes at most "
                    f"{LONGEST}, its prefix included",
                    path,
                    at_key=at_key,
                    hint="use a shorter domain (spec.domain)" if path == ("spec", "domain") else "use a shorter key",
                )
            if not value:
                yield diag(
                    "label-too-long",
                    f"label '{key}' of EKS pool '{pool.name}' has an empty value: EKS takes 1 to {LONGEST} characters",
                    path,
                    at_key=at_key,
                    hint="give it a value, e.g. 'true'",
                )


def too_many_taints(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in cluster.pools:
        if pool.provisioning == NAME and len(pool.taints) > MOST_TAINTS:
            yield diag(
                "too-many-taints",
                f"EKS pool '{pool.name}' has {len(pool.taints)} taints, policyc's included: EKS takes at most "
                f"{MOST_TAINTS} on a node group",
                (*pool.path, "taints"),
                hint=f"remove {len(pool.taints) - MOST_TAINTS} of its taints",
            )


def kubelet_refused(cluster: Cluster) -> Iterator[Diagnostic]:
    return kubelet_labels(cluster, NAME, "EKS")


CHECKS = (kubelet_refused, label_too_long, too_many_taints)

"""The AKS provisioner's rules on a policy: the labels its pools' kubelets refuse (the shared checks apply too)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster
from policyc.provisioners.aks.backend import NAME
from policyc.provisioners.node_labels import kubelet_labels


def kubelet_refused(cluster: Cluster) -> Iterator[Diagnostic]:
    return kubelet_labels(cluster, NAME, "AKS")


CHECKS = (kubelet_refused,)

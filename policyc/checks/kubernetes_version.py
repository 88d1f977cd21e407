"""The Kubernetes version a policy names must be one whose API schemas the output is verified against
(`policyc.proof.schemas`)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.proof.schemas import supported_kubernetes_versions


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    supported = supported_kubernetes_versions()
    version = cluster.kubernetes_version
    if supported and version not in supported:
        yield diag(
            "unsupported-version",
            f"kubernetesVersion {version} has no API schemas to verify the output against",
            ("spec", "kubernetesVersion"),
            hint=f"supported versions are {supported[0]} to {supported[-1]}",
        )

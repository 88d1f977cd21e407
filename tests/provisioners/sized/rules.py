"""The sized provisioner's checks."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster


def instance_type(cluster: Cluster) -> Iterator[Diagnostic]:
    for p in cluster.pools:
        if p.provisioning == "sized" and (
            p.provisioning_settings is None or p.provisioning_settings.instance_type is None
        ):
            yield diag("sized-without-instance-type", f"pool '{p.name}' names no instance type", p.path,
                       hint="add sized: {instanceType: <type>}")  # fmt: skip


CHECKS = (instance_type,)

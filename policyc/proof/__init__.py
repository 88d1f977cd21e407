"""The proof: what the emitted objects do on a cluster, before anything is written.

- `admission`: every pod of every workload template is admitted in its namespace (LimitRange, Pod validation,
  Priority, ResourceQuota), one by one and all of them together;
- `placement`: where those pods can land, by kube-scheduler's filters, against every pool and the control plane;
- `node_agents`: the DaemonSets the GPU nodes need (device plugin ...) tolerate every taint of those nodes.
"""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster
from policyc.proof import admission, node_agents, placement


def prove(cluster: Cluster, artifacts: list[Artifact]) -> list[Diagnostic]:
    templates = placement.workload_templates(artifacts)
    return [
        *admission.check(cluster, artifacts, templates),
        *placement.prove(cluster, artifacts),
        *node_agents.check(cluster),
    ]

"""The proof: what the emitted objects do on a cluster, before anything is written.

- `schemas`: every object passes the schema the API server applies to its kind (the pipeline runs it first);

- `admitted`: every pod of every workload template is admitted in its namespace (LimitRange, Pod validation,
  Priority, ResourceQuota), one by one and all of them together;
- `placement`: where those pods can land, by kube-scheduler's filters, against every pool and the control plane;
- `node_agents`: the DaemonSets the GPU nodes need (device plugin ...) tolerate every taint of those nodes.

Each tenant's admission policies are proven too, by `policyc.tenancy.proof`, once these find no error.
"""

from __future__ import annotations

from collections.abc import Mapping

from policyc.artifacts import Artifact
from policyc.backends.workloads import Kind
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster
from policyc.proof import admitted, node_agents, placement


def prove(cluster: Cluster, artifacts: list[Artifact], kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    """What the emitted objects do on a cluster; `kinds` are the workload kinds of the cluster's scheduler backend,
    whose templates are among `artifacts`."""
    templates = placement.workload_templates(artifacts)
    return [
        *admitted.check(cluster, artifacts, templates, kinds),
        *placement.prove(cluster, artifacts, kinds),
        *node_agents.check(cluster),
    ]

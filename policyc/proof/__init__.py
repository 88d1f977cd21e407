"""The proof: what the emitted objects do on a cluster, before anything is written.

- `admission`: every pod of every workload template is admitted in its namespace (LimitRange, Pod validation,
  Priority, ResourceQuota), one by one and all of them together;
- `placement`: where those pods can land, by kube-scheduler's filters, against every pool and the control plane;
- `node_agents`: the DaemonSets the GPU nodes need (device plugin ...) tolerate every taint of those nodes;
- `tenancy`: each tenant's admission policy admits its templates and refuses pods that break its contract.
"""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.codes import Severity
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster
from policyc.proof import admission, node_agents, placement, tenancy


def prove(cluster: Cluster, artifacts: list[Artifact]) -> list[Diagnostic]:
    templates = placement.workload_templates(artifacts)
    out = [
        *admission.check(cluster, artifacts, templates),
        *placement.prove(cluster, artifacts),
        *node_agents.check(cluster),
    ]
    # A tenancy proof failure is a policyc bug; on a policy already found wrong (a template refused for its priority
    # class, say) it would only repeat that finding as one.
    if not any(d.severity is Severity.ERROR for d in out):
        out += tenancy.check(cluster, artifacts)
    return out

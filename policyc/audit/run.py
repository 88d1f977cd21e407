"""`policyc audit`: a running cluster against what its policy builds and proves, read-only.

The findings are diagnostics (`policyc.diagnostics`) of the rules of `policyc.audit.codes`, each naming the cluster's
object it is about (`Diagnostic.subject`) and located in the policy where the expectation it breaks was declared, so
that every output format renders them as it renders the compiler's."""

from __future__ import annotations

from policyc.audit import applied, guarantees, nodes
from policyc.audit.build import Build, identity
from policyc.audit.pods import Judge
from policyc.backends.interface import SchedulerBackend
from policyc.cluster.source import NODE, POD, ClusterSource
from policyc.diagnostics import Report
from policyc.ir import Cluster


def audit(
    cluster: Cluster, backend: SchedulerBackend, build: Build, source: ClusterSource, report: Report, *, strict: bool
) -> Report:
    """Every finding on the cluster `source` reads, added to `report` (the policy's, which locates them)."""
    present = [nodes.Node.of(obj) for obj in source.objects(NODE, "v1")]
    pools = nodes.pool_of(cluster, present)
    report.extend(nodes.check(cluster, present, pools, strict))
    seen = {}
    for kind, api_version in build.kinds():
        for obj in source.objects(kind, api_version):
            seen[identity(obj)] = obj
    report.extend(applied.check(build, source, cluster, seen))
    report.extend(Judge(cluster, backend, pools).check(source.objects(POD, "v1")))
    report.extend(guarantees.check(cluster, (n.name for n in present), pools))
    return report

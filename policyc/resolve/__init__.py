"""Resolve a parsed policy into the `Cluster` IR: expand node ranges, resolve references, apply defaults.

One module per section of the spec, each a set of functions of the shared `context.Context` (the policy, the
diagnostics, the one way a named reference is resolved): `nodes` (tiers, pools and the control plane; a pool's
accelerators in `pool_gpus`), `tenants` (priority classes, tenants, queues, quotas), `workloads`, `operations`
(Slurm, GPU alerts, KEDA, node agents) and `admission_modes`; `resource_maps` reads 'gpu' in a resource map.

Every broken reference, duplicate name and unexpandable node range is reported here, with a hint. An item whose
references do not resolve is left out of the IR; the caller stops after the checks if any error was reported, so
backends never see a half-resolved cluster. Checks of the resolved cluster that leave nothing out are in
`policyc.checks`.
"""

from __future__ import annotations

import os

from policyc import ir
from policyc.codes import Severity
from policyc.diagnostics import Diagnostic
from policyc.language.parse import Parsed
from policyc.resolve import admission_modes, nodes, operations, tenants, workloads
from policyc.resolve.context import Context


def resolve(parsed: Parsed, file: str) -> tuple[ir.Cluster | None, list[Diagnostic]]:
    """Build the cluster IR from a parsed policy; returns it (None if unusable) and the diagnostics."""
    ctx = Context(parsed)
    spec = ctx.spec
    if not nodes.within_node_limit(ctx):
        return None, ctx.out
    nodes.report_empty(ctx)
    claims = nodes.NodeClaims()
    tiers, dra_tiers = nodes.tiers(ctx)
    pools = nodes.pools(ctx, {p: t.name for t in tiers for p in t.products}, dra_tiers, claims)
    tiers = nodes.with_accelerators(ctx, tiers, pools, dra_tiers)
    control_plane = nodes.control_plane(ctx, claims)
    classes = tenants.priority_classes(ctx)
    class_names = {c.name for c in classes}
    tenants.team_grant(ctx, class_names, {t.name for t in tiers})
    by_name = tenants.tenants(ctx, class_names, tiers, pools)
    resolved = workloads.workloads(ctx, {t.name: t for t in tiers}, by_name, classes, pools)
    agents = operations.node_agents(ctx, pools)
    cluster = ir.Cluster(
        name=ctx.policy.metadata.name,
        source=os.path.basename(file),
        kubernetes_version=spec.kubernetes_version,
        keys=ctx.keys,
        gpu_resource=spec.gpu_resource,
        tiers=tuple(sorted(tiers, key=lambda t: t.name)),
        pools=tuple(sorted(pools, key=lambda p: p.name)),
        control_plane_nodes=tuple(sorted(control_plane)),
        priority_classes=tuple(sorted(classes, key=lambda c: c.name)),
        scheduler=spec.scheduler,
        tenants=tuple(sorted(by_name.values(), key=lambda t: t.name)),
        workloads=tuple(sorted(resolved, key=lambda w: w.name)),
        node_agents=tuple(sorted(agents, key=lambda a: (a.namespace, a.name))),
        mutating_admission_beta=admission_modes.mutating_beta(ctx),
        keda=operations.keda(ctx),
        monitoring=operations.monitoring(ctx, pools),
        slurm=operations.slurm_settings(ctx, pools, class_names),
        provisioning=nodes.provisioning_settings(ctx),
        # Totals over the cluster are only trustworthy when no item was left out for an error.
        complete=parsed.complete and not any(d.severity is Severity.ERROR for d in ctx.out),
    )
    return cluster, ctx.out

"""What runs beside the workloads: Slurm (`spec.slurm` and each pool's partition), the GPU alerts
(`spec.monitoring`), autoscaling's KEDA and the node agents (`spec.nodeAgents`, the GPU Operator's by default)."""

from __future__ import annotations

from policyc import ir
from policyc.diagnostics import Path, diag, where
from policyc.gpu import slurm
from policyc.gpu.accelerators import GPU_OPERATOR_NAMESPACE
from policyc.language.model import policy as m
from policyc.resolve.context import Context

GPU_OPERATOR_AGENTS = (
    "nvidia-driver-daemonset",
    "nvidia-container-toolkit-daemonset",
    "nvidia-device-plugin-daemonset",
    "gpu-feature-discovery",
    "nvidia-dcgm-exporter",
    "nvidia-mig-manager",
    "nvidia-operator-validator",
    "gpu-operator-node-feature-discovery-worker",
)
"""The GPU Operator's DaemonSets on GPU nodes (its operands, and the node-feature-discovery worker of its chart,
named after a Helm release called gpu-operator): the node agents of a policy that names none."""


def pool_partition(pool: m.NodePool, path: Path) -> slurm.PoolSlurm | None:
    """The pool's Slurm partition, if it names one."""
    given = pool.slurm
    if given is None:
        return None
    gpu = pool.gpu
    return slurm.PoolSlurm(
        partition=given.partition,
        default=given.default,
        max_time=slurm.minutes(given.max_time),
        priority_class=given.priority_class,
        shared=given.shared,
        gres_type=given.gres_type or (slurm.gres_type(gpu.product) if gpu else ""),
        cards=gpu.count if gpu else 0,
        path=path,
    )


def slurm_settings(ctx: Context, pools: list[ir.Pool], class_names: set[str]) -> slurm.SlurmSettings | None:
    """`spec.slurm` (its defaults when only pools name partitions); the priority classes the pools name must exist."""
    for p in pools:
        if p.slurm is not None and p.slurm.priority_class is not None:
            cls = p.slurm.priority_class
            ctx.reference(
                cls,
                class_names,
                "unknown-priority-class",
                f"Slurm partition '{p.slurm.partition}' of pool '{p.name}' names unknown priority class '{cls}'",
                (*p.slurm.path, "priorityClass"),
                among="priorityClasses",
                otherwise="add it to priorityClasses",
            )
    given = ctx.spec.slurm
    if given is None and not any(p.slurm for p in pools):
        return None
    path = ("spec", "slurm") if given else None
    given = given or m.SlurmSettings()
    return slurm.SlurmSettings(given.operator, given.namespace, given.controller, path)


def keda(ctx: Context) -> bool:
    """Whether KEDA scales the autoscaled workloads (`spec.autoscaling.keda`)."""
    return ctx.spec.autoscaling is not None and ctx.spec.autoscaling.keda


def monitoring(ctx: Context, pools: list[ir.Pool]) -> ir.Monitoring | None:
    """`spec.monitoring` with each pool's thresholds resolved; a pool's own thresholds for a pool the policy does not
    define are reported."""
    given = ctx.spec.monitoring
    if given is None:
        return None
    base = ("spec", "monitoring")
    names = {p.name for p in pools}
    for name in given.pools:
        ctx.reference(
            name,
            names,
            "unknown-pool",
            f"{where((*base, 'pools'))} names pool '{name}', which the policy does not define",
            (*base, "pools", name),
            among="nodePools",
            at_key=True,
        )
    rules = [
        ir.AlertRule(r.alert, r.expr, r.for_, r.keep_firing_for, dict(sorted(r.labels.items())),
                     dict(sorted(r.annotations.items())), (*base, "extraRules", i))
        for i, r in enumerate(given.extra_rules)
    ]  # fmt: skip
    return ir.Monitoring(
        namespace=given.namespace,
        labels=dict(sorted(given.labels.items())),
        for_=given.for_,
        node_label=given.node_label,
        counters=given.counters,
        extra_counters=dict(sorted(given.extra_counters.items())),
        rated_power=dict(sorted(given.rated_power.items())),
        thresholds={p.name: _alert_thresholds(given.thresholds, given.pools.get(p.name)) for p in pools},
        own_thresholds=tuple(sorted(name for name in given.pools if name in names)),
        extra_rules=tuple(rules),
        path=base,
    )


def _alert_thresholds(policy: m.AlertThresholds, pool: m.PoolAlertThresholds | None) -> ir.AlertThresholds:
    """The policy's thresholds with a pool's own over them; false (no alert) becomes None."""
    merged = {
        name: value if pool is None or getattr(pool, name) is None else getattr(pool, name) for name, value in policy
    }
    low = merged["low_utilisation"]
    return ir.AlertThresholds(
        gpu_temperature=merged["gpu_temperature"] or None,
        memory_temperature=merged["memory_temperature"] or None,
        memory_used=merged["memory_used"] or None,
        power=merged["power"] or None,
        low_utilisation=(low.below, low.for_) if low else None,
        xid_errors=merged["xid_errors"],
        ecc_or_remap=merged["ecc_or_remap"],
    )


def node_agents(ctx: Context, pools: list[ir.Pool]) -> list[ir.NodeAgent]:
    """The DaemonSets that must run on GPU nodes, with the pools they run on (every pool unless they name some)."""
    every = tuple(sorted(p.name for p in pools))
    if ctx.spec.node_agents is None:
        return [ir.NodeAgent(n, GPU_OPERATOR_NAMESPACE, every, None, ("spec",)) for n in GPU_OPERATOR_AGENTS]
    out, seen = [], set()
    for i, a in enumerate(ctx.spec.node_agents):
        path = ("spec", "nodeAgents", i)
        if (a.namespace, a.name) in seen:
            ctx.report(
                diag(
                    "duplicate-name",
                    f"node agent '{a.namespace}/{a.name}' is listed twice",
                    (*path, "name"),
                    hint="remove one of them",
                )
            )
            continue
        seen.add((a.namespace, a.name))
        for j, name in enumerate(a.pools or ()):
            ctx.reference(
                name, every, "unknown-pool", f"node agent '{a.name}' names unknown pool '{name}'", (*path, "pools", j),
                among="nodePools",
            )  # fmt: skip
        tolerations = None if a.tolerations is None else tuple(t.model_dump(exclude_none=True) for t in a.tolerations)
        mine = tuple(sorted(set(a.pools) & set(every))) if a.pools else every
        out.append(ir.NodeAgent(a.name, a.namespace, mine, tolerations, path))
    return out

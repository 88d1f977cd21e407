"""`spec.workloads`: each workload class with its tenant, namespace, tier and priority class resolved, and the
defaults filled in (kind by type and backend, image, the gang and elastic range, the autoscaler)."""

from __future__ import annotations

from dataclasses import dataclass

from policyc import ir
from policyc.diagnostics import diag
from policyc.gpu.accelerators import CPU_TIER
from policyc.language.model import policy as m
from policyc.registry import settings
from policyc.resolve.context import Context


@dataclass(frozen=True, slots=True)
class _Classes:
    """The policy's priority classes as workloads refer to them."""

    names: set[str]
    default: str | None
    """The globalDefault class, which a workload naming none runs with."""


@dataclass(frozen=True, slots=True)
class _Resolved:
    """A workload's references, resolved."""

    tenant: ir.Tenant
    tier: ir.Tier
    namespace: str
    priority_class: str | None


def workloads(
    ctx: Context,
    tiers: dict[str, ir.Tier],
    tenants: dict[str, ir.Tenant],
    classes: list[ir.PriorityClass],
    pools: list[ir.Pool],
) -> list[ir.Workload]:
    """The workloads whose references resolve; the others are reported and left out."""
    default_kinds = settings(ctx.spec.scheduler.backend).DEFAULT_KINDS
    known = _Classes({c.name for c in classes}, next((c.name for c in classes if c.global_default), None))
    out = []
    defaults: dict[str, str] = {}  # namespace -> its default class
    for i, w in ctx.unique("workloads", ctx.spec.workloads, "workload"):
        found = _references(ctx, w, i, tiers, tenants, known, pools)
        if found is not None:
            out.append(_workload(ctx, w, i, found, w.kind or default_kinds[w.type], defaults))
    return out


def _references(
    ctx: Context,
    w: m.Workload,
    i: int,
    tiers: dict[str, ir.Tier],
    tenants: dict[str, ir.Tenant],
    classes: _Classes,
    pools: list[ir.Pool],
) -> _Resolved | None:
    """The workload's tenant, tier, namespace and priority class; None, with each broken one reported, unless all
    resolve."""
    at = ctx.path("workloads", i)
    has_tenant = ctx.reference(w.tenant, tenants, "unknown-tenant",
                               f"workload '{w.name}' names unknown tenant '{w.tenant}'", (*at, "tenant"),
                               among="tenants")  # fmt: skip
    tier = _tier(ctx, w, i, tiers, pools)
    pc = w.priority_class
    has_class = pc is None or ctx.reference(pc, classes.names, "unknown-priority-class",
                                            f"workload '{w.name}' names unknown priority class '{pc}'",
                                            (*at, "priorityClass"), among="priorityClasses")  # fmt: skip
    if not has_tenant:
        return None
    tenant = tenants[w.tenant]
    namespace = w.namespace or tenant.namespaces[0]
    owned = ctx.reference(namespace, tenant.namespaces, "unknown-namespace",
                          f"workload '{w.name}' runs in '{namespace}', which tenant '{tenant.name}' does not own",
                          (*at, "namespace"))  # fmt: skip
    effective = pc if pc is not None else classes.default
    allowed = _class_allowed(ctx, w, i, tenant, effective, classes.names)
    if tier is None or not (has_class and owned and allowed):
        return None
    return _Resolved(tenant, tier, namespace, effective)


def _tier(ctx: Context, w: m.Workload, i: int, tiers: dict[str, ir.Tier], pools: list[ir.Pool]) -> ir.Tier | None:
    """The workload's GPU tier, or the CPU tier when it names none; None where either is incomplete or unknown."""
    if w.gpu_tier is None:
        return _cpu_tier(ctx, w, i, pools)
    if w.gpus is None:
        ctx.report(
            diag(
                "cpu-workload-incomplete",
                f"workload '{w.name}' names GPU tier '{w.gpu_tier}' but not how many GPUs per pod",
                ctx.path("workloads", i, "gpuTier"),
                hint="add gpus: <GPUs per pod>, or remove gpuTier for CPU-only work",
            )
        )
    known = ctx.reference(w.gpu_tier, tiers, "unknown-gpu-tier",
                          f"workload '{w.name}' names unknown GPU tier '{w.gpu_tier}'",
                          ctx.path("workloads", i, "gpuTier"), among="gpuTiers")  # fmt: skip
    return tiers[w.gpu_tier] if known and w.gpus is not None else None


def _cpu_tier(ctx: Context, w: m.Workload, i: int, pools: list[ir.Pool]) -> ir.Tier | None:
    """The CPU tier for a workload that names no GPU tier, if it is complete without one."""
    at = ctx.path("workloads", i)
    missing = [r for r in ("cpu", "memory") if getattr(w, r) is None]
    problem = (
        (f"asks for {w.gpus} GPUs per pod but names no gpuTier", (*at, "gpus"),
         "add gpuTier: <a tier of the policy>, or remove gpus for CPU-only work") if w.gpus is not None
        else (f"asks for MIG devices ({w.mig_profile}) but names no gpuTier", (*at, "migProfile"),
              "add gpus and gpuTier, or remove migProfile") if w.mig_profile is not None
        else (f"asks for no GPU and does not state its {' and '.join(missing)} per pod (sized from GPU shares "
              "otherwise)", (*at, "name"), "state cpu and memory (e.g. cpu: \"4\", memory: 16Gi), or add gpuTier "
              "and gpus") if missing
        else None
    )  # fmt: skip
    if problem:
        message, path, hint = problem
        ctx.report(diag("cpu-workload-incomplete", f"workload '{w.name}' {message}", path, hint=hint))
        return None
    paths = [p.path for p in pools if p.tier == CPU_TIER]
    return ir.Tier(CPU_TIER, (CPU_TIER,), paths[0] if paths else ("spec", "nodePools"), None, ctx.keys.tier)


def _class_allowed(
    ctx: Context, w: m.Workload, i: int, tenant: ir.Tenant, effective: str | None, class_names: set[str]
) -> bool:
    """Whether the tenant may use the priority class the workload runs with, `effective` (its own, else the
    cluster's default). Resolution, not a check over the cluster: a workload that may not is left out of it."""
    if effective is None or effective not in tenant.forbidden_priority_classes:
        return True
    pc = w.priority_class
    allowed = sorted(class_names - set(tenant.forbidden_priority_classes))
    what = f"priority class '{pc}'" if pc else f"the default priority class '{effective}'"
    ctx.report(
        diag(
            "priority-class-not-allowed",
            f"workload '{w.name}' would run with {what}, which tenant '{tenant.name}' may not use",
            ctx.path("workloads", i, "priorityClass" if pc else "tenant"),
            hint=f"set priorityClass to one of {', '.join(repr(c) for c in allowed)}" if allowed else None,
        )
    )
    return False


def _workload(
    ctx: Context, w: m.Workload, i: int, found: _Resolved, kind: str, defaults: dict[str, str]
) -> ir.Workload:
    """The workload with its references `found`, of `kind`; `defaults`: namespace -> the class that is its default."""
    return ir.Workload(
        name=w.name,
        type=w.type,
        tenant=found.tenant.name,
        namespace=found.namespace,
        tier=found.tier,
        gpus=w.gpus or 0,
        replicas=w.replicas,
        kind=kind,
        priority_class=found.priority_class,
        image=w.image or f"registry.example.com/{found.tenant.name}/{w.name}:latest",
        cpu=w.cpu,
        memory=w.memory,
        limits={r: q for r, q in (("cpu", w.limits.cpu), ("memory", w.limits.memory)) if q is not None},
        qos=w.qos,
        placement=w.placement,
        node_selector=dict(sorted(w.node_selector.items())),
        tolerations=tuple(t.model_dump(exclude_none=True) for t in w.tolerations),
        path=ctx.path("workloads", i),
        namespace_default=w.namespace_default and _first_default(ctx, w.name, found.namespace, defaults, i),
        rdma=w.rdma or 0,
        mig_profile=w.mig_profile,
        host_network=w.host_network,
        shm=w.shm,
        one_per_node=w.one_per_node,
        same_zone=w.same_zone,
        min_member=_min_member(ctx, w, i),
        elastic=_elastic(ctx, w, i, kind),
        autoscale=_autoscale(ctx, w, i),
    )


def _autoscale(ctx: Context, w: m.Workload, i: int) -> ir.Autoscale | None:
    """Its autoscaler; `replicas` beside it is refused (the Deployment leaves replicas to the autoscaler)."""
    a = w.autoscale
    if a is None:
        return None
    if "replicas" in w.model_fields_set:
        ctx.report(
            diag(
                "autoscale-with-replicas",
                f"workload '{w.name}' states replicas: {w.replicas} and autoscale: its autoscaler sets the replicas, "
                "from autoscale.min to autoscale.max",
                ctx.path("workloads", i, "replicas"),
                hint="remove replicas: the autoscaler keeps the Deployment between autoscale.min and max",
            )
        )
    prometheus = a.prometheus and ir.Prometheus(
        a.prometheus.server_address, a.prometheus.query, a.prometheus.threshold, a.prometheus.activation_threshold
    )
    metric = (a.metric.name, a.metric.average_value) if a.metric else None
    return ir.Autoscale(a.min, a.max, a.cpu, metric, prometheus, ctx.path("workloads", i, "autoscale"))


def _elastic(ctx: Context, w: m.Workload, i: int, kind: str) -> tuple[int, int] | None:
    if w.elastic is None:
        return None
    e, at = w.elastic, ctx.path("workloads", i, "elastic")
    problem = (
        f"elastic needs kind PyTorchJob, not {kind}" if kind != "PyTorchJob"
        else f"elastic needs minReplicas <= replicas <= maxReplicas, not {e.min_replicas} <= {w.replicas} <= "
        f"{e.max_replicas}" if not e.min_replicas <= w.replicas <= e.max_replicas
        else "elastic and minMember both set the gang: keep minReplicas" if w.min_member is not None
        else None
    )  # fmt: skip
    if problem:
        ctx.report(diag("invalid-value", f"workload '{w.name}': {problem}", at, hint="see 'Distributed training' in "
                        "docs/training.md"))  # fmt: skip
        return None
    return e.min_replicas, e.max_replicas


def _min_member(ctx: Context, w: m.Workload, i: int) -> int | None:
    if w.min_member is not None and w.min_member > w.replicas:
        ctx.report(
            diag(
                "invalid-value",
                f"workload '{w.name}' needs {w.min_member} pods together but runs {w.replicas}",
                ctx.path("workloads", i, "minMember"),
                hint=f"minMember is at most replicas ({w.replicas})",
            )
        )
        return None
    return w.min_member


def _first_default(ctx: Context, workload: str, namespace: str, defaults: dict[str, str], i: int) -> bool:
    """Whether `workload` is the first class the policy makes its namespace's default (a second is an error)."""
    if namespace in defaults:
        ctx.report(
            diag(
                "namespace-default-class-twice",
                f"workload '{workload}' is the default class of namespace '{namespace}', and so is "
                f"'{defaults[namespace]}'",
                ctx.path("workloads", i, "namespaceDefault"),
                hint="a namespace has at most one default class: remove namespaceDefault from one of them",
            )
        )
        return False
    defaults[namespace] = workload
    return True

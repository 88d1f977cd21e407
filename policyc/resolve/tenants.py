"""`spec.priorityClasses` and `spec.tenants`: each tenant's namespaces (each owned once), the priority classes it may
use, its queue (under its parent's), quota and limit range, with 'gpu' resolved to the accelerator its work uses."""

from __future__ import annotations

from policyc import ir
from policyc.diagnostics import Path, diag, where
from policyc.gpu import dra
from policyc.k8s.objects import QUOTA_OBJECT_COUNTS
from policyc.k8s.quantity import Quantity
from policyc.language.model import policy as m
from policyc.language.model.types import GPU
from policyc.resolve import admission_modes
from policyc.resolve.context import Context
from policyc.resolve.resource_maps import Ambiguous, container_resources, resources


def priority_classes(ctx: Context) -> list[ir.PriorityClass]:
    return [
        ir.PriorityClass(
            c.name, c.value, c.global_default, c.preemption_policy, c.description, ctx.path("priorityClasses", i)
        )
        for i, c in ctx.unique("priorityClasses", ctx.spec.priority_classes, "priority class")
    ]


def team_grant(ctx: Context, class_names: set[str], tier_names: set[str]) -> None:
    """Report a priority class or GPU tier that `spec.teams` grants teams but the policy does not define."""
    grant = ctx.spec.teams
    if grant is None:
        return
    for key, names, defined, rule, what in (
        ("priorityClasses", grant.priority_classes, class_names, "unknown-priority-class", "priority class"),
        ("gpuTiers", grant.gpu_tiers, tier_names, "unknown-gpu-tier", "GPU tier"),
    ):
        for j, name in enumerate(names or ()):
            message = f"spec.teams grants teams unknown {what} '{name}'"
            ctx.reference(name, defined, rule, message, ("spec", "teams", key, j), among=key)


def tenants(ctx: Context, class_names: set[str], tiers: list[ir.Tier], pools: list[ir.Pool]) -> dict[str, ir.Tenant]:
    """The tenants by name; `tiers` and `pools` tell what 'gpu' means in their resource maps."""
    unique = ctx.unique("tenants", ctx.spec.tenants, "tenant")
    default_admission = admission_modes.default_mode(ctx)
    names = {t.name for _, t in unique}
    tier_resources = {t.name: t.resource for t in tiers}
    pool_resources = {p.resource for p in pools if p.resource}
    ns_owner: dict[str, str] = {}
    workloads: dict[str, list[m.Workload]] = {}
    for w in ctx.spec.workloads:
        workloads.setdefault(w.tenant, []).append(w)
    out = {}
    for i, tenant in unique:
        gpu = _tenant_gpu(ctx, workloads.get(tenant.name, []), tier_resources, pool_resources)
        _claim_namespaces(ctx, tenant, i, ns_owner)
        allowed = _allowed_classes(ctx, tenant, i, class_names)
        parent = tenant.queue.parent
        if parent is not None and not _parent_known(ctx, tenant, i, names):
            parent = None  # left out of the IR: the queue tree checks see no broken edge
        at = ctx.path("tenants", i)
        usable = class_names if allowed is None else allowed & class_names
        out[tenant.name] = ir.Tenant(
            name=tenant.name,
            namespaces=tuple(tenant.namespaces),
            allowed_priority_classes=None if allowed is None else tuple(sorted(usable)),
            forbidden_priority_classes=() if allowed is None else tuple(sorted(class_names - allowed)),
            queue=_queue(ctx, tenant.queue, parent, (*at, "queue"), gpu),
            quota=_quota(ctx, tenant.quota, (*at, "quota"), usable, class_names, gpu),
            limit_range=_limit_range(ctx, tenant.limit_range, (*at, "limitRange"), gpu),
            path=at,
            admission=admission_modes.mode(ctx, tenant.admission, (*at, "admission", "mode")) or default_admission,
        )
    return out


def _tenant_gpu(
    ctx: Context, workloads: list[m.Workload], tier_resources: dict[str, str | None], pool_resources: set[str]
) -> str | Ambiguous:
    """What 'gpu' means for a tenant with these `workloads`: the accelerator resource of the tiers they use (of every
    pool when it declares none), unless they are several."""
    tiers = sorted({w.gpu_tier for w in workloads if w.gpu_tier in tier_resources})
    used = {tier_resources[t] for t in tiers} or pool_resources
    found = sorted(used or {ctx.spec.gpu_resource})
    if len(found) == 1:
        return found[0]
    if any(ctx.parsed.dropped.get(name) for name in ("gpuTiers", "nodePools", "workloads")):
        return Ambiguous(tuple(found), None)  # a workload, tier or pool left out may be the one that tells
    if tiers:
        why = "the tenant's workloads use tiers " + ", ".join(f"{t} ({tier_resources[t]})" for t in tiers)
    elif workloads:
        why = "the tenant's workloads use no GPU, and the pools have several accelerators"
    else:
        why = "the tenant names no workload, and the pools have several accelerators"
    return Ambiguous(tuple(found), why)


def _claim_namespaces(ctx: Context, tenant: m.Tenant, i: int, owner: dict[str, str]) -> None:
    """Record the tenant as the owner of its namespaces (`owner`: namespace -> tenant), reporting those another tenant
    owns, or that it lists twice."""
    for j, ns in enumerate(tenant.namespaces):
        if ns in owner:
            other = owner[ns]
            what = f"listed twice in tenant '{other}'" if other == tenant.name else f"also claimed by tenant '{other}'"
            ctx.report(
                diag(
                    "namespace-in-two-tenants",
                    f"namespace '{ns}' is {what}",
                    ctx.path("tenants", i, "namespaces", j),
                    hint="a namespace belongs to exactly one tenant: remove it here"
                    + ("" if other == tenant.name else f", or from tenant '{other}'"),
                )
            )
        owner.setdefault(ns, tenant.name)


def _allowed_classes(ctx: Context, tenant: m.Tenant, i: int, class_names: set[str]) -> set[str] | None:
    """The priority classes the tenant may use (None: any), each of which must exist."""
    if tenant.priority_classes is None:
        return None
    for j, name in enumerate(tenant.priority_classes):
        ctx.reference(
            name,
            class_names,
            "unknown-priority-class",
            f"tenant '{tenant.name}' allows unknown priority class '{name}'",
            ctx.path("tenants", i, "priorityClasses", j),
            among="priorityClasses",
        )
    return set(tenant.priority_classes)


def _parent_known(ctx: Context, tenant: m.Tenant, i: int, names: set[str]) -> bool:
    """Whether the tenant's queue parent is another tenant."""
    parent = tenant.queue.parent
    assert parent is not None
    return ctx.reference(
        parent,
        names - {tenant.name},
        "unknown-parent-queue",
        f"queue parent '{parent}' of tenant '{tenant.name}' is "
        + ("the tenant itself" if parent == tenant.name else "not a tenant"),
        ctx.path("tenants", i, "queue", "parent"),
        among="tenants",
        otherwise="remove parent (a queue without one is a child of the root queue)"
        + ("" if parent == tenant.name else f", or define tenant '{parent}'"),
    )


def _queue(ctx: Context, q: m.Queue, parent: str | None, base: Path, gpu: str | Ambiguous) -> ir.Queue:
    counter = "the scheduler's queue"
    guarantee = container_resources(ctx, q.guarantee, (*base, "guarantee"), gpu, counter)
    capability = container_resources(ctx, q.capability, (*base, "capability"), gpu, counter)
    deserved = container_resources(ctx, q.deserved or {}, (*base, "deserved"), gpu, counter)
    # deserved defaults to the guarantee, resource by resource (the language's rule).
    completed = dict(sorted({**guarantee, **deserved}.items()))
    return ir.Queue(q.weight, guarantee, completed, deserved, capability, q.reclaimable, parent, q.priority)


def _quota(
    ctx: Context, q: m.Quota | None, base: Path, usable: set[str], class_names: set[str], gpu: str | Ambiguous
) -> ir.Quota | None:
    """The tenant's quota; `usable`: the classes its pods may name, of the policy's `class_names`; `gpu`: what 'gpu'
    stands for."""
    if q is None:
        return None
    hard: dict[str, Quantity] = {}
    for name, amount in resources(ctx, q.requests, (*base, "requests"), gpu).items():
        hard[dra.quota_key(name)] = amount
    for name, amount in resources(ctx, q.limits, (*base, "limits"), gpu).items():
        key = GPU if name == gpu and GPU in q.limits else name
        if "/" in name or name == "storage":
            ctx.report(
                diag(
                    "quota-extended-resource-limit",
                    f"quota limits.{key} is not allowed: Kubernetes quotas "
                    + ("storage" if name == "storage" else "extended resources such as GPUs")
                    + " only by requests",
                    (*base, "limits", key),
                    at_key=True,
                    hint=f"move it to quota.requests.{key}",
                )
            )
            continue
        hard[f"limits.{name}"] = amount
    for name, amount in q.objects.items():
        at = (*base, "objects", name)
        message = f"{where(at)}: '{name}' is not an object count a quota can limit"
        otherwise = "use pods, services, ... or count/<resource>.<group>"
        if name.startswith("count/") or ctx.reference(
            name, QUOTA_OBJECT_COUNTS, "invalid-resource-name", message, at, at_key=True, otherwise=otherwise
        ):
            hard[name] = amount
    return ir.Quota(dict(sorted(hard.items())), _per_class(ctx, q, base, usable, class_names, gpu))


def _per_class(
    ctx: Context, q: m.Quota, base: Path, usable: set[str], class_names: set[str], gpu: str | Ambiguous
) -> dict[str, dict[str, Quantity]]:
    """The quota's requests per priority class: of classes that exist, and the tenant may use."""
    out = {}
    for cls, given in sorted(q.per_priority_class.items()):
        at = (*base, "perPriorityClass", cls)
        if not ctx.reference(cls, class_names, "unknown-priority-class", f"quota for unknown priority class '{cls}'",
                             at, among="priorityClasses", at_key=True):  # fmt: skip
            continue
        if cls not in usable:
            hint = f"add '{cls}' to the tenant's priorityClasses, or remove this quota"
            ctx.report(diag("priority-class-not-allowed", f"quota for priority class '{cls}', which the tenant may "
                            "not use", at, at_key=True, hint=hint))  # fmt: skip
            continue
        requests = container_resources(ctx, given, at, gpu, "a quota scoped to a priority class")
        out[cls] = {f"requests.{r}": a for r, a in requests.items()}
    return out


def _limit_range(ctx: Context, lr: m.LimitRange | None, base: Path, gpu: str | Ambiguous) -> ir.LimitRange | None:
    if lr is None:
        return None
    counter = "a LimitRange"
    return ir.LimitRange(
        container_resources(ctx, lr.default, (*base, "default"), gpu, counter),
        container_resources(ctx, lr.default_request, (*base, "defaultRequest"), gpu, counter),
        container_resources(ctx, lr.max, (*base, "max"), gpu, counter),
        container_resources(ctx, lr.min, (*base, "min"), gpu, counter),
    )

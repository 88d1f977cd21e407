"""`policyc report`: the capacity picture a reviewer needs in a pull request, as Markdown or HTML.

Figures: per pool its nodes and accelerator devices; per GPU tier its capacity and the guarantees that land on it;
per tenant its queue (guarantee, deserved, capability) and namespace quota, with shares of the cluster; quota
overcommit per resource; per workload whether all its pods fit at once in its namespace quota, its queue and the
pools it can use, with the room left; and every warning.

Device kinds stay apart (`Devices`): whole cards per resource (each vendor's own), MIG devices per profile, shares
of time-sliced or MPS cards (with the cards behind them), and cards claimed through a DRA DeviceClass. A figure is
never a sum over kinds or resources, and a count of devices is a whole number; a share is a percentage and a ratio
says so.

Attribution (`ATTRIBUTION`): a tenant's guarantee of a resource, less what its child queues' guarantees take
(`own_guarantees`), counts only on the tiers of the pools its queue subtree's workloads can reach (`subtree_reach`),
split across those tiers in proportion to their devices of that resource, in whole devices (`apportion`). A tenant
none of whose workloads can land on a pool (none declared, or none placeable) is counted apart, on no tier.
The HTML form draws capacity against guarantees per tier as inline SVG: no script, no network.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from policyc import registry
from policyc.backends.kubernetes import QUOTA_NAME, quota_object
from policyc.checks.autoscaling import Headroom, headroom
from policyc.checks.cluster_capacity import own_guarantees, quota_totals, subtree_reach
from policyc.checks.quota_queue import binding
from policyc.checks.sizing import pool_room, queue_use
from policyc.compiler import Compilation
from policyc.gpu import dra, mig
from policyc.ir import Cluster, Pool, Workload
from policyc.k8s.quantity import Quantity
from policyc.output.formats import render_text
from policyc.pods import contract_pod, pod_resources, reachable_pools
from policyc.proof.admitted import quota_use

WHOLE = "GPU"
"""The kind of whole cards requested through the device plugin."""
CLAIMED = "DRA"
"""The kind of whole cards claimed through a DeviceClass."""
SHARES = {"time-slicing": "time-slicing shares", "mps": "MPS shares"}
"""Sharing strategy -> how its devices are called."""


@dataclass(frozen=True, eq=False)
class Devices:
    """Accelerator devices of one kind and resource, as pods ask for them."""

    resource: str
    """The extended resource pods request, or for a DRA tier the quota key of its DeviceClass's devices."""
    kind: str
    """`WHOLE`, `CLAIMED`, `MIG <profile>`, or a sharing strategy (a key of `SHARES`)."""
    count: int
    cards: int
    """The cards they are, or are made of (for MIG: the cards holding devices of that profile)."""

    @property
    def kind_name(self) -> str:
        """What the devices are beyond their resource: '' for whole cards, 'MIG 1g.10gb', 'time-slicing shares'."""
        if self.kind in (WHOLE, CLAIMED):
            return ""
        return SHARES.get(self.kind, self.kind)

    def amount(self) -> str:
        """Its count and kind, for a reader who knows the resource: '224', '224 MIG 1g.10gb devices (of 32 GPUs)',
        '32 time-slicing shares (4 on each of 8 GPUs)'."""
        if self.kind in (WHOLE, CLAIMED):
            return str(self.count)
        if self.kind in SHARES:
            return f"{self.count} {self.kind_name} ({self.count // self.cards} on each of {self.cards} GPUs)"
        return f"{self.count} {self.kind_name} devices (of {self.cards} GPUs)"


def resource_name(resource: str) -> str:
    """A resource as the report names it: a DRA tier's quota key by its DeviceClass."""
    return f"DeviceClass {dra.device_class_of(resource)}" if dra.is_devices_key(resource) else resource


def pool_devices(p: Pool) -> list[Devices]:
    """The accelerator devices of a pool, all its nodes together, one entry per kind (none for CPU-only nodes)."""
    if p.resource is None:
        return []
    if p.device_class:
        return [Devices(p.resource, CLAIMED, p.gpus, p.gpus)]
    nodes = p.max_nodes
    if p.mig:
        return [
            Devices(
                mig.resource(profile) if p.mig.strategy == "mixed" else p.resource,
                f"MIG {profile}",
                count * nodes,
                sum(cards for cards, devices in p.mig.cards if profile in devices) * nodes,
            )
            for profile, count in p.mig.per_node.items()
        ]
    if p.sharing:
        strategy, replicas = p.sharing
        return [Devices(p.resource, strategy, p.gpus, p.gpus // replicas)]
    return [Devices(p.resource, WHOLE, p.gpus, p.gpus)]


def totals(devices: Iterable[Devices]) -> list[Devices]:
    """Devices of the same resource and kind added up, by resource, whole cards before MIG devices and shares."""
    out: dict[tuple[str, str], Devices] = {}
    for d in devices:
        key = (d.resource, d.kind)
        seen = out.get(key)
        out[key] = d if seen is None else Devices(d.resource, d.kind, seen.count + d.count, seen.cards + d.cards)
    return sorted(out.values(), key=lambda d: (d.resource, bool(d.kind_name), d.kind))


def describe(devices: Sequence[Devices]) -> str:
    """Devices of several resources or kinds, each named: '128 nvidia.com/gpu, 224 nvidia.com/gpu as MIG 1g.10gb
    devices (of 32 GPUs), 32 devices of DeviceClass h100.example.com' ('' for none)."""
    parts = []
    for d in devices:
        if d.kind == CLAIMED:
            parts.append(f"{d.count} devices of {resource_name(d.resource)}")
        else:
            parts.append(f"{d.count} {d.resource}" + (f" as {d.amount().split(' ', 1)[1]}" if d.kind_name else ""))
    return ", ".join(parts)


def amount_of(devices: Sequence[Devices]) -> str:
    """Devices of one resource: the count of its one kind, or the total and each kind's."""
    if len(devices) == 1:
        return devices[0].amount()
    kinds = [d.amount() if d.kind_name else f"{d.count} GPUs" for d in devices]
    return f"{sum(d.count for d in devices)}: " + " + ".join(kinds)


def apportion(amount: int, weights: Mapping[str, int]) -> dict[str, int]:
    """`amount` split in proportion to `weights` in whole units (Hamilton's method): each key gets the whole part of
    its exact share, and the units left over go one each to the largest remainders (ties: in the weights' order), so
    the parts add up to `amount`."""
    total = sum(weights.values())
    exact = {k: Fraction(amount * w, total) for k, w in weights.items()}
    parts = {k: math.floor(v) for k, v in exact.items()}
    left = amount - sum(parts.values())
    for k in sorted(exact, key=lambda k: parts[k] - exact[k])[:left]:  # sorted() is stable: ties keep their order
        parts[k] += 1
    return parts


@dataclass(frozen=True, eq=False)
class PoolFigures:
    name: str
    usage: str
    """Its usage, or "Slurm only" for Slurm's own."""
    tier: str
    product: str
    nodes: int
    """Its most nodes (a named pool: all of them), which `devices` count."""
    fewest: int
    """Its fewest nodes (a pool by size scales between the two)."""
    provisioning: str
    """How its nodes come to be: its provisioner and what it writes for them."""
    devices: tuple[Devices, ...]

    @property
    def size(self) -> str:
        return str(self.nodes) if self.fewest == self.nodes else f"{self.fewest}-{self.nodes}"


@dataclass(frozen=True, eq=False)
class TierFigures:
    """One resource of a GPU tier (a tier's pools provide one, or a MIG profile's each under the mixed strategy)."""

    name: str
    products: tuple[str, ...]
    pools: tuple[str, ...]
    resource: str | None
    """None: no pool of the tier holds devices for Kubernetes."""
    devices: tuple[Devices, ...]
    guaranteed: int
    """Devices of guarantees attributed to this tier (`ATTRIBUTION`)."""

    @property
    def capacity(self) -> int:
        return sum(d.count for d in self.devices)


@dataclass(frozen=True, eq=False)
class TenantFigures:
    """A tenant's figures for one accelerator resource (resource None: it has none)."""

    name: str
    namespaces: int
    resource: str | None
    guarantee: Quantity | None
    deserved: Quantity | None
    capability: Quantity | None
    quota: Quantity | None
    """Requests quota over all of the tenant's namespaces."""
    tiers: tuple[str, ...]
    """Tiers of the pools its workloads can reach (none: it is counted apart)."""
    reached: int
    """Devices of `resource` in the pools its workloads can reach."""


@dataclass(frozen=True, eq=False)
class WorkloadFigures:
    """Whether all of a workload's pods fit at once: in its namespace quota, its queue and its pools."""

    name: str
    tenant: str
    namespace: str
    pods: int
    per_pod: str
    quota: str
    queue: str
    pools: str
    fits: bool
    gangs: str = "-"
    """How many of its gangs start at once by its queue and by its quota, the binding one first (`binding`)."""


@dataclass(frozen=True, eq=False)
class Figures:
    policy: str
    devices: list[Devices]
    """Of the pools Kubernetes workloads may use (not Slurm's own), per resource and kind."""
    pools: list[PoolFigures]
    tiers: list[TierFigures]
    tenants: list[TenantFigures]
    overcommit: dict[str, tuple[Quantity, Quantity]]
    """resource -> (quota total, capacity), for every resource with both."""
    unattributed: dict[str, int]
    """Resource -> devices guaranteed to tenants whose workloads can land on no pool (so on no tier)."""
    workloads: list[WorkloadFigures]
    autoscalers: list[Headroom] = field(default_factory=list)
    """Per autoscaled workload: the most pods its quota, queue and pools admit, against its max."""
    slurm_devices: list[Devices] = field(default_factory=list)
    """Devices of Slurm's own pools, which `devices` leaves out."""

    def of(self, resource: str) -> list[Devices]:
        """The cluster's devices (for Kubernetes) of one resource, per kind."""
        return [d for d in self.devices if d.resource == resource]


ATTRIBUTION = (
    "A tenant's guarantee (less its child queues' guarantees) counts on the tiers of the pools its workloads can "
    "reach, split in proportion to their devices of that resource in each tier, in whole devices (largest "
    "remainders round up)."
)


GANGS = (
    "Gangs at once: for a kind whose pods are created only once its queue admits the job, how many of the workload's "
    "gangs start together, alone, by the queue's capability and by the namespace quota; the first named binds first. "
    "A quota that binds before the queue leaves an admitted gang partly created (PC496)."
)


def provisioning(cluster: Cluster, p: Pool) -> str:
    """How a pool's nodes come to be: its provisioner, and what it writes for them."""
    return f"{p.provisioning} ({registry.provisioner(p.provisioning).describe(cluster, p)})"


def figures(cluster: Cluster) -> Figures:
    kubernetes = {p.name for p in cluster.kubernetes_pools}
    devices = {p.name: pool_devices(p) for p in cluster.pools}
    pools = [PoolFigures(p.name, p.usage if p.name in kubernetes else "Slurm only", p.tier,
                         p.product if p.resource else "-", p.max_nodes, p.min_nodes, provisioning(cluster, p),
                         tuple(devices[p.name]))
             for p in cluster.pools]  # fmt: skip
    guaranteed, unattributed = _attribution(cluster, devices)
    return Figures(
        cluster.name,
        totals(d for p in cluster.kubernetes_pools for d in devices[p.name]),
        pools,
        _tiers(cluster, devices, guaranteed),
        _tenants(cluster, devices),
        quota_totals(cluster, cluster.capacity(cluster.kubernetes_pools)),
        unattributed,
        [_workload(cluster, w) for w in cluster.workloads],
        [headroom(cluster, w) for w in cluster.workloads if w.autoscale],
        totals(d for p in cluster.pools if p.name not in kubernetes for d in devices[p.name]),
    )


def _held(devices: Mapping[str, list[Devices]], pools: Iterable[str], resource: str) -> int:
    """Devices of `resource` in `pools` (by name), every kind together."""
    return sum(d.count for name in pools for d in devices[name] if d.resource == resource)


def _attribution(
    cluster: Cluster, devices: Mapping[str, list[Devices]]
) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
    """(tier, resource) -> devices of guarantees attributed to it (`ATTRIBUTION`), and resource -> devices guaranteed
    to tenants whose workloads reach no pool of it."""
    reach = subtree_reach(cluster)
    guaranteed: dict[tuple[str, str], int] = {}
    unattributed: dict[str, int] = {}
    for t, own in own_guarantees(cluster):
        reached = [p for p in cluster.pools if p.name in reach[t.name]]
        for resource, amount in own.items():
            weights: dict[str, int] = {}
            for tier in cluster.tiers:
                held = _held(devices, (p.name for p in reached if p.tier == tier.name), resource)
                if held:
                    weights[tier.name] = held
            whole = math.ceil(amount.value)  # a fraction of a device is an error of its own (PC409)
            if weights:
                for tier_name, part in apportion(whole, weights).items():
                    guaranteed[(tier_name, resource)] = guaranteed.get((tier_name, resource), 0) + part
            elif resource in cluster.accelerators:
                unattributed[resource] = unattributed.get(resource, 0) + whole
    return guaranteed, unattributed


def _tiers(
    cluster: Cluster, devices: Mapping[str, list[Devices]], guaranteed: Mapping[tuple[str, str], int]
) -> list[TierFigures]:
    """A row per tier and resource its Kubernetes pools hold (one row without a resource for a tier with none)."""
    out = []
    for tier in cluster.tiers:
        own = [p.name for p in cluster.kubernetes_pools if p.tier == tier.name]
        held = totals(d for name in own for d in devices[name])
        resources = list(dict.fromkeys(d.resource for d in held))
        for resource in resources:
            holding = tuple(name for name in own if any(d.resource == resource for d in devices[name]))
            of_resource = tuple(d for d in held if d.resource == resource)
            out.append(TierFigures(tier.name, tier.products, holding, resource, of_resource,
                                   guaranteed.get((tier.name, resource), 0)))  # fmt: skip
        if not resources:
            out.append(TierFigures(tier.name, tier.products, tuple(own), None, (), 0))
    return out


def _tenants(cluster: Cluster, devices: Mapping[str, list[Devices]]) -> list[TenantFigures]:
    """A row per tenant and accelerator resource it states in its queue or quota (one row without for none)."""
    reach = subtree_reach(cluster)
    tier_of = {p.name: p.tier for p in cluster.pools}
    accelerators = (*cluster.accelerators, *cluster.claimed_devices)
    out = []
    for t in cluster.tenants:
        q, hard = t.queue, t.quota.hard if t.quota else {}
        tiers = tuple(sorted({tier_of[name] for name in reach[t.name]}))
        stated = [r for r in accelerators
                  if r in q.guarantee or r in q.deserved or r in q.capability or dra.quota_key(r) in hard]  # fmt: skip
        for r in stated:
            quota = hard.get(dra.quota_key(r))
            out.append(TenantFigures(t.name, len(t.namespaces), r, q.guarantee.get(r), q.deserved.get(r),
                                     q.capability.get(r), quota * len(t.namespaces) if quota is not None else None,
                                     tiers, _held(devices, reach[t.name], r)))  # fmt: skip
        if not stated:
            out.append(TenantFigures(t.name, len(t.namespaces), None, None, None, None, None, tiers, 0))
    return out


def _tightest(uses: list[tuple[str, Quantity, Quantity]]) -> tuple[str, bool]:
    """Of (key, need, limit) triples: the one with the least room left, or every one over its limit."""
    over = [(key, need, limit) for key, need, limit in uses if need > limit]
    if over:
        return "over: " + ", ".join(f"{key} {need} of {limit}" for key, need, limit in over), False
    if not uses:
        return "-", True
    key, need, limit = min(uses, key=lambda u: ((u[2] - u[1]).value / max(u[2].value, 1), u[0]))
    return f"fits, {limit - need} {key} left", True


def _workload(cluster: Cluster, w: Workload) -> WorkloadFigures:
    pods, reach = pod_resources(cluster, w), reachable_pools(cluster, w)
    tenant = next(t for t in cluster.tenants if t.name == w.tenant)
    per_pod = ", ".join(f"{q} {r}" for r, q in pods.requests.items())
    quotas = [quota_object(QUOTA_NAME, tenant.quota)] if tenant.quota and tenant.quota.hard else []
    claimed = {r: int(pods.requests[r].value) for r in dra.claimed(pods.requests)}
    used = quota_use([(w.most_pods, contract_pod(w, pods))], quotas, claimed=[claimed])
    quota, quota_ok = _tightest([(u.key, u.need, u.hard) for u in used])
    queued = queue_use(w, pods, {t.name: t for t in cluster.tenants})
    queue, queue_ok = _tightest([(u.resource, u.need, u.cap) for u in queued])
    room = sum(p.max_nodes * n for p, n in pool_room(cluster, w, pods, reach))
    pools_ok = w.most_pods <= room
    return WorkloadFigures(
        w.name,
        w.tenant,
        w.namespace,
        w.most_pods,
        per_pod,
        quota,
        queue,
        f"{'fits' if pools_ok else 'over'}: room for {room}",
        quota_ok and queue_ok and pools_ok and not pods.unsized,
        binding(cluster, w),
    )


def _number(value: int | Quantity | None) -> str:
    return "-" if value is None else str(value)


def _share(part: int | Quantity | None, whole: int) -> str:
    """`part` of `whole` as a percentage ('-' when either is missing)."""
    if part is None or not whole:
        return "-"
    value = part.value if isinstance(part, Quantity) else part
    return f"{float(value) / whole:.0%}"


def _ratio(allowed: Quantity, available: Quantity) -> str:
    return f"{float(allowed.value / available.value):.2f}x"


Table = tuple[str, list[str], list[list[str]], list[str]]
"""(title, header, rows, notes below the table)."""


def _tables(f: Figures) -> list[Table]:
    """Every table, shared by both formats."""
    autoscalers = [_autoscaler_table(f)] if f.autoscalers else []
    return [_pool_table(f), _tier_table(f), _tenant_table(f), _overcommit_table(f), _workload_table(f), *autoscalers]


def _pool_table(f: Figures) -> Table:
    pools = [[p.name, p.usage, p.tier, p.product, p.size, p.provisioning, describe(p.devices) or "-"] for p in f.pools]
    notes = ["A range of nodes is a pool by size; its devices are counted at its most nodes."]
    sized = any(p.fewest != p.nodes for p in f.pools)
    return (
        "Node pools",
        ["pool", "usage", "tier", "GPU", "nodes", "provisioning", "devices"],
        pools,
        notes if sized else [],
    )


def _tier_table(f: Figures) -> Table:
    tiers = [
        [t.name, ", ".join(t.pools) or "-", resource_name(t.resource) if t.resource else "-",
         amount_of(t.devices) if t.devices else "0", str(t.guaranteed), _share(t.guaranteed, t.capacity)]
        for t in f.tiers
    ]  # fmt: skip
    notes = [ATTRIBUTION]
    if f.unattributed:
        held = ", ".join(f"{n} {resource_name(r)}" for r, n in sorted(f.unattributed.items()))
        notes.append(f"Guarantees of tenants with no placeable workload (on no tier): {held}.")
    return "GPU tiers", ["tier", "pools", "resource", "capacity", "guaranteed", "guaranteed share"], tiers, notes


def _tenant_table(f: Figures) -> Table:
    tenants = [
        [
            t.name,
            ", ".join(t.tiers) or "-",
            resource_name(t.resource) if t.resource else "-",
            _number(t.guarantee),
            _number(t.deserved),
            _number(t.capability),
            _number(t.quota),
            _share(t.guarantee, t.reached),
        ]
        for t in f.tenants
    ]
    header = ["tenant", "tiers", "resource", "guarantee", "deserved", "capability", "quota (all namespaces)",
              "guarantee share of the devices it reaches"]  # fmt: skip
    return "Tenants", header, tenants, []


def _overcommit_table(f: Figures) -> Table:
    overcommit = [[r, str(a), amount_of(f.of(r)) if f.of(r) else str(c), _ratio(a, c)]
                  for r, (a, c) in sorted(f.overcommit.items())]  # fmt: skip
    return "Quotas against capacity", ["resource", "quotas allow", "cluster has", "ratio"], overcommit, []


def _workload_table(f: Figures) -> Table:
    workloads = [
        [w.name, w.tenant, w.namespace, str(w.pods), w.per_pod, w.quota, w.queue, w.pools, "yes" if w.fits else "NO",
         w.gangs]
        for w in f.workloads
    ]  # fmt: skip
    header = ["workload", "tenant", "namespace", "pods", "per pod", "namespace quota", "queue", "pools", "fits",
              "gangs at once"]  # fmt: skip
    return "Workloads (all pods at once)", header, workloads, [GANGS]


def _autoscaler_table(f: Figures) -> Table:
    autoscalers = [[h.workload, str(h.min), str(h.max), *("-" if n is None else str(n) for n in (h.quota, h.queue)),
                    str(h.pools)] for h in f.autoscalers]  # fmt: skip
    header = ["workload", "min", "max", "namespace quota", "queue", "pools"]
    return "Autoscalers (the most pods each bound admits)", header, autoscalers, []


def _summary(f: Figures) -> str:
    held = f" for Kubernetes ({describe(f.slurm_devices)} more on Slurm's own nodes)" if f.slurm_devices else ""
    fewest, most = sum(p.fewest for p in f.pools), sum(p.nodes for p in f.pools)
    nodes = str(most) if fewest == most else f"{fewest}-{most}"
    return f"{len(f.pools)} pools, {nodes} nodes, {describe(f.devices) or 'no accelerators'}{held}"


def render_markdown(compilation: Compilation) -> str:
    f = figures(compilation.cluster)
    out = [
        f"## policyc report: `{f.policy}`",
        "",
        f"{_summary(f)}.",
        "",
    ]
    for title, header, rows, notes in _tables(f):
        out += [f"### {title}", ""]
        if rows:
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "|".join("---" for _ in header) + "|")
            out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        else:
            out.append("None.")
        out.append("")
        for note in notes:
            out += [note, ""]
    out += _diagnostics_markdown(compilation)
    return "\n".join(out)


def _diagnostics_markdown(compilation: Compilation) -> list[str]:
    text = render_text(compilation.report)
    if not text:
        return ["### Warnings", "", "None.", ""]
    return ["### Warnings and errors", "", "```", text, "```", ""]


BAR_AREA_HEIGHT = 200
BAR_WIDTH = 44
TOP = 20
"""Room above the tallest bar for its value label."""
MARGIN = 20
CHAR_WIDTH = 8
"""A generous width of one character of a 12px tier name, so that neighbouring names keep apart."""
UNIT_CHAR_WIDTH = 7
"""The same for the 11px line below it, saying what the tier's bars count."""


def unit(t: TierFigures) -> str:
    """What a tier's bars count: its devices' kinds, whole cards by their resource ('nvidia.com/gpu', 'MIG 1g.10gb',
    'time-slicing shares')."""
    return " + ".join(dict.fromkeys(d.kind_name or resource_name(d.resource) for d in t.devices)) or "no devices"


def chart_svg(f: Figures) -> str:
    """Capacity (and guarantees) per tier and resource as grouped bars, each group named by its tier and, below, what
    its bars count; each bar carries data-tier, data-resource, data-series and data-value, and a <title> for
    readers."""
    top = max([1, *(t.capacity for t in f.tiers), *(t.guaranteed for t in f.tiers)])
    widths = [max(CHAR_WIDTH * len(t.name), UNIT_CHAR_WIDTH * len(unit(t))) + 16 for t in f.tiers]
    group = max([3 * BAR_WIDTH, *widths])
    width = max(2 * MARGIN + group * len(f.tiers), 220)
    base = TOP + BAR_AREA_HEIGHT
    height = base + 68
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="chart-title" viewBox="0 0 {width} {height}">',
        '<title id="chart-title">Accelerator capacity and guarantees per GPU tier, in devices of each tier\'s own '
        "resource and kind</title>",
        f'<line x1="{MARGIN}" y1="{base}" x2="{width - MARGIN}" y2="{base}" stroke="#555"/>',
    ]
    for i, t in enumerate(f.tiers):
        middle = MARGIN + i * group + group / 2
        for j, (series, value, colour) in enumerate(
            (("capacity", t.capacity, "#4c78a8"), ("guaranteed", t.guaranteed, "#f58518"))
        ):
            x = middle - BAR_WIDTH + j * BAR_WIDTH + 2
            h = value / top * BAR_AREA_HEIGHT
            y = base - h
            label = f"{t.name}: {series} {value} ({unit(t)})"
            parts.append(
                f'<rect x="{x:g}" y="{y:.2f}" width="{BAR_WIDTH - 4}" height="{h:.2f}" '
                f'fill="{colour}" data-tier="{html.escape(t.name)}" data-resource="{html.escape(t.resource or "")}" '
                f'data-series="{series}" data-value="{value}"><title>{html.escape(label)}</title></rect>'
            )
            parts.append(
                f'<text x="{x + (BAR_WIDTH - 4) / 2:g}" y="{y - 4:.2f}" font-size="11" '
                f'text-anchor="middle">{value}</text>'
            )
        parts.append(
            f'<text x="{middle:g}" y="{base + 18}" font-size="12" text-anchor="middle">{html.escape(t.name)}</text>'
        )
        parts.append(
            f'<text x="{middle:g}" y="{base + 34}" font-size="11" fill="#555" text-anchor="middle">'
            f"{html.escape(unit(t))}</text>"
        )
    legend = base + 50
    parts.append(
        f'<rect x="{MARGIN}" y="{legend}" width="10" height="10" fill="#4c78a8"/>'
        f'<text x="{MARGIN + 14}" y="{legend + 9}" font-size="11">capacity</text>'
        f'<rect x="{MARGIN + 90}" y="{legend}" width="10" height="10" fill="#f58518"/>'
        f'<text x="{MARGIN + 104}" y="{legend + 9}" font-size="11">guaranteed</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def render_html(compilation: Compilation) -> str:
    f = figures(compilation.cluster)
    body = [
        f"<h1>policyc report: {html.escape(f.policy)}</h1>",
        f"<p>{html.escape(_summary(f))}.</p>",
        "<h2>Capacity and guarantees per tier</h2>",
        chart_svg(f),
    ]
    for title, header, rows, notes in _tables(f):
        body.append(f"<h2>{html.escape(title)}</h2>")
        if rows:
            head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
            cells = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")
        else:
            body.append("<p>None.</p>")
        body += [f"<p>{html.escape(note)}</p>" for note in notes]
    text = render_text(compilation.report)
    body.append("<h2>Warnings and errors</h2>" + (f"<pre>{html.escape(text)}</pre>" if text else "<p>None.</p>"))
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;"
        "margin-bottom:1.5em}th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f4f4f4}"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>policyc report: '
        f"{html.escape(f.policy)}</title><style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )

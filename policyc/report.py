"""`policyc report`: the capacity picture a reviewer needs in a pull request, as Markdown or HTML.

Figures: per pool its nodes and GPUs; per GPU tier its capacity and the guarantees that land on it; per
tenant its queue (guarantee, deserved, capability) and namespace quota, with shares of the cluster;
quota overcommit per resource; per workload whether all its pods fit at once in its namespace quota, its queue
and the pools it can use, with the room left; and every warning.

Attribution (`ATTRIBUTION`): a tenant's GPU guarantee, less what its child queues' guarantees take (`own_guarantees`),
counts only on the tiers of the pools its queue subtree's workloads can reach (`subtree_reach`), split across those
tiers in proportion to the GPUs of the reached pools in each. A tenant none of whose workloads can land on a pool
(none declared, or none placeable) is counted apart, on no tier.
The HTML form draws GPU capacity against guarantees per tier as inline SVG: no script, no network.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from policyc import dra
from policyc.backends.kubernetes import QUOTA_NAME, quota_object
from policyc.checks.autoscaling import Headroom, headroom
from policyc.checks.capacity import own_guarantees, quota_totals, subtree_reach
from policyc.checks.sizing import pool_room, queue_use
from policyc.compiler import Compilation
from policyc.contract import contract_pod, pod_resources, reachable_pools
from policyc.formats import render_text
from policyc.ir import Cluster, Workload
from policyc.k8s.quantity import Quantity
from policyc.proof.admission import quota_use


@dataclass(frozen=True)
class TierFigures:
    name: str
    products: tuple[str, ...]
    pools: tuple[str, ...]
    gpus: int
    guaranteed: Fraction
    """GPUs of guarantees attributed to this tier (`ATTRIBUTION`)."""


@dataclass(frozen=True)
class TenantFigures:
    name: str
    namespaces: int
    guarantee: Quantity | None
    deserved: Quantity | None
    capability: Quantity | None
    quota: Quantity | None
    """GPU requests quota over all of the tenant's namespaces."""
    tiers: tuple[str, ...]
    """Tiers of the pools its workloads can reach (none: it is counted apart)."""


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Figures:
    policy: str
    gpu_resource: str
    total_gpus: int
    """Of the pools Kubernetes workloads may use (not Slurm's own)."""
    pools: list[tuple[str, str, str, str, int, int]]
    """(name, usage ("Slurm only" for Slurm's own), tier, product, nodes, GPUs)"""
    tiers: list[TierFigures]
    tenants: list[TenantFigures]
    overcommit: dict[str, tuple[Quantity, Quantity]]
    """resource -> (quota total, capacity), for every resource with both."""
    unattributed: Fraction
    """GPUs guaranteed to tenants whose workloads can land on no pool (so on no tier)."""
    workloads: list[WorkloadFigures]
    autoscalers: list[Headroom] = field(default_factory=list)
    """Per autoscaled workload: the most pods its quota, queue and pools admit, against its max."""
    slurm_gpus: int = 0
    """GPUs of Slurm's own pools, which `total_gpus` leaves out."""


ATTRIBUTION = (
    "A tenant's guarantee (less its child queues' guarantees) counts on the tiers of the pools its workloads can "
    "reach, split in proportion to the GPUs of those pools in each tier."
)


def _devices(resources: Mapping[str, Quantity], accelerators: Sequence[str]) -> Quantity | None:
    """The accelerators in `resources`, of every resource together (None when it names none)."""
    amounts = [resources[r] for r in accelerators if r in resources]
    return sum(amounts[1:], amounts[0]) if amounts else None


def figures(cluster: Cluster) -> Figures:
    accelerators = cluster.accelerators
    devices = (*accelerators, *cluster.claimed_devices)
    kubernetes = {p.name for p in cluster.kubernetes_pools}
    pools = [(p.name, p.usage if p.name in kubernetes else "Slurm only", p.tier, p.product if p.resource else "-",
              len(p.nodes), p.gpus) for p in cluster.pools]  # fmt: skip
    reach = subtree_reach(cluster)
    guaranteed: dict[str, Fraction] = {}
    unattributed = Fraction(0)
    tenants = []
    for t, own in own_guarantees(cluster):
        reached = [p for p in cluster.pools if p.name in reach[t.name]]
        tiers = sorted({p.tier for p in reached})
        for gpu in accelerators:
            amount = own.get(gpu)
            holding = [p for p in reached if p.resource == gpu]
            reached_gpus = sum(p.gpus for p in holding)
            if amount is not None and reached_gpus:
                for p in holding:
                    guaranteed[p.tier] = guaranteed.get(p.tier, Fraction(0)) + amount.value * p.gpus / reached_gpus
            elif amount is not None:
                unattributed += amount.value
        quota = (
            _devices({r.removeprefix("requests."): q for r, q in t.quota.hard.items()}, devices) if t.quota else None
        )
        tenants.append(
            TenantFigures(
                t.name,
                len(t.namespaces),
                _devices(t.queue.guarantee, accelerators),
                _devices(t.queue.deserved, accelerators),
                _devices(t.queue.capability, accelerators),
                quota * len(t.namespaces) if quota else None,
                tuple(tiers),
            )
        )
    tiers = [
        TierFigures(
            tier.name,
            tier.products,
            tuple(p.name for p in cluster.kubernetes_pools if p.tier == tier.name),
            sum(p.gpus for p in cluster.kubernetes_pools if p.tier == tier.name),
            guaranteed.get(tier.name, Fraction(0)),
        )
        for tier in cluster.tiers
    ]
    total = cluster.capacity(cluster.kubernetes_pools)
    overcommit = quota_totals(cluster, total)
    return Figures(
        cluster.name,
        " + ".join(accelerators),
        sum(p.gpus for p in cluster.kubernetes_pools),
        pools,
        tiers,
        tenants,
        overcommit,
        unattributed,
        [_workload(cluster, w) for w in cluster.workloads],
        [headroom(cluster, w) for w in cluster.workloads if w.autoscale],
        sum(p.gpus for p in cluster.pools if p.name not in kubernetes),
    )


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
    room = sum(len(p.nodes) * n for p, n in pool_room(cluster, w, pods, reach))
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
    )


def _number(value: Fraction | Quantity | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, Quantity):
        return str(value)
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.1f}"


def _share(part: Fraction | Quantity | None, whole: int) -> str:
    if part is None or not whole:
        return "-"
    value = part.value if isinstance(part, Quantity) else part
    return f"{float(value) / whole:.0%}"


def _ratio(allowed: Quantity, available: Quantity) -> str:
    return f"{float(allowed.value / available.value):.2f}x"


def _tables(f: Figures) -> list[tuple[str, list[str], list[list[str]], list[str]]]:
    """(title, header, rows, notes below the table) of every table, shared by both formats."""
    pools = [[name, usage, tier, product, str(nodes), str(gpus)] for name, usage, tier, product, nodes, gpus in f.pools]
    tiers = [
        [t.name, ", ".join(t.pools) or "-", str(t.gpus), _number(t.guaranteed), _share(t.guaranteed, t.gpus)]
        for t in f.tiers
    ]
    tenants = [
        [
            t.name,
            ", ".join(t.tiers) or "-",
            _number(t.guarantee),
            _number(t.deserved),
            _number(t.capability),
            _number(t.quota),
            _share(t.guarantee, f.total_gpus),
        ]
        for t in f.tenants
    ]
    overcommit = [[r, str(a), str(c), _ratio(a, c)] for r, (a, c) in sorted(f.overcommit.items())]
    workloads = [
        [w.name, w.tenant, w.namespace, str(w.pods), w.per_pod, w.quota, w.queue, w.pools, "yes" if w.fits else "NO"]
        for w in f.workloads
    ]
    autoscalers = [[h.workload, str(h.min), str(h.max), *("-" if n is None else str(n) for n in (h.quota, h.queue)),
                    str(h.pools)] for h in f.autoscalers]  # fmt: skip
    gpu = f.gpu_resource
    notes = [ATTRIBUTION]
    if f.unattributed:
        notes.append(f"Guarantees of tenants with no placeable workload (on no tier): {_number(f.unattributed)} {gpu}.")
    return [
        ("Node pools", ["pool", "usage", "tier", "GPU", "nodes", gpu], pools, []),
        ("GPU tiers", ["tier", "pools", f"{gpu} capacity", "guaranteed", "guaranteed share"], tiers, notes),
        (
            "Tenants",
            [
                "tenant",
                "tiers",
                "guarantee",
                "deserved",
                "capability",
                "quota (all namespaces)",
                "guarantee share of cluster",
            ],
            tenants,
            [],
        ),
        ("Quotas against capacity", ["resource", "quotas allow", "cluster has", "ratio"], overcommit, []),
        (
            "Workloads (all pods at once)",
            ["workload", "tenant", "namespace", "pods", "per pod", "namespace quota", "queue", "pools", "fits"],
            workloads,
            [],
        ),
        *([("Autoscalers (the most pods each bound admits)",
            ["workload", "min", "max", "namespace quota", "queue", "pools"], autoscalers, [])] if autoscalers else []),
    ]  # fmt: skip


def _summary(f: Figures) -> str:
    held = f" for Kubernetes ({f.slurm_gpus} more on Slurm's own nodes)" if f.slurm_gpus else ""
    return f"{len(f.pools)} pools, {sum(p[4] for p in f.pools)} nodes, {f.total_gpus} {f.gpu_resource}{held}"


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


def chart_svg(f: Figures) -> str:
    """GPU capacity (and guarantees) per tier as grouped bars; each bar carries data-tier, data-series and
    data-value, and a <title> for readers."""
    top = max([Fraction(1), *(Fraction(t.gpus) for t in f.tiers), *(t.guaranteed for t in f.tiers)])
    group = max([3 * BAR_WIDTH, *(CHAR_WIDTH * len(t.name) + 16 for t in f.tiers)])
    width = max(2 * MARGIN + group * len(f.tiers), 220)
    base = TOP + BAR_AREA_HEIGHT
    height = base + 52
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="chart-title" viewBox="0 0 {width} {height}">',
        f'<title id="chart-title">{html.escape(f.gpu_resource)} capacity and guarantees per GPU tier</title>',
        f'<line x1="{MARGIN}" y1="{base}" x2="{width - MARGIN}" y2="{base}" stroke="#555"/>',
    ]
    for i, t in enumerate(f.tiers):
        middle = MARGIN + i * group + group / 2
        for j, (series, value, colour) in enumerate(
            (("capacity", Fraction(t.gpus), "#4c78a8"), ("guaranteed", t.guaranteed, "#f58518"))
        ):
            x = middle - BAR_WIDTH + j * BAR_WIDTH + 2
            h = float(value / top) * BAR_AREA_HEIGHT
            y = base - h
            label = f"{t.name}: {series} {_number(value)}"
            parts.append(
                f'<rect x="{x:g}" y="{y:.2f}" width="{BAR_WIDTH - 4}" height="{h:.2f}" '
                f'fill="{colour}" data-tier="{html.escape(t.name)}" data-series="{series}" '
                f'data-value="{_number(value)}"><title>{html.escape(label)}</title></rect>'
            )
            parts.append(
                f'<text x="{x + (BAR_WIDTH - 4) / 2:g}" y="{y - 4:.2f}" font-size="11" '
                f'text-anchor="middle">{_number(value)}</text>'
            )
        parts.append(
            f'<text x="{middle:g}" y="{base + 18}" font-size="12" text-anchor="middle">{html.escape(t.name)}</text>'
        )
    legend = base + 34
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
        "<h2>GPU capacity and guarantees per tier</h2>",
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

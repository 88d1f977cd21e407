"""`policyc report`: the capacity picture a reviewer needs in a pull request, as Markdown or HTML.

Figures: per pool its nodes and GPUs; per GPU tier its capacity and the guarantees that land on it; per
tenant its queue (guarantee, deserved, capability) and namespace quota, with shares of the cluster;
quota overcommit per resource; per workload whether all its pods fit at once in its namespace quota, its queue
and the pools it can use, with the room left; and every warning. A tenant's GPU guarantee is attributed to the tiers
its workloads use (split evenly when they use several); tenants without workloads are shown apart.
The HTML form draws GPU capacity against guarantees per tier as inline SVG: no script, no network.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from fractions import Fraction

from policyc.backends.kubernetes import QUOTA_NAME, quota_object
from policyc.checks.capacity import capacity, quota_totals
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
    """GPUs guaranteed to the tenants whose workloads run on this tier."""


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
    pools: list[tuple[str, str, str, str, int, int]]
    """(name, usage, tier, product, nodes, GPUs)"""
    tiers: list[TierFigures]
    tenants: list[TenantFigures]
    overcommit: dict[str, tuple[Quantity, Quantity]]
    """resource -> (quota total, capacity), for every resource with both."""
    unattributed: Fraction
    """GPUs guaranteed to tenants that declare no workload (so to no tier)."""
    workloads: list[WorkloadFigures]


def figures(cluster: Cluster) -> Figures:
    gpu = cluster.gpu_resource
    pools = [(p.name, p.usage, p.tier, p.product, len(p.nodes), p.gpus) for p in cluster.pools]
    tenant_tiers = {
        t.name: sorted({w.tier.name for w in cluster.workloads if w.tenant == t.name}) for t in cluster.tenants
    }
    guaranteed: dict[str, Fraction] = {}
    unattributed = Fraction(0)
    tenants = []
    for t in cluster.tenants:
        amount = t.queue.guarantee.get(gpu)
        tiers = tenant_tiers[t.name]
        if amount is not None:
            if tiers:
                for tier in tiers:
                    guaranteed[tier] = guaranteed.get(tier, Fraction(0)) + amount.value / len(tiers)
            else:
                unattributed += amount.value
        quota = t.quota.hard.get(f"requests.{gpu}") if t.quota else None
        tenants.append(
            TenantFigures(
                t.name,
                len(t.namespaces),
                amount,
                t.queue.deserved.get(gpu),
                t.queue.capability.get(gpu),
                quota * len(t.namespaces) if quota else None,
                tuple(tiers),
            )
        )
    tiers = [
        TierFigures(
            tier.name,
            tier.products,
            tuple(p.name for p in cluster.pools if p.tier == tier.name),
            sum(p.gpus for p in cluster.pools if p.tier == tier.name),
            guaranteed.get(tier.name, Fraction(0)),
        )
        for tier in cluster.tiers
    ]
    total = capacity(cluster, cluster.pools)
    overcommit = quota_totals(cluster, total)
    return Figures(
        cluster.name,
        gpu,
        sum(p.gpus for p in cluster.pools),
        pools,
        tiers,
        tenants,
        overcommit,
        unattributed,
        [_workload(cluster, w) for w in cluster.workloads],
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
    used = quota_use([(w.replicas, contract_pod(w, pods))], quotas)
    quota, quota_ok = _tightest([(u.key, u.need, u.hard) for u in used])
    queued = queue_use(w, pods, {t.name: t for t in cluster.tenants})
    queue, queue_ok = _tightest([(u.resource, u.need, u.cap) for u in queued])
    room = sum(len(p.nodes) * n for p, n in pool_room(cluster, pods, reach))
    pools_ok = w.replicas <= room
    return WorkloadFigures(
        w.name,
        w.tenant,
        w.namespace,
        w.replicas,
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


def _tables(f: Figures) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table, shared by both formats."""
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
    gpu = f.gpu_resource
    return [
        ("Node pools", ["pool", "usage", "tier", "GPU", "nodes", gpu], pools),
        ("GPU tiers", ["tier", "pools", f"{gpu} capacity", "guaranteed", "guaranteed share"], tiers),
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
        ),
        ("Quotas against capacity", ["resource", "quotas allow", "cluster has", "ratio"], overcommit),
        (
            "Workloads (all pods at once)",
            ["workload", "tenant", "namespace", "pods", "per pod", "namespace quota", "queue", "pools", "fits"],
            workloads,
        ),
    ]


def render_markdown(compilation: Compilation) -> str:
    f = figures(compilation.cluster)
    out = [
        f"## policyc report: `{f.policy}`",
        "",
        f"{len(f.pools)} pools, {sum(p[4] for p in f.pools)} nodes, {f.total_gpus} {f.gpu_resource}.",
        "",
    ]
    for title, header, rows in _tables(f):
        out += [f"### {title}", ""]
        if not rows:
            out += ["None.", ""]
            continue
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join("---" for _ in header) + "|")
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        out.append("")
    if f.unattributed:
        out += [f"Guarantees of tenants without workloads (no tier): {_number(f.unattributed)} {f.gpu_resource}.", ""]
    out += _diagnostics_markdown(compilation)
    return "\n".join(out)


def _diagnostics_markdown(compilation: Compilation) -> list[str]:
    text = render_text(compilation.report)
    if not text:
        return ["### Warnings", "", "None.", ""]
    return ["### Warnings and errors", "", "```", text, "```", ""]


BAR_AREA_HEIGHT = 200
BAR_WIDTH = 36


def chart_svg(f: Figures) -> str:
    """GPU capacity (and guarantees) per tier as grouped bars; each bar carries data-tier, data-series and
    data-value, and a <title> for readers."""
    top = max([1, *(t.gpus for t in f.tiers), *(int(t.guaranteed) + 1 for t in f.tiers)])
    group = 3 * BAR_WIDTH
    width = 60 + group * len(f.tiers)
    height = BAR_AREA_HEIGHT + 70
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="chart-title" viewBox="0 0 {width} {height}">',
        f'<title id="chart-title">{html.escape(f.gpu_resource)} capacity and guarantees per GPU tier</title>',
        f'<line x1="40" y1="{BAR_AREA_HEIGHT + 10}" x2="{width - 10}" y2="{BAR_AREA_HEIGHT + 10}" stroke="#555"/>',
    ]
    for i, t in enumerate(f.tiers):
        x = 50 + i * group
        for j, (series, value, colour) in enumerate(
            (("capacity", Fraction(t.gpus), "#4c78a8"), ("guaranteed", t.guaranteed, "#f58518"))
        ):
            h = float(value) / top * BAR_AREA_HEIGHT
            y = BAR_AREA_HEIGHT + 10 - h
            label = f"{t.name}: {series} {_number(value)}"
            parts.append(
                f'<rect x="{x + j * BAR_WIDTH}" y="{y:.2f}" width="{BAR_WIDTH - 4}" height="{h:.2f}" '
                f'fill="{colour}" data-tier="{html.escape(t.name)}" data-series="{series}" '
                f'data-value="{_number(value)}"><title>{html.escape(label)}</title></rect>'
            )
            parts.append(
                f'<text x="{x + j * BAR_WIDTH + (BAR_WIDTH - 4) / 2}" y="{y - 4:.2f}" font-size="11" '
                f'text-anchor="middle">{_number(value)}</text>'
            )
        parts.append(
            f'<text x="{x + BAR_WIDTH}" y="{BAR_AREA_HEIGHT + 28}" font-size="12" '
            f'text-anchor="middle">{html.escape(t.name)}</text>'
        )
    legend_y = BAR_AREA_HEIGHT + 50
    parts.append(
        f'<rect x="50" y="{legend_y}" width="10" height="10" fill="#4c78a8"/>'
        f'<text x="64" y="{legend_y + 9}" font-size="11">capacity</text>'
        f'<rect x="140" y="{legend_y}" width="10" height="10" fill="#f58518"/>'
        f'<text x="154" y="{legend_y + 9}" font-size="11">guaranteed</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def render_html(compilation: Compilation) -> str:
    f = figures(compilation.cluster)
    body = [
        f"<h1>policyc report: {html.escape(f.policy)}</h1>",
        f"<p>{len(f.pools)} pools, {sum(p[4] for p in f.pools)} nodes, {f.total_gpus} "
        f"{html.escape(f.gpu_resource)}.</p>",
        "<h2>GPU capacity and guarantees per tier</h2>",
        chart_svg(f),
    ]
    for title, header, rows in _tables(f):
        body.append(f"<h2>{html.escape(title)}</h2>")
        if not rows:
            body.append("<p>None.</p>")
            continue
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        cells = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")
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

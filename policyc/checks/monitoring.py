"""GPU alerts: what promtool cannot know. promtool checks PromQL syntax and templates; it does not know which metrics
the DCGM exporter exports, nor their types. So the user's own rules (`monitoring.extraRules`) are linted here against
the exporter's counter file (`policyc.gpu.promql`): rate() and its kin on a gauge (PC470), sums of the XID code (PC471),
a metric the exporter does not export (PC472), delta() and its kin on a counter (PC473), an expression the scan
cannot read (PC476). policyc's own rules pass the same lint (tests/test_monitoring.py). The other findings are about
the settings: alerts a pool cannot get (PC474), settings that apply to nothing (PC475), and rules a tenant could
edit (PC477)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.backends.monitoring import monitored_pools, rated_power, utilisation_metric
from policyc.diagnostics import Diagnostic, closest, diag
from policyc.gpu.promql import (
    ARITHMETIC,
    COUNTER,
    COUNTER_FUNCTIONS,
    COUNTER_SETS,
    EXPORTER_METRIC,
    FIELDS,
    GAUGE,
    GAUGE_FUNCTIONS,
    XID,
    PromqlError,
    enabled_fields,
    metric_uses,
    place,
)
from policyc.ir import AlertRule, Cluster, Monitoring, Pool


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    monitoring = cluster.monitoring
    if monitoring is None:
        return
    yield from _settings(cluster, monitoring)
    for rule in monitoring.extra_rules:
        yield from lint(rule, monitoring)


def lint(rule: AlertRule, monitoring: Monitoring) -> Iterator[Diagnostic]:
    """The lint of one rule's expression, one diagnostic per mistake and metric."""
    at = (*rule.path, "expr")
    try:
        uses = metric_uses(rule.expr)
    except PromqlError as e:
        yield diag(
            "promql-malformed",
            f"alert {rule.alert}: {place(rule.expr, e.column)} of the expression: {e}",
            at,
            hint="check its brackets and quotes (promtool check rules prints the parser's own message)",
        )
        return
    enabled = enabled_fields(monitoring.counters, monitoring.extra_counters)
    seen: set[tuple[str, str]] = set()
    for use in uses:
        if not EXPORTER_METRIC.match(use.name):
            continue  # not the DCGM exporter's: not ours to know
        found = _metric_finding(rule, use.name, use.column, enabled, monitoring)
        if found is not None and (found.code, use.name) not in seen:
            seen.add((found.code, use.name))
            yield found
        kind = enabled.get(use.name) or (FIELDS[use.name].type if use.name in FIELDS else None)
        for function in use.functions:
            found = _function_finding(rule, function, use.name, use.column, kind)
            if found is not None and (found.code, f"{function}/{use.name}") not in seen:
                seen.add((found.code, f"{function}/{use.name}"))
                yield found
                break


def _metric_finding(
    rule: AlertRule, metric: str, column: int, enabled: dict[str, str], monitoring: Monitoring
) -> Diagnostic | None:
    if metric in enabled:
        return None
    at, where = (*rule.path, "expr"), f"alert {rule.alert}: {metric} ({place(rule.expr, column)} of the expression)"
    known = FIELDS.get(metric)
    if known is None:
        suggestion = closest(metric, FIELDS)
        return diag(
            "metric-not-exported",
            f"{where} is no field the DCGM exporter knows",
            at,
            hint=f"did you mean '{suggestion}'?"
            if suggestion
            else f"add it to monitoring.extraCounters ({metric}: gauge or counter) if your exporter's counter "
            "file has that row",
        )
    other_sets = sorted(s for s in known.sets if s != monitoring.counters)
    hint = (
        f"enable it in the exporter's counter file (the row '{metric}, {known.type}, ...') and add {metric}: "
        f"{known.type} to monitoring.extraCounters"
    )
    if other_sets:
        hint = (
            f"set monitoring.counters: {other_sets[0]} if the exporter reads {COUNTER_SETS[other_sets[0]]}, or " + hint
        )
    return diag(
        "metric-not-exported",
        f"{where} is not exported: {COUNTER_SETS[monitoring.counters]} does not enable it, so the alert can never fire",
        at,
        hint=hint,
    )


def _function_finding(rule: AlertRule, function: str, metric: str, column: int, kind: str | None) -> Diagnostic | None:
    at = (*rule.path, "expr")
    where = f"alert {rule.alert}: {function}() of {metric} ({place(rule.expr, column)} of the expression)"
    if function in COUNTER_FUNCTIONS and kind == GAUGE:
        if metric == XID:
            return diag(
                "counter-function-on-gauge",
                f"{where}: {XID} is a gauge holding the code of the last XID "
                "error until the exporter restarts, not a count",
                at,
                hint=_XID_HINT,
            )
        return diag(
            "counter-function-on-gauge",
            f"{where}: {metric} is a gauge, and {function}() reads every drop of it as a counter reset",
            at,
            hint=f"use deriv({metric}[...]) for its rate of change, or compare its value",
        )
    if metric == XID and function in ARITHMETIC:
        return diag(
            "xid-code-as-number",
            f"{where}: the value of {XID} is an XID code, and codes do not add up",
            at,
            hint=_XID_HINT,
        )
    if function in GAUGE_FUNCTIONS and kind == COUNTER:
        return diag(
            "gauge-function-on-counter",
            f"{where}: {metric} is a counter, and {function}() does not handle its resets",
            at,
            hint=f"use rate({metric}[...]) or increase({metric}[...])",
        )
    return None


_XID_HINT = (
    f"alert on {XID} != 0, or count XIDs with DCGM_EXP_XID_ERRORS_COUNT > 0 (enable that row in the exporter's "
    "counter file and add DCGM_EXP_XID_ERRORS_COUNT: gauge to monitoring.extraCounters)"
)


def _settings(cluster: Cluster, monitoring: Monitoring) -> Iterator[Diagnostic]:
    base = monitoring.path
    pools = monitored_pools(cluster)
    # What no pool has is not known when pools were left out for errors already reported.
    if not pools and not monitoring.extra_rules and cluster.complete:
        yield diag(
            "monitoring-setting-unused",
            "no pool has NVIDIA GPUs, whose metrics the DCGM exporter reports, and "
            "there are no extraRules: the policy gets no alerts",
            base,
            hint="remove monitoring, or add your own rules under monitoring.extraRules",
        )
    yield from _alerts_not_generated(monitoring, pools)
    products = {p.product for p in pools}
    for product in monitoring.rated_power:
        if product not in products and cluster.complete:
            suggestion = closest(product, products)
            yield diag(
                "monitoring-setting-unused",
                f"no pool with NVIDIA GPUs has the product '{product}': its rated power applies to nothing",
                (*base, "ratedPower", product),
                at_key=True,
                hint=f"did you mean '{suggestion}'?" if suggestion else "remove it",
            )
    monitored = {p.name for p in pools}
    for name in monitoring.own_thresholds:
        if name not in monitored:
            yield diag(
                "monitoring-setting-unused",
                f"pool '{name}' has no NVIDIA GPUs: the DCGM exporter reports "
                "nothing of it, so its thresholds apply to nothing",
                (*base, "pools", name),
                at_key=True,
                hint="remove it",
            )
    owners = {ns: t.name for t in cluster.tenants for ns in t.namespaces}
    if monitoring.namespace in owners:
        yield diag(
            "alerts-in-tenant-namespace",
            f"the GPU alerts go to namespace '{monitoring.namespace}', which "
            f"tenant '{owners[monitoring.namespace]}' owns: its users may edit or delete them",
            (*base, "namespace"),
            hint="put them in the monitoring stack's namespace, e.g. monitoring",
        )


def _alerts_not_generated(monitoring: Monitoring, pools: list[Pool]) -> Iterator[Diagnostic]:
    """Thresholds of a pool that policyc cannot turn into an alert: a power limit of a card of unknown rated power, low
    utilisation of MIG devices the exporter does not measure."""
    for pool in pools:
        t = monitoring.thresholds[pool.name]
        if t.power is not None and rated_power(pool.product, monitoring) is None:
            yield diag(
                "alert-not-generated",
                f"pool '{pool.name}' gets no power alert: policyc does not know the rated power of the {pool.product}",
                (*pool.path, "gpu", "product"),
                hint=f"add it to monitoring.ratedPower ({pool.product}: <watts from its datasheet>), or set "
                f"monitoring.pools.{pool.name}.power: false",
            )
        if t.low_utilisation is not None and utilisation_metric(pool, monitoring) is None:
            yield diag(
                "alert-not-generated",
                f"pool '{pool.name}' gets no low-utilisation alert: the DCGM exporter "
                "reports no DCGM_FI_DEV_GPU_UTIL for MIG devices, and its counter file does not enable "
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                (*pool.path, "gpu", "mig"),
                hint="set monitoring.counters: dcp-metrics-included (or add DCGM_FI_PROF_GR_ENGINE_ACTIVE: gauge "
                f"to monitoring.extraCounters), or set monitoring.pools.{pool.name}.lowUtilisation: false",
            )

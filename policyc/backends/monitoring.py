"""GPU alerts: `spec.monitoring` -> one `monitoring.coreos.com/v1` PrometheusRule, `monitoring/gpu-alerts.yaml`.

A group per pool of NVIDIA GPUs (`gpu.pool.<pool>`), because thresholds depend on the card: the power alert compares
with the card's rated power, the memory alert's description states the card's memory. A pool's GPUs are selected by
their node names in the DCGM exporter's `Hostname` label (`monitoring.nodeLabel`), as a regex policyc writes from the
pool's nodes: the exporter's `modelName` ("NVIDIA H100 80GB HBM3") is not the GPU Feature Discovery product policyc
knows, and two pools may share a card. The user's own rules (`monitoring.extraRules`) form the group `gpu.extra`.

Defaults and facts (the model's fields carry them too):

- 85 °C for 5m: Datadog's recommended DCGM monitor (DataDog/integrations-core dcgm/assets/monitors/
  gpu_temperature.json: avg over 5m > 85).
- Metrics and types: NVIDIA/dcgm-exporter etc/default-counters.csv (`policyc.gpu.promql.FIELDS`). DCGM_FI_DEV_XID_ERRORS
  is a gauge holding the last XID code until the exporter restarts (NVIDIA/dcgm-exporter#500, #190): the alert is
  `!= 0` and keeps firing until then; DCGM_EXP_XID_ERRORS_COUNT, when the counter file enables it, counts XIDs in a
  window (`> 0`, labelled `xid`).
- DCGM_FI_DEV_GPU_UTIL is not reported for MIG devices (NVIDIA/dcgm-exporter#216, #430: use
  DCGM_FI_PROF_GR_ENGINE_ACTIVE, a 0-1 ratio, in dcp-metrics-included.csv): a MIG pool's low-utilisation alert reads
  that field, or is left out with a warning.
- Rated power per card: `RATED_POWER`, NVIDIA's datasheets.
"""

from __future__ import annotations

import re
from decimal import Decimal

from policyc.artifacts import Artifact, Manifest
from policyc.diagnostics import Path
from policyc.gpu.accelerators import NVIDIA
from policyc.gpu.promql import XID, duration_ms, enabled_fields, node_regex, number
from policyc.ir import AlertRule, AlertThresholds, Cluster, Monitoring, Pool
from policyc.k8s.objects import metadata

PATH = "monitoring/gpu-alerts.yaml"
RULE_SUFFIX = "-gpu-alerts"
"""The PrometheusRule is named `<policy>-gpu-alerts`."""
POOL_GROUP = "gpu.pool."
"""A pool's group is `gpu.pool.<pool>`."""
EXTRA_GROUP = "gpu.extra"
GPU_UTILISATION = "DCGM_FI_DEV_GPU_UTIL"
MIG_UTILISATION = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
UTILISATION_FULL = {GPU_UTILISATION: Decimal(100), MIG_UTILISATION: Decimal(1)}
"""The low-utilisation alert's metrics -> their value at 100 %."""
XID_COUNT = "DCGM_EXP_XID_ERRORS_COUNT"
COUNTER_WINDOW = "15m"
"""How far back an alert on a counter (remapped rows, ECC errors) looks: it fires for this long after each increase."""

RATED_POWER: tuple[tuple[re.Pattern[str], str, int], ...] = tuple(
    (re.compile(pattern), card, watts)
    for pattern, card, watts in (
        (r"H100.*(PCIE|PCIe)", "H100 PCIe", 350),  # NVIDIA H100 PCIe product brief PB-11133-001: TDP 350 W
        (r"H100.*NVL", "H100 NVL", 400),  # NVIDIA H100 datasheet: 350-400 W (configurable)
        (r"H100", "H100 SXM", 700),  # NVIDIA H100 datasheet: up to 700 W (configurable)
        (r"H200.*NVL", "H200 NVL", 600),  # NVIDIA H200 datasheet: up to 600 W
        (r"H200", "H200 SXM", 700),  # NVIDIA H200 datasheet: up to 700 W
        (r"A100.*(PCIE|PCIe).*40GB|A100.*40GB.*(PCIE|PCIe)", "A100 40GB PCIe", 250),  # NVIDIA A100 datasheet
        (r"A100.*(PCIE|PCIe)", "A100 80GB PCIe", 300),  # NVIDIA A100 datasheet
        (r"A100", "A100 SXM", 400),  # NVIDIA A100 datasheet: 400 W
        (r"A40(-|$)", "A40", 300),  # NVIDIA A40 datasheet
        (r"A30(-|$)", "A30", 165),  # NVIDIA A30 datasheet
        (r"A10(-|$)", "A10", 150),  # NVIDIA A10 datasheet
        (r"L40S", "L40S", 350),  # NVIDIA L40S datasheet
        (r"L40(-|$)", "L40", 300),  # NVIDIA L40 datasheet
        (r"L4(-|$)", "L4", 72),  # NVIDIA L4 datasheet
        (r"T4(-|$)", "T4", 70),  # NVIDIA T4 datasheet
    )
)
"""GPU Feature Discovery product name -> (card, rated power per card in W), first match wins (the PCIe and NVL
variants before the SXM one). NVIDIA's datasheets state these maximum board powers (TDP); a card capped lower by its
site draws less. Products not here (H20, B200 ...) take `monitoring.ratedPower`."""
SEVERITY = {
    "GpuTemperatureHigh": "warning",
    "GpuMemoryTemperatureHigh": "warning",
    "GpuMemoryAlmostFull": "warning",
    "GpuPowerHigh": "warning",
    "GpuUnderutilised": "info",
    "GpuXidError": "warning",
    "GpuRowRemapFailed": "critical",
    "GpuRowsRemappedUncorrectable": "warning",
    "GpuEccDoubleBitErrors": "critical",
    "GpuPagesRetiredDoubleBit": "warning",
}
"""Every alert policyc writes and its severity: XIDs are warnings (applications cause many of them), a failed row
remap and double-bit errors are critical (the memory returned wrong data or cannot be repaired)."""


def rated_power(product: str, monitoring: Monitoring) -> tuple[Decimal, str] | None:
    """(watts, where the figure comes from) for a card, or None when neither the policy nor the table knows it."""
    if product in monitoring.rated_power:
        return Decimal(str(monitoring.rated_power[product])), "monitoring.ratedPower"
    return datasheet_power(product)


def datasheet_power(product: str) -> tuple[Decimal, str] | None:
    """(watts, the datasheet stating them) for a card of policyc's table (`RATED_POWER`), or None."""
    for pattern, card, watts in RATED_POWER:
        if pattern.search(product):
            return Decimal(watts), f"the {card}'s datasheet"
    return None


def monitored_pools(cluster: Cluster) -> list[Pool]:
    """The pools that get GPU alerts: those whose GPUs the DCGM exporter reports (NVIDIA's) and whose nodes are listed
    by name, which the alerts select their GPUs by (a pool by size has no names to select)."""
    return [p for p in cluster.pools if p.vendor == NVIDIA.name and p.named]


def utilisation_metric(pool: Pool, monitoring: Monitoring) -> tuple[str, Decimal] | None:
    """(metric, its value at 100 %) the pool's low-utilisation alert reads, or None when its exporter has none."""
    if pool.mig is None:
        return GPU_UTILISATION, UTILISATION_FULL[GPU_UTILISATION]
    if MIG_UTILISATION in enabled_fields(monitoring.counters, monitoring.extra_counters):
        return MIG_UTILISATION, UTILISATION_FULL[MIG_UTILISATION]
    return None


def emit(cluster: Cluster) -> list[Artifact]:
    monitoring = cluster.monitoring
    if monitoring is None:
        return []
    pools = monitored_pools(cluster)
    groups = [{"name": f"{POOL_GROUP}{p.name}", "rules": _pool_rules(cluster, monitoring, p)} for p in pools]
    groups = [g for g in groups if g["rules"]]
    if monitoring.extra_rules:
        groups.append({"name": EXTRA_GROUP, "rules": [_extra_rule(cluster, r) for r in monitoring.extra_rules]})
    if not groups:  # no NVIDIA pool and no rule of the user's: a warning says so (PC475)
        return []
    obj = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata(
            f"{cluster.name}{RULE_SUFFIX}", cluster.name, namespace=monitoring.namespace, labels=monitoring.labels
        ),
        "spec": {"groups": groups},
    }
    sources: tuple[Path, ...] = (monitoring.path, *(p.path for p in pools))
    return [Artifact(PATH, (Manifest(obj, sources),), synced=True)]


def _pool_rules(cluster: Cluster, monitoring: Monitoring, pool: Pool) -> list[dict]:
    alerts = _PoolAlerts(cluster, monitoring, pool)
    t: AlertThresholds = monitoring.thresholds[pool.name]
    alerts.temperatures(t)
    if t.memory_used is not None:
        alerts.memory_used(Decimal(str(t.memory_used)))
    power = rated_power(pool.product, monitoring)
    if t.power is not None and power is not None:
        alerts.power(Decimal(str(t.power)), *power)
    utilisation = utilisation_metric(pool, monitoring)
    if t.low_utilisation is not None and utilisation is not None:
        alerts.low_utilisation(*t.low_utilisation, *utilisation)
    enabled = enabled_fields(monitoring.counters, monitoring.extra_counters)
    if t.xid_errors:
        alerts.xid_errors(enabled)
    if t.ecc_or_remap:
        alerts.memory_errors(enabled)
    return alerts.rules


class _PoolAlerts:
    """The alert rules of one pool, in the order they are added."""

    def __init__(self, cluster: Cluster, monitoring: Monitoring, pool: Pool):
        self.cluster, self.monitoring, self.pool = cluster, monitoring, pool
        self.sel = f'{monitoring.node_label}=~"{node_regex(pool.nodes)}"'
        self.where = f"GPU {{{{ $labels.gpu }}}} on node {{{{ $labels.{monitoring.node_label} }}}} of pool {pool.name}"
        self.held = f" for {monitoring.for_}" if duration_ms(monitoring.for_) else ""
        self.rules: list[dict] = []

    def rule(self, alert: str, expr: str, summary: str, description: str, *, pending: bool = True) -> None:
        """A rule; `pending`: it fires once its condition has held for the policy's `for` (else at once)."""
        out: dict = {"alert": alert, "expr": expr}
        if pending and duration_ms(self.monitoring.for_):
            out["for"] = self.monitoring.for_
        out["labels"] = {"policyc": self.cluster.name, "pool": self.pool.name, "severity": SEVERITY[alert]}
        out["annotations"] = {"description": description, "summary": summary}
        self.rules.append(out)

    def temperatures(self, t: AlertThresholds) -> None:
        sel, where, name, held = self.sel, self.where, self.pool.name, self.held
        if t.gpu_temperature is not None:
            self.rule(
                "GpuTemperatureHigh",
                f"DCGM_FI_DEV_GPU_TEMP{{{sel}}} > {t.gpu_temperature}",
                f"GPU hotter than {t.gpu_temperature} °C in pool {name}",
                f"{where} is at {{{{ $value }}}} °C, above the pool's threshold of {t.gpu_temperature} °C{held}.",
            )
        if t.memory_temperature is not None:
            self.rule(
                "GpuMemoryTemperatureHigh",
                f"DCGM_FI_DEV_MEMORY_TEMP{{{sel}}} > {t.memory_temperature}",
                f"GPU memory hotter than {t.memory_temperature} °C in pool {name}",
                f"The memory of {where} is at {{{{ $value }}}} °C, above the pool's threshold of "
                f"{t.memory_temperature} °C{held}.",
            )

    def memory_used(self, fraction: Decimal) -> None:
        sel = self.sel
        self.rule(
            "GpuMemoryAlmostFull",
            f"DCGM_FI_DEV_FB_USED{{{sel}}} / (DCGM_FI_DEV_FB_USED{{{sel}}} + DCGM_FI_DEV_FB_FREE{{{sel}}}) "
            f"> {number(fraction)}",
            f"GPU memory above {number(fraction * 100)}% in pool {self.pool.name}",
            f"{self.where} uses {{{{ $value | humanizePercentage }}}} of its memory, above the pool's threshold of "
            f"{number(fraction * 100)}%{_of_memory(fraction, self.pool)}{self.held}.",
        )

    def power(self, fraction: Decimal, watts: Decimal, source: str) -> None:
        """Above `fraction` of the card's rated `watts` (stated by `source`)."""
        limit = fraction * watts
        self.rule(
            "GpuPowerHigh",
            f"DCGM_FI_DEV_POWER_USAGE{{{self.sel}}} > {number(limit)}",
            f"GPU drawing more than {number(limit)} W in pool {self.pool.name}",
            f"{self.where} draws {{{{ $value | humanize }}}} W, above {number(limit)} W: {number(fraction * 100)}% of "
            f"the {self.pool.product}'s rated {number(watts)} W ({source}){self.held}.",
        )

    def low_utilisation(self, below: float, window: str, metric: str, full: Decimal) -> None:
        """Below `below` % of `metric` (`full` at 100 %) on average over `window`."""
        limit = Decimal(str(below)) / 100 * full
        shown = "{{ $value | humanize }}%" if full == 100 else "{{ $value | humanizePercentage }}"
        self.rule(
            "GpuUnderutilised",
            f"avg_over_time({metric}{{{self.sel}}}[{window}]) < {number(limit)}",
            f"GPU idle over {window} in pool {self.pool.name}",
            f"{self.where} averaged {shown} utilisation ({metric}) over {window}, below the pool's threshold of "
            f"{number(Decimal(str(below)))}%.",
        )

    def xid_errors(self, enabled: dict[str, str]) -> None:
        sel, where, name = self.sel, self.where, self.pool.name
        if XID_COUNT in enabled:
            self.rule(
                "GpuXidError",
                f"{XID_COUNT}{{{sel}}} > 0",
                f"XID errors in pool {name}",
                f"{where} reported {{{{ $value }}}} XID {{{{ $labels.xid }}}} error(s) in the exporter's window.",
                pending=False,
            )
        else:
            self.rule(
                "GpuXidError",
                f"{XID}{{{sel}}} != 0",
                f"XID error in pool {name}",
                f"{where} reported XID {{{{ $value }}}}. {XID} holds the last XID until the exporter restarts, "
                "so this alert fires until then.",
                pending=False,
            )

    def memory_errors(self, enabled: dict[str, str]) -> None:
        sel, where, pool = self.sel, self.where, self.pool.name
        self.rule(
            "GpuRowRemapFailed",
            f"DCGM_FI_DEV_ROW_REMAP_FAILURE{{{sel}}} > 0",
            f"GPU row remapping failed in pool {pool}",
            f"{where} failed to remap a memory row (DCGM_FI_DEV_ROW_REMAP_FAILURE): drain the node and follow "
            "NVIDIA's memory error recovery for the card.",
            pending=False,
        )
        self.rule(
            "GpuRowsRemappedUncorrectable",
            f"increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{{sel}}}[{COUNTER_WINDOW}]) > 0",
            f"GPU rows remapped after uncorrectable errors in pool {pool}",
            f"{where} remapped memory rows after uncorrectable errors in the last {COUNTER_WINDOW}: the remap takes "
            "effect at the GPU's next reset.",
            pending=False,
        )
        if "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" in enabled:
            self.rule(
                "GpuEccDoubleBitErrors",
                f"increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{sel}}}[{COUNTER_WINDOW}]) > 0",
                f"GPU double-bit ECC errors in pool {pool}",
                f"{where} had double-bit (uncorrectable) ECC errors in the last {COUNTER_WINDOW}.",
                pending=False,
            )
        if "DCGM_FI_DEV_RETIRED_DBE" in enabled:
            self.rule(
                "GpuPagesRetiredDoubleBit",
                f"increase(DCGM_FI_DEV_RETIRED_DBE{{{sel}}}[{COUNTER_WINDOW}]) > 0",
                f"GPU memory pages retired after double-bit errors in pool {pool}",
                f"{where} retired memory pages after double-bit errors in the last {COUNTER_WINDOW}.",
                pending=False,
            )


def _of_memory(fraction: Decimal, pool: Pool) -> str:
    """' (76 GiB of the NVIDIA-H100-80GB's 80 GiB)' when the pool states its cards' memory."""
    if pool.gpu_memory is None:
        return ""
    value = pool.gpu_memory.value  # bytes, a Fraction
    total = Decimal(value.numerator) / Decimal(value.denominator)
    return f" ({_gib(fraction * total)} of the {pool.product}'s {_gib(total)})"


def _gib(size: Decimal) -> str:
    return f"{number((size / 2**30).quantize(Decimal('0.1')))} GiB"


def _extra_rule(cluster: Cluster, rule: AlertRule) -> dict:
    out: dict = {"alert": rule.alert, "expr": rule.expr}
    if rule.for_ is not None:
        out["for"] = rule.for_
    if rule.keep_firing_for is not None:
        out["keep_firing_for"] = rule.keep_firing_for
    out["labels"] = {"policyc": cluster.name, **rule.labels}
    if rule.annotations:
        out["annotations"] = rule.annotations
    return out

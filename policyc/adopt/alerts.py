"""policyc's PrometheusRule of GPU alerts read back into `spec.monitoring`: the inverse of
`policyc.backends.monitoring`, which writes a group per pool (`gpu.pool.<pool>`) and the user's rules (`gpu.extra`).

Each pool's thresholds are read from its rules' expressions (the threshold is the number the expression compares
with); the policy's `thresholds` are what most pools have, and a pool that differs gets its own (`pools`). An alert
missing reads as that alert turned off (`false`), which builds the same group, but the power alert of a card whose
rated power is not known: its absence tells nothing, and the threshold is left to the others."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal

from ruamel.yaml.comments import CommentedMap

from policyc.adopt.draft import Draft, block, flow
from policyc.backends.monitoring import (
    EXTRA_GROUP,
    MIG_UTILISATION,
    POOL_GROUP,
    RULE_SUFFIX,
    UTILISATION_FULL,
    XID_COUNT,
    datasheet_power,
)
from policyc.cluster.reading import ObjectRef
from policyc.cluster.source import ClusterSource, Kind
from policyc.gpu.promql import COUNTER_SETS, FIELDS, XID, duration_ms
from policyc.k8s.objects import MANAGED_BY, PART_OF
from policyc.language.model.policy import AlertThresholds, Monitoring

PROMETHEUS_RULE = Kind("monitoring.coreos.com", "PrometheusRule")
_COMPARED = re.compile(r"(?:>|<|!=) ([0-9.]+)$")
_SELECTOR = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)=~\"")
_UTILISATION = re.compile(r"^avg_over_time\(([A-Z_]+)\{.*\}\[([0-9a-z]+)\]\) < ([0-9.]+)$")
_POWER = re.compile(r" W: ([0-9.]+)% of the (.+)'s rated ([0-9.]+) W \(([^()]*)\)")
_CARD_MEMORY = re.compile(r" GiB of the .+'s ([0-9.]+) GiB\)")
_ECC_FIELDS = {
    "GpuEccDoubleBitErrors": "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "GpuPagesRetiredDoubleBit": "DCGM_FI_DEV_RETIRED_DBE",
}
_DEFAULTS = AlertThresholds().model_dump(by_alias=True)
"""The thresholds' defaults, by the policy's (camelCase) name."""
_MONITORING = {name: field.default for name, field in Monitoring.model_fields.items()}
_PENDING = ("GpuTemperatureHigh", "GpuMemoryTemperatureHigh", "GpuMemoryAlmostFull", "GpuPowerHigh", "GpuUnderutilised")
"""The alerts that wait for the policy's `for` before they fire."""


def read_monitoring(source: ClusterSource, draft: Draft) -> None:
    """`spec.monitoring` from policyc's PrometheusRule, where the cluster holds one."""
    rules = [obj for obj in source.objects(PROMETHEUS_RULE) if _policycs(obj)]
    if len(rules) != 1:
        return  # none, or several policies' (the import writes one policy): those are listed as not expressed
    obj = rules[0]
    products = {p["name"]: p["gpu"]["product"] for p in draft.spec.get("nodePools") or [] if "gpu" in p}
    reading = _Reading(products)
    reading.groups((obj.get("spec") or {}).get("groups") or [])
    metadata = obj["metadata"]
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k not in (MANAGED_BY, PART_OF)}
    draft.spec["monitoring"] = reading.block(metadata.get("namespace"), labels)
    for pool in draft.spec.get("nodePools") or []:
        if pool["name"] in reading.card_memory:
            pool["gpu"].setdefault("memory", reading.card_memory[pool["name"]])  # a pool with alerts has GPUs
    draft.expressed.add(ObjectRef.of(obj))


def _policycs(obj: dict) -> bool:
    """Whether a PrometheusRule is policyc's of GPU alerts."""
    metadata = obj["metadata"]
    return (metadata.get("labels") or {}).get(MANAGED_BY) == "policyc" and metadata["name"].endswith(RULE_SUFFIX)


class _Reading:
    """What the rules of every group tell, gathered pool by pool."""

    def __init__(self, products: dict[str, str]) -> None:
        self.products = products
        """Pool -> its GPU product, as the import read it from the nodes."""
        self.thresholds: dict[str, dict[str, object]] = {}
        """Pool -> the thresholds its rules show (those its rules cannot tell are not there)."""
        self.rated_power: dict[str, float] = {}
        self.fields: set[str] = set()
        """Exporter fields the alerts read that not every counter file has."""
        self.node_label: str | None = None
        self.pending_for: set[str] = set()
        self.extra_rules: list[dict] = []
        self.card_memory: dict[str, str] = {}
        """Pool -> its cards' memory, as the memory alert's description states it (the policy's `gpu.memory`)."""

    def groups(self, groups: list[dict]) -> None:
        for group in groups:
            name, rules = str(group.get("name", "")), [r for r in group.get("rules") or [] if _alert(r)]
            if name.startswith(POOL_GROUP):
                self.pool(name.removeprefix(POOL_GROUP), rules)
            elif name == EXTRA_GROUP:
                self.extra_rules = [_extra_rule(r) for r in rules]

    def pool(self, name: str, rules: list[dict]) -> None:
        by_alert = {r["alert"]: r for r in rules}
        shown: dict[str, object] = {}
        for alert, key, read in (
            ("GpuTemperatureHigh", "gpuTemperature", int),
            ("GpuMemoryTemperatureHigh", "memoryTemperature", int),
            ("GpuMemoryAlmostFull", "memoryUsed", float),
        ):
            found = _COMPARED.search(by_alert[alert]["expr"]) if alert in by_alert else None
            shown[key] = read(found.group(1)) if found else False
        if shown["memoryUsed"]:
            self._card_memory(name, by_alert["GpuMemoryAlmostFull"])
        shown["xidErrors"] = "GpuXidError" in by_alert
        shown["eccOrRemap"] = "GpuRowRemapFailed" in by_alert
        self._power(name, by_alert.get("GpuPowerHigh"), shown)
        self._utilisation(by_alert.get("GpuUnderutilised"), shown)
        if "GpuXidError" in by_alert and XID not in by_alert["GpuXidError"]["expr"]:
            self.fields.add(XID_COUNT)
        self.fields |= {field for alert, field in _ECC_FIELDS.items() if alert in by_alert}
        for rule in rules:
            selector = _SELECTOR.search(rule["expr"])
            self.node_label = self.node_label or (selector.group(1) if selector else None)
            if rule["alert"] in _PENDING:
                self.pending_for.add(rule.get("for", "0s"))
        self.thresholds[name] = shown

    def _card_memory(self, pool: str, rule: dict) -> None:
        found = _CARD_MEMORY.search(str((rule.get("annotations") or {}).get("description", "")))
        if found:
            self.card_memory[pool] = f"{found.group(1)}Gi"

    def _power(self, pool: str, rule: dict | None, shown: dict[str, object]) -> None:
        """The power fraction, and the card's rated power where the policy stated it. No alert: none, for a card of
        policyc's table; for another, nothing is known (it has no rated power)."""
        if rule is None:
            if datasheet_power(self.products.get(pool, "")) is not None:
                shown["power"] = False
            return
        found = _POWER.search(str((rule.get("annotations") or {}).get("description", "")))
        if found is None:
            return
        percent, product, watts, stated_by = found.groups()
        shown["power"] = float(Decimal(percent) / 100)
        if stated_by == "monitoring.ratedPower":
            self.rated_power[product] = _plain(Decimal(watts))

    def _utilisation(self, rule: dict | None, shown: dict[str, object]) -> None:
        found = _UTILISATION.match(rule["expr"]) if rule is not None else None
        if found is None or found.group(1) not in UTILISATION_FULL:
            if rule is None:
                shown["lowUtilisation"] = False
            return
        metric, window, limit = found.groups()
        if metric == MIG_UTILISATION:
            self.fields.add(metric)
        below = Decimal(limit) / UTILISATION_FULL[metric] * 100
        shown["lowUtilisation"] = {"below": _plain(below), "for": window}

    def block(self, namespace: str | None, labels: dict[str, str]) -> CommentedMap:
        out: dict = {}
        if namespace and namespace != _MONITORING["namespace"]:
            out["namespace"] = namespace
        if labels:
            out["labels"] = flow(dict(sorted(labels.items())))
        pending = sorted(self.pending_for, key=lambda d: duration_ms(d) or 0)
        if pending and pending[-1] != _MONITORING["for_"]:
            out["for"] = pending[-1]
        if self.node_label and self.node_label != _MONITORING["node_label"]:
            out["nodeLabel"] = self.node_label
        out.update(self._counters())
        if self.rated_power:
            out["ratedPower"] = flow(dict(sorted(self.rated_power.items())))
        common, own = self._thresholds()
        if common:
            out["thresholds"] = common
        if own:
            out["pools"] = own
        if self.extra_rules:
            out["extraRules"] = self.extra_rules
        return block(out)

    def _counters(self) -> dict:
        """`counters`: the first counter file that has every field the alerts read (of those some file has), where
        not the default; `extraCounters`: the fields it lacks."""
        counters = next(
            (s for s in COUNTER_SETS if all(s in FIELDS[f].sets for f in self.fields if FIELDS[f].sets)), "default"
        )
        out: dict = {"counters": counters} if counters != _MONITORING["counters"] else {}
        extra = {f: FIELDS[f].type for f in sorted(self.fields) if counters not in FIELDS[f].sets}
        if extra:
            out["extraCounters"] = flow(extra)
        return out

    def _thresholds(self) -> tuple[dict, dict]:
        """(the thresholds most pools have, where not the default; each pool's that differ from them)."""
        common: dict[str, object] = {}
        for key in _DEFAULTS:
            values = Counter(repr(t[key]) for t in self.thresholds.values() if key in t)
            if values:
                top = values.most_common(1)[0][0]
                common[key] = next(t[key] for t in self.thresholds.values() if repr(t.get(key)) == top)
        own = {}
        for pool, shown in self.thresholds.items():
            differs = {k: _written(v) for k, v in shown.items() if v != common[k]}
            if differs:
                own[pool] = flow(differs)
        return {k: _written(v) for k, v in common.items() if v != _DEFAULTS[k]}, own


def _alert(rule: object) -> bool:
    """Whether a rule is an alert with an expression (anything else in a group is left alone)."""
    return isinstance(rule, dict) and isinstance(rule.get("alert"), str) and isinstance(rule.get("expr"), str)


def _written(value: object) -> object:
    return flow(value) if isinstance(value, dict) else value


def _plain(number: Decimal) -> float:
    """A whole number as an int (10, not 10.0), as people write it."""
    return int(number) if number == number.to_integral_value() else float(number)


def _extra_rule(rule: dict) -> dict:
    """A rule of the user's own, as `monitoring.extraRules` writes it (policyc's own label taken off)."""
    out = {"alert": rule["alert"], "expr": rule["expr"]}
    for key, name in (("for", "for"), ("keep_firing_for", "keepFiringFor")):
        if key in rule:
            out[name] = rule[key]
    labels = {k: v for k, v in (rule.get("labels") or {}).items() if k != "policyc"}
    if labels:
        out["labels"] = flow(labels)
    if rule.get("annotations"):
        out["annotations"] = flow(rule["annotations"])
    return out

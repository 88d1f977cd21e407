"""The GPU alerts read back (`policyc.adopt.alerts`): policies whose `spec.monitoring` sets what the shipped
examples leave at its defaults give back the same PrometheusRule."""

from __future__ import annotations

import json
import re

import pytest

from policyc.adopt.importer import import_policy
from policyc.cluster.source import DumpSource
from policyc.compiler import compile_text
from tests.adopt.clusters import synced_objects, write_dump
from tests.conftest import POLICIES

ALERTS = {
    "ai-prod": """  monitoring:
    namespace: observability
    for: 10m
    nodeLabel: node
    extraCounters: {DCGM_EXP_XID_ERRORS_COUNT: gauge, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: counter}
    ratedPower: {NVIDIA-H20: 400, NVIDIA-L4: 70}
    thresholds: {gpuTemperature: 80, memoryTemperature: 95, memoryUsed: false, xidErrors: false}
    pools:
      a100-train: {eccOrRemap: false, power: 0.9, xidErrors: true}
      h20-hybrid: {memoryUsed: 0.8, lowUtilisation: {below: 25, for: 30m}}
""",
    # the MIG pool's low-utilisation alert reads the profiling set's engine activity (a 0-1 ratio)
    "ai-hetero": """  monitoring:
    for: "0s"
    counters: dcp-metrics-included
    thresholds: {lowUtilisation: {below: 5, for: 3h}, power: false}
""",
}


@pytest.mark.parametrize("example", sorted(ALERTS))
def test_alerts_set_away_from_their_defaults_come_back(example: str, tmp_path) -> None:
    text = (POLICIES / f"{example}.yaml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^  monitoring:.*\n(    .*\n|\n)*", "", text)  # the example's own block, if any
    text = text.replace("\n  tenants:\n", f"\n{ALERTS[example]}  tenants:\n", 1)
    built = compile_text(text, f"{example}.yaml")
    assert built.ok, [(d.code, d.message) for d in built.report.errors]
    [(key, rule)] = [(k, o) for k, o in synced_objects(built).items() if k[1] == "PrometheusRule"]
    imported = import_policy(DumpSource(write_dump(built, tmp_path / "cluster.json")))
    again = compile_text(imported, f"{example}.yaml")
    assert again.ok, [(d.code, d.message) for d in again.report.errors]
    assert synced_objects(again)[key] == rule
    assert "PrometheusRule" not in imported[: imported.index("apiVersion:")], "not listed as not expressed"


def test_an_edited_rule_that_is_no_alert_is_left_alone(tmp_path) -> None:
    """A rule without its expression (a hand edit of the PrometheusRule) is not read; the import does not fail."""
    built = compile_text((POLICIES / "ai-prod.yaml").read_text(encoding="utf-8"), "ai-prod.yaml")
    dump = write_dump(built, tmp_path / "cluster.json")
    cluster = json.loads(dump.read_text(encoding="utf-8"))
    [rule] = [o for o in cluster["items"] if o["kind"] == "PrometheusRule"]
    del rule["spec"]["groups"][0]["rules"][0]["expr"]
    rule["spec"]["groups"][0]["rules"].append("not a rule")
    dump.write_text(json.dumps(cluster), encoding="utf-8")
    imported = import_policy(DumpSource(dump))
    assert compile_text(imported, "ai-prod.yaml").ok
    assert "  monitoring:\n" in imported

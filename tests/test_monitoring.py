"""GPU alerts (`spec.monitoring`): the PrometheusRule, checked by the real promtool, and policyc's own lint.

Expected thresholds are worked out by hand in the comments (rated power x fraction, memory x fraction)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from policyc.backends.monitoring import PATH, RATED_POWER
from policyc.checks.monitoring import lint
from policyc.commands.cli import main
from policyc.compiler import Compilation, compile_text
from policyc.gpu.promql import (
    FIELDS,
    PromqlError,
    duration_hint,
    duration_ms,
    metric_uses,
    node_regex,
)
from policyc.ir import AlertRule
from policyc.language.model.policy import Monitoring
from policyc.output import yaml_emitter
from tests.conftest import POLICIES, REPO, require_tool

EXAMPLE = (POLICIES / "ai-prod.yaml").read_text(encoding="utf-8")
AI_PROD = re.sub(r"\n  monitoring:.*?\n\n", "\n", EXAMPLE, count=1, flags=re.S)
"""The full example without its own monitoring section, which the tests add in their own forms."""
AI_HETERO = (POLICIES / "ai-hetero.yaml").read_text(encoding="utf-8")

MONITORING = """\
  monitoring:
    labels: {release: kube-prometheus-stack}
    ratedPower: {NVIDIA-H20: 400}
    thresholds:
      power: 0.95
      lowUtilisation: {below: 10, for: 2h}
    pools:
      t4-serve: {lowUtilisation: false}
      h100-train: {gpuTemperature: 83}
    extraRules:
      - alert: GpuPcieReplays
        expr: sum by (Hostname) (increase(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[1h])) > 100
        for: 10m
        labels: {severity: warning}
        annotations: {summary: "PCIe link of {{ $labels.Hostname }} retries often"}

"""


def with_monitoring(policy: str = AI_PROD, section: str = MONITORING) -> str:
    """The policy with a monitoring section before its tenants."""
    assert "\n  tenants:\n" in policy
    return policy.replace("\n  tenants:\n", "\n" + section + "  tenants:\n", 1)


def build(text: str) -> Compilation:
    return compile_text(text, "policy.yaml")


def prometheus_rule(c: Compilation) -> dict:
    [m] = [m for a in c.artifacts if a.path == PATH for m in a.manifests]
    return m.obj


def rules_of(c: Compilation, pool: str) -> dict[str, dict]:
    """Alert name -> rule, of the pool's group."""
    [group] = [g for g in prometheus_rule(c)["spec"]["groups"] if g["name"] == f"gpu.pool.{pool}"]
    return {r["alert"]: r for r in group["rules"]}


def codes(c: Compilation) -> list[str]:
    return sorted(d.code for d in c.report.diagnostics)


# --- the real oracle: promtool -----------------------------------------------------------------------------------


def promtool() -> str:
    return require_tool("promtool", "Debian: apt-get install prometheus")


def check_rules(c: Compilation, tmp_path: Path, corrupt: tuple[str, str] | None = None) -> subprocess.CompletedProcess:
    """promtool check rules on the `spec` of the emitted PrometheusRule (promtool reads plain rule files, and refuses
    the CRD's apiVersion/kind/metadata), written from the output file as policyc wrote it."""
    doc = YAML(typ="safe").load(c.files[PATH].data.decode("utf-8"))
    assert doc["kind"] == "PrometheusRule"
    text = yaml_emitter.dump(doc["spec"])
    if corrupt is not None:
        assert corrupt[0] in text
        text = text.replace(corrupt[0], corrupt[1], 1)
    rules = tmp_path / "gpu-alerts.rules.yaml"
    rules.write_text(text, encoding="utf-8")
    return subprocess.run([promtool(), "check", "rules", str(rules)], capture_output=True, text=True, timeout=60)


def test_promtool_accepts_the_rules_policyc_writes(tmp_path) -> None:
    c = build(with_monitoring())
    assert c.ok, [d.message for d in c.report.diagnostics]
    run = check_rules(c, tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    # 7 NVIDIA pools (h100-slurm's Slurm nodes too: the exporter runs there) x 7 alerts (temperature, memory, power,
    # low utilisation, XID, row remap failure, remapped rows), less t4-serve's low utilisation (turned off), plus the
    # one extra rule: 49 - 1 + 1 = 49.
    assert "SUCCESS: 49 rules found" in run.stdout


def test_promtool_rejects_an_extra_rule_policyc_cannot_parse(tmp_path) -> None:
    # Balanced brackets, so policyc's scan passes it; a label list without its closing ')' before the metric is a
    # parse error only promtool's real parser finds.
    broken = MONITORING.replace(
        "expr: sum by (Hostname) (increase(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[1h])) > 100",
        "expr: sum by (Hostname increase(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[1h])) > 100",
    )
    c = build(with_monitoring(section=broken))
    assert c.ok
    run = check_rules(c, tmp_path)
    assert run.returncode == 1
    assert '"GpuPcieReplays": could not parse expression' in run.stderr + run.stdout


def test_promtool_rejects_a_corrupted_expression_and_a_broken_template(tmp_path) -> None:
    c = build(with_monitoring())
    run = check_rules(c, tmp_path, corrupt=("> 83", "> > 83"))
    assert run.returncode == 1
    assert '"GpuTemperatureHigh": could not parse expression' in run.stderr + run.stdout
    run = check_rules(c, tmp_path, corrupt=("{{ $labels.Hostname }} retries", "{{ $labels.Hostname retries"))
    assert run.returncode == 1
    assert "GpuPcieReplays" in run.stderr + run.stdout


# --- the object -----------------------------------------------------------------------------------------------------


def test_one_prometheus_rule_passing_its_crd_schema_in_an_early_wave() -> None:
    c = build(with_monitoring())
    [artifact] = [a for a in c.artifacts if a.path == PATH]
    [manifest] = artifact.manifests
    obj = manifest.obj
    assert (obj["apiVersion"], obj["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    assert obj["metadata"]["name"] == "ai-prod-gpu-alerts"
    assert obj["metadata"]["namespace"] == "monitoring"
    assert obj["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    # It needs nothing policyc emits (its namespace is Prometheus's): the first wave, even before its CRD exists.
    assert obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "0"
    assert obj["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "SkipDryRunOnMissingResource=true"
    schema = json.loads((REPO / "schemas/crds/monitoring.coreos.com_prometheusrule_v1.json").read_text())
    jsonschema.validate(obj, schema)
    bad = json.loads(json.dumps(obj))
    bad["spec"]["groups"][0]["rules"][0]["for"] = "5 minutes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    assert PATH in c.files["kustomization.yaml"].data.decode()


def test_every_rule_is_labelled_and_described_with_its_pool_and_threshold() -> None:
    c = build(with_monitoring())
    groups = prometheus_rule(c)["spec"]["groups"]
    assert [g["name"] for g in groups] == [
        "gpu.pool.a100-train", "gpu.pool.a40-dev", "gpu.pool.h100-slurm", "gpu.pool.h100-train", "gpu.pool.h20-hybrid",
        "gpu.pool.l4-serve", "gpu.pool.t4-serve", "gpu.extra",
    ]  # fmt: skip
    for group in groups[:-1]:
        pool = group["name"].removeprefix("gpu.pool.")
        for rule in group["rules"]:
            assert rule["labels"]["pool"] == pool
            assert rule["labels"]["policyc"] == "ai-prod"
            assert rule["labels"]["severity"] in ("info", "warning", "critical")
            assert f"in pool {pool}" in rule["annotations"]["summary"]
            assert f"of pool {pool}" in rule["annotations"]["description"]
    [extra] = groups[-1]["rules"]
    assert extra["labels"] == {"policyc": "ai-prod", "severity": "warning"}
    assert extra["for"] == "10m"


def test_thresholds_per_pool() -> None:
    c = build(with_monitoring())
    h100, a100, h20 = rules_of(c, "h100-train"), rules_of(c, "a100-train"), rules_of(c, "h20-hybrid")
    l4, t4, a40 = rules_of(c, "l4-serve"), rules_of(c, "t4-serve"), rules_of(c, "a40-dev")
    # power: 0.95 of the card's rated power
    assert h100["GpuPowerHigh"]["expr"].endswith("} > 665")  # H100 SXM 700 W x 0.95
    assert a100["GpuPowerHigh"]["expr"].endswith("} > 380")  # A100 SXM 400 W x 0.95
    assert h20["GpuPowerHigh"]["expr"].endswith("} > 380")  # the policy's 400 W x 0.95
    assert a40["GpuPowerHigh"]["expr"].endswith("} > 285")  # A40 300 W x 0.95
    assert l4["GpuPowerHigh"]["expr"].endswith("} > 68.4")  # L4 72 W x 0.95
    assert t4["GpuPowerHigh"]["expr"].endswith("} > 66.5")  # T4 70 W x 0.95
    assert (
        "95% of the NVIDIA-H20's rated 400 W (monitoring.ratedPower)"
        in h20["GpuPowerHigh"]["annotations"]["description"]
    )
    # temperature: the pool's own 83 on h100-train, the default 85 elsewhere
    assert h100["GpuTemperatureHigh"]["expr"].endswith("} > 83")
    assert a100["GpuTemperatureHigh"]["expr"].endswith("} > 85")
    # memory: 0.95 of the framebuffer; the description states it for the pool's cards
    assert l4["GpuMemoryAlmostFull"]["expr"].endswith("> 0.95")
    assert "(22.8 GiB of the NVIDIA-L4's 24 GiB)" in l4["GpuMemoryAlmostFull"]["annotations"]["description"]  # 24 x .95
    assert "(91.2 GiB of the NVIDIA-H20's 96 GiB)" in h20["GpuMemoryAlmostFull"]["annotations"]["description"]
    # low utilisation: the average over 2h below 10 %; none on t4-serve
    assert (
        l4["GpuUnderutilised"]["expr"]
        == 'avg_over_time(DCGM_FI_DEV_GPU_UTIL{Hostname=~"l4-0(?:0[1-9]|[1-3][0-9]|40)"}[2h]) < 10'
    )
    assert "GpuUnderutilised" not in t4
    # errors: immediately (no `for`)
    assert h100["GpuXidError"]["expr"] == 'DCGM_FI_DEV_XID_ERRORS{Hostname=~"gpu-node-(?:0[1-9]|1[0-6])"} != 0'
    assert "for" not in h100["GpuXidError"] and h100["GpuTemperatureHigh"]["for"] == "5m"
    assert h100["GpuRowRemapFailed"]["labels"]["severity"] == "critical"
    assert "GpuMemoryTemperatureHigh" not in h100  # off unless asked for


def test_a_pool_is_selected_by_exactly_its_node_names() -> None:
    c = build(with_monitoring())
    assert c.cluster is not None
    names = {p.name: p.nodes for p in c.cluster.pools}
    for pool, nodes in names.items():
        expr = rules_of(c, pool)["GpuTemperatureHigh"]["expr"]
        regex = re.fullmatch(r'DCGM_FI_DEV_GPU_TEMP\{Hostname=~"(.*)"\} > \d+', expr).group(1)
        # Python's re agrees with RE2 on these constructs (literals, classes, (?:...) groups, alternation);
        # Prometheus anchors =~ at both ends, as fullmatch does.
        assert all(re.fullmatch(regex, n) for n in nodes)
        others = [n for other, ns in names.items() if other != pool for n in ns]
        assert not any(re.fullmatch(regex, n) for n in others)
    assert node_regex(["t4-01", "t4-02", "t4-spare-1", "x.y"]) == "t4-0[1-2]|t4-spare-1|x[.]y"


def test_the_node_label_and_the_counter_file_are_the_policys() -> None:
    section = """\
  monitoring:
    nodeLabel: node
    counters: dcp-metrics-included
    extraCounters: {DCGM_EXP_XID_ERRORS_COUNT: gauge, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: counter}
    ratedPower: {NVIDIA-H20: 400}

"""
    c = build(with_monitoring(section=section))
    assert c.ok
    h100 = rules_of(c, "h100-train")
    assert h100["GpuTemperatureHigh"]["expr"].startswith('DCGM_FI_DEV_GPU_TEMP{node=~"gpu-node-')
    assert "{{ $labels.node }}" in h100["GpuTemperatureHigh"]["annotations"]["description"]
    # the windowed XID count replaces the sticky gauge; ECC and retired pages where the counters have them
    assert h100["GpuXidError"]["expr"].startswith("DCGM_EXP_XID_ERRORS_COUNT{") and h100["GpuXidError"][
        "expr"
    ].endswith("} > 0")
    assert h100["GpuEccDoubleBitErrors"]["expr"].startswith("increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{")
    assert h100["GpuPagesRetiredDoubleBit"]["expr"].startswith("increase(DCGM_FI_DEV_RETIRED_DBE{")  # dcp's row


def test_only_nvidia_pools_get_alerts_and_mig_pools_read_engine_activity() -> None:
    # ai-hetero: H100, A100 with MIG, shared L4, AMD, Ascend and CPU-only pools
    c = build(with_monitoring(AI_HETERO, "  monitoring: {}\n\n"))
    groups = [g["name"] for g in prometheus_rule(c)["spec"]["groups"]]
    assert groups == ["gpu.pool.a100-mig", "gpu.pool.h100-ib", "gpu.pool.l4-dev"]
    # a MIG pool has no DCGM_FI_DEV_GPU_UTIL (NVIDIA/dcgm-exporter#216): the default counters give it none
    [warning] = [d for d in c.report.diagnostics if d.code == "PC474"]
    assert "pool 'a100-mig' gets no low-utilisation alert" in warning.message
    assert "GpuUnderutilised" not in rules_of(c, "a100-mig")
    # following the hint: the profiling counters have GR_ENGINE_ACTIVE, a 0-1 ratio: 10 % is 0.1
    c = build(with_monitoring(AI_HETERO, "  monitoring: {counters: dcp-metrics-included}\n\n"))
    assert "PC474" not in codes(c)
    assert re.fullmatch(
        r"avg_over_time\(DCGM_FI_PROF_GR_ENGINE_ACTIVE\{.*\}\[1h\]\) < 0\.1",
        rules_of(c, "a100-mig")["GpuUnderutilised"]["expr"],
    )
    # thresholds of a pool without NVIDIA GPUs apply to nothing
    c = build(with_monitoring(AI_HETERO, "  monitoring: {pools: {mi300x: {power: 0.9}}}\n\n"))
    assert "PC475" in codes(c)


# --- diagnostics, and their hints followed ----------------------------------------------------------------------


H20_POOL = "  monitoring:\n    labels: {release: kube-prometheus-stack}\n\n"


def test_a_card_without_rated_power_gets_no_power_alert_and_a_warning_until_the_policy_gives_one() -> None:
    c = build(with_monitoring(section=H20_POOL))
    assert c.ok
    [warning] = [d for d in c.report.diagnostics if d.code == "PC474"]
    assert warning.path[-2:] == ("gpu", "product")
    assert "NVIDIA-H20" in warning.message and "monitoring.ratedPower" in (warning.hint or "")
    assert "GpuPowerHigh" not in rules_of(c, "h20-hybrid")
    # the hint, either way
    fixed = build(with_monitoring(section=H20_POOL + "    ratedPower: {NVIDIA-H20: 500}\n\n".replace("\n\n", "\n")))
    assert "PC474" not in codes(fixed)
    assert rules_of(fixed, "h20-hybrid")["GpuPowerHigh"]["expr"].endswith("} > 500")  # 1.0 x 500 W
    off = build(with_monitoring(section="  monitoring:\n    pools: {h20-hybrid: {power: false}}\n\n"))
    assert "PC474" not in codes(off)


def test_every_product_of_the_shipped_examples_but_the_h20_has_a_rated_power() -> None:
    products = set(re.findall(r"product: ([A-Za-z0-9.-]+)", "".join(p.read_text() for p in POLICIES.glob("*.yaml"))))
    nvidia = {p for p in products if p.startswith(("NVIDIA", "Tesla"))}
    unknown = {p for p in nvidia if not any(pattern.search(p) for pattern, _, _ in RATED_POWER)}
    assert unknown == {"NVIDIA-H20"}
    watts = {p: next(w for pattern, _, w in RATED_POWER if pattern.search(p)) for p in nvidia - unknown}
    assert watts["NVIDIA-H100-80GB"] == 700 and watts["NVIDIA-A100-SXM4-80GB"] == 400 and watts["NVIDIA-L4"] == 72
    assert watts["Tesla-T4"] == 70 and watts["NVIDIA-A40"] == 300 and watts["NVIDIA-A100-SXM4-40GB"] == 400


EXTRA = """\
  monitoring:
    ratedPower: {{NVIDIA-H20: 400}}
    extraCounters: {{{counters}}}
    extraRules:
      - alert: Mine
        expr: {expr}

"""


def lint_of(expr: str, counters: str = "") -> Compilation:
    return build(with_monitoring(section=EXTRA.format(expr=expr, counters=counters)))


@pytest.mark.parametrize(
    ("expr", "code", "fixed"),
    [
        # rate() of the XID gauge; the hint: compare the code
        ("sum(rate(DCGM_FI_DEV_XID_ERRORS[5m])) > 0", "PC470", "DCGM_FI_DEV_XID_ERRORS != 0"),
        ("increase(DCGM_FI_DEV_GPU_TEMP[10m]) > 5", "PC470", "deriv(DCGM_FI_DEV_GPU_TEMP[10m]) > 0.01"),
        # averaged XID codes
        ("avg_over_time(DCGM_FI_DEV_XID_ERRORS[5m]) > 5", "PC471", "DCGM_FI_DEV_XID_ERRORS != 0"),
        (
            "sum by (Hostname) (DCGM_FI_DEV_XID_ERRORS) > 0",
            "PC471",
            "count by (Hostname) (DCGM_FI_DEV_XID_ERRORS != 0)",
        ),
        # delta() of a counter
        (
            "delta(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[1h]) > 10",
            "PC473",
            "increase(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[1h]) > 10",
        ),
        # unbalanced
        ("max(DCGM_FI_DEV_GPU_TEMP > 90", "PC476", "max(DCGM_FI_DEV_GPU_TEMP) > 90"),
        ('DCGM_FI_DEV_GPU_TEMP{Hostname="a} > 90', "PC476", 'DCGM_FI_DEV_GPU_TEMP{Hostname="a"} > 90'),
        # a misspelt field: the hint names the right one
        ("DCGM_FI_DEV_GPU_TEMPERATURE > 90", "PC472", "DCGM_FI_DEV_GPU_TEMP > 90"),
    ],
)
def test_the_lint_and_its_hints(expr: str, code: str, fixed: str) -> None:
    c = lint_of(f"'{expr}'")
    found = [d for d in c.report.diagnostics if d.code == code]
    assert len(found) == 1, [d.message for d in c.report.diagnostics]
    assert found[0].path == ("spec", "monitoring", "extraRules", 0, "expr")
    assert found[0].line is not None
    assert lint_of(f"'{fixed}'").report.diagnostics == [], fixed


def test_a_mistake_in_an_expression_of_several_lines_is_placed_by_line_and_column() -> None:
    c = lint_of("|\n          sum by (Hostname) (\n            rate(DCGM_FI_DEV_XID_ERRORS[5m])) > 0")
    [error] = c.report.errors
    assert error.code == "PC470"
    assert "(line 2, column 8 of the expression)" in error.message  # '  rate(' then the metric


def test_a_metric_the_default_counters_leave_out_until_the_policy_says_the_exporter_has_it() -> None:
    c = lint_of("'increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[15m]) > 0'")
    [error] = c.report.errors
    assert error.code == "PC472" and "etc/default-counters.csv does not enable it" in error.message
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: counter to monitoring.extraCounters" in (error.hint or "")
    assert lint_of("'increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[15m]) > 0'", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: counter").ok
    # a field of the profiling file: the hint offers it first
    [error] = lint_of("'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE < 0.1'").report.errors
    assert (error.hint or "").startswith("set monitoring.counters: dcp-metrics-included")
    # other exporters' metrics are not policyc's to know
    assert lint_of("'up{job=\"dcgm-exporter\"} == 0'").ok


def test_policycs_own_rules_pass_its_lint() -> None:
    for section in (
        "  monitoring: {ratedPower: {NVIDIA-H20: 400}}\n\n",
        "  monitoring: {counters: dcp-metrics-included, ratedPower: {NVIDIA-H20: 400},\n"
        "               extraCounters: {DCGM_EXP_XID_ERRORS_COUNT: gauge, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: counter},\n"
        "               thresholds: {memoryTemperature: 95}}\n\n",
    ):
        c = build(with_monitoring(section=section))
        assert c.ok and c.cluster is not None and c.cluster.monitoring is not None
        rules = [r for g in prometheus_rule(c)["spec"]["groups"] for r in g["rules"]]
        assert len(rules) > 40
        for rule in rules:
            own = AlertRule(rule["alert"], rule["expr"], None, None, {}, {}, ("spec", "monitoring"))
            assert list(lint(own, c.cluster.monitoring)) == [], rule["expr"]


def test_settings_that_apply_to_nothing_and_a_tenant_namespace() -> None:
    c = build(with_monitoring(section="  monitoring:\n    ratedPower: {NVIDIA-H20: 400, NVIDIA-H200: 700}\n\n"))
    [unused] = [d for d in c.report.diagnostics if d.code == "PC475"]
    assert (
        unused.path == ("spec", "monitoring", "ratedPower", "NVIDIA-H200")
        and unused.hint == "did you mean 'NVIDIA-H20'?"
    )
    c = build(with_monitoring(section="  monitoring: {namespace: research, ratedPower: {NVIDIA-H20: 400}}\n\n"))
    [warning] = [d for d in c.report.diagnostics if d.code == "PC477"]
    assert "tenant 'research'" in warning.message
    c = build(
        with_monitoring(section="  monitoring: {pools: {l4-srve: {power: false}}, ratedPower: {NVIDIA-H20: 400}}\n\n")
    )
    [error] = c.report.errors
    assert error.code == "PC312" and error.hint == "did you mean 'l4-serve'?"


@pytest.mark.parametrize(
    ("field", "value", "message", "hint"),
    [
        ("for", "5min", "is not a Prometheus duration", "did you mean '5m'?"),
        ("for", "1.5h", "is not a Prometheus duration", "did you mean '1h30m'?"),
        ("for", "5", "must be a Prometheus duration", "add a unit, e.g. '5m'"),
        ("thresholds", "{gpuTemperature: 185}", "185 is out of range", None),
        ("thresholds", "{gpuTemperature: '85C'}", "must be a temperature in °C", "write a bare number"),
        ("thresholds", "{memoryUsed: 95}", "95 is out of range: a fraction of the card's memory", None),
        ("thresholds", "{power: 0}", "0 is out of range", None),
        ("thresholds", "{gpuTemperature: null}", "or false for no alert, not null", None),
        ("thresholds", "{lowUtilisation: {below: 10, for: 0s}}", "a window of 0 holds no sample", "give it a length"),
        (
            "nodeLabel",
            "kubernetes.io/hostname",
            "is not a Prometheus label name",
            "did you mean 'kubernetes_io_hostname'?",
        ),
        ("counters", "dcp", "which is not one of", None),
    ],
)
def test_every_field_is_validated(field: str, value: str, message: str, hint: str | None) -> None:
    c = build(with_monitoring(section=f"  monitoring:\n    {field}: {value}\n\n"))
    assert not c.ok
    [error] = c.report.errors
    assert error.path[:3] == ("spec", "monitoring", field)
    assert message in error.message, error.message
    if hint is not None:
        assert hint in (error.hint or ""), error.hint


def test_defaults() -> None:
    m = Monitoring.model_validate({})
    t = m.thresholds
    assert (m.namespace, m.for_, m.node_label, m.counters) == ("monitoring", "5m", "Hostname", "default")
    assert (t.gpu_temperature, t.memory_temperature, t.memory_used, t.power, t.xid_errors, t.ecc_or_remap) == (
        85, False, 0.95, 1.0, True, True,
    )  # fmt: skip
    assert t.low_utilisation and (t.low_utilisation.below, t.low_utilisation.for_) == (10, "1h")


# --- the scan ----------------------------------------------------------------------------------------------------


def test_the_scan_finds_metrics_and_the_calls_around_them() -> None:
    uses = metric_uses(
        'sum by (Hostname, gpu) (rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{pod=~"a(b)"}[5m] offset 1h))\n'
        "  / on (Hostname) group_left (modelName) max without (gpu) (DCGM_FI_DEV_GPU_TEMP)  # comment (x\n"
        '  and {__name__="DCGM_FI_DEV_FB_USED"} > bool 0 unless absent(up[5m:1m] @ start())'
    )
    found = [(u.name, u.functions) for u in uses]
    assert found == [
        ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", ("rate", "sum")),
        ("DCGM_FI_DEV_GPU_TEMP", ("max",)),
        ("DCGM_FI_DEV_FB_USED", ()),
        ("up", ("absent",)),
    ]
    assert uses[0].column == len("sum by (Hostname, gpu) (rate(") + 1
    for bad, column in (("rate(x[5m]", 5), ("x{a='b}", 5), ("x)", 2), ("x ; y", 3)):
        with pytest.raises(PromqlError) as e:
            metric_uses(bad)
        assert e.value.column == column, bad


def test_durations() -> None:
    assert duration_ms("1h30m") == 5_400_000 and duration_ms("0") == 0 and duration_ms("90") is None
    assert duration_ms("30m1h") is None and duration_ms("") is None
    assert duration_hint("2 hours") == "did you mean '2h'?" and duration_hint("1.25m") == "did you mean '1m15s'?"
    assert duration_hint("soon") is None


def test_the_counter_table_has_the_facts_the_alerts_rely_on() -> None:
    # NVIDIA/dcgm-exporter etc/default-counters.csv: XID a gauge, the remapped rows counters, ECC rows commented out
    assert FIELDS["DCGM_FI_DEV_XID_ERRORS"].type == "gauge" and "default" in FIELDS["DCGM_FI_DEV_XID_ERRORS"].sets
    assert FIELDS["DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"].type == "counter"
    assert FIELDS["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"].sets == frozenset()
    assert FIELDS["DCGM_FI_DEV_RETIRED_DBE"].sets == frozenset({"dcp-metrics-included"})


# --- provenance, determinism ------------------------------------------------------------------------------------


def test_explain_names_the_policy_lines_behind_the_rule(tmp_path) -> None:
    policy = tmp_path / "ai-prod.yaml"
    policy.write_text(with_monitoring(), encoding="utf-8")
    result = CliRunner().invoke(main, ["explain", str(policy), "--object", "PrometheusRule/ai-prod-gpu-alerts"])
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    assert line.startswith("monitoring/gpu-alerts.yaml: PrometheusRule monitoring/ai-prod-gpu-alerts <- ")
    labels_line = with_monitoring().splitlines().index("  monitoring:") + 2  # the section's mapping starts there
    assert f"ai-prod.yaml:{labels_line}:5 'monitoring'" in line
    assert "'nodePools[0]'" in line and "'nodePools[5]'" in line


def test_the_output_does_not_depend_on_the_order_of_the_policy() -> None:
    one = build(with_monitoring()).files[PATH].data
    assert build(with_monitoring()).files[PATH].data == one
    reordered = MONITORING.replace(
        "      t4-serve: {lowUtilisation: false}\n      h100-train: {gpuTemperature: 83}\n",
        "      h100-train: {gpuTemperature: 83}\n      t4-serve: {lowUtilisation: false}\n",
    )
    assert reordered != MONITORING
    assert build(with_monitoring(section=reordered)).files[PATH].data == one


def test_no_monitoring_section_no_rule_file() -> None:
    assert "monitoring:" in EXAMPLE and "\n  monitoring:" not in AI_PROD
    c = build(AI_PROD)
    assert PATH not in c.files
    assert c.cluster is not None and c.cluster.monitoring is None

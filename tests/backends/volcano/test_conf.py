"""The strict model of volcano-scheduler.conf (policyc.backends.volcano.conf): its facts and its checker."""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from policyc.backends.volcano import conf
from policyc.backends.volcano.conf import facts, terms
from policyc.backends.volcano.conf.check import Finding, check_actions, check_conf, check_plugin
from policyc.codes import BY_NAME

# --------------------------------------------------------------------------------------------------------------
# Configurations Volcano ships (fact sheet §2.9, verbatim) and the capacity user guide


SHIPPED_DEFAULT = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""

BUILT_IN_FALLBACK = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""

CAPACITY_GUIDE = """\
actions: "enqueue, allocate, backfill, reclaim" # add reclaim action.
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity # add this field and remove proportion plugin.
  - name: nodeorder
  - name: binpack
"""

CAPACITY_HIERARCHY = CAPACITY_GUIDE.replace(
    "  - name: capacity #", "  - name: capacity\n    enableHierarchy: true\n    #"
)

GPU_CLUSTER = """\
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.5
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.CacheEnable: true
      volumebinding.weight: 2
  - name: capacity
    enableHierarchy: true
    arguments:
      ancestorReclaimLevel: 1
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
      deviceshare.ScheduleWeight: 10
      deviceshare.GPUExclusiveRules:
      - {team: training}
  - name: nodeorder
    arguments:
      nodeaffinity.weight: 4
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.resources: "nvidia.com/gpu, example.com/foo"
      binpack.resources.nvidia.com/gpu: 5
      binpack.resources.example.com/foo: 2
  - name: network-topology-aware
    arguments:
      weight: 2
      hypernode.binpack.resources: nvidia.com/gpu
      hypernode.binpack.resources.nvidia.com/gpu: 3
      hypernode.binpack.normal-pod.fading: 0.5
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
        example.com/*: {type: MostAllocated, weight: 1}
      sra: {enable: true, resources: nvidia.com/gpu, weight: 10, resourceWeight: {nvidia.com/gpu: 1}}
      proportional:
        enable: true
        resources: nvidia.com/gpu
        resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8.5}
  - name: tdm
    arguments:
      tdm.revocable-zone.rz1: "10:00-21:00"
      tdm.revocable-zone.rz2: "22:00-6:30"
      tdm.evict.period: 1m
  - name: rescheduling
    arguments:
      interval: 5m
      metricsPeriod: 5m
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {cpu: 20, memory: 20, pods: 20}
          targetThresholds: {cpu: 80, memory: 80, pods: 80}
          thresholdPriorityClassName: system-cluster-critical
          nodeFit: true
  - name: usage
    enablePredicate: false
    arguments:
      usage.weight: 5
      thresholds: {cpu: 80, mem: 80}
      estimator: {request_ratio: 0.7, burst_ratio: 0, risk_factor: 1.2, be_cpu: 250m, be_mem: 200Mi}
  - name: sla
    arguments:
      sla-waiting-time: 1h30m
  - name: nodegroup
    arguments:
      strict: false
  - name: extender
    arguments:
      extender.urlPrefix: http://extender.example:8080
      extender.httpTimeout: 300ms
      extender.predicateVerb: predicate
      extender.ignorable: true
      extender.managedResources: [nvidia.com/gpu]
"""


def load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def base_conf() -> dict[str, Any]:
    return load(SHIPPED_DEFAULT)


def with_plugin(entry: dict[str, Any], tier: int = 1) -> dict[str, Any]:
    conf = base_conf()
    conf["tiers"][tier]["plugins"].append(entry)
    return conf


def plugin_args(name: str, **arguments: Any) -> list[Finding]:
    return check_plugin({"name": name, "arguments": arguments})


def one(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


def resolve(conf: Any, path: tuple[str | int, ...]) -> None:
    """Fail unless `path` names an existing key or item of `conf`."""
    node = conf
    for step in path:
        if isinstance(step, int):
            assert isinstance(node, list) and 0 <= step < len(node), (path, step)
        else:
            assert isinstance(node, Mapping) and step in node, (path, step)
        node = node[step]


# --------------------------------------------------------------------------------------------------------------
# Known-good configurations


@pytest.mark.parametrize(
    "text",
    [SHIPPED_DEFAULT, BUILT_IN_FALLBACK, CAPACITY_GUIDE, CAPACITY_HIERARCHY, GPU_CLUSTER],
    ids=["shipped-default", "built-in-fallback", "capacity-guide", "capacity-hierarchy", "gpu-cluster"],
)
def test_valid_configurations_have_no_findings(text):
    assert check_conf(load(text)) == []


def test_capacity_hierarchy_fixture_really_enables_hierarchy():
    capacity = load(CAPACITY_HIERARCHY)["tiers"][1]["plugins"][2]
    assert capacity == {"name": "capacity", "enableHierarchy": True}


def test_tables_match_the_registries():
    assert len(facts.ACTIONS) == len(set(facts.ACTIONS)) == 8
    assert len(facts.PLUGINS) == 24
    assert {"numa-aware", "task-topology", "network-topology-aware", "resource-strategy-fit"} <= set(facts.PLUGINS)
    off = {flag for flag, default in facts.PLUGIN_FLAGS.items() if not default}
    assert off == {"enableHierarchy", "enabledClusterOrder"}
    assert len(facts.PLUGIN_FLAGS) == 25
    assert "enabledHierarchy" not in facts.PLUGIN_FLAGS
    assert {"enabledVictim", "enabledOverused", "enabledAllocatable"} <= set(facts.PLUGIN_FLAGS)


def test_tables_describe_argument_types():
    binpack = facts.PLUGINS["binpack"]
    assert binpack.arguments["binpack.weight"].kind is terms.Kind.INT
    assert binpack.families[0].prefix == "binpack.resources."
    assert binpack.families[0].listed_by == "binpack.resources"
    assert facts.PLUGINS["network-topology-aware"].families[0].prefix == "hypernode.binpack.resources."
    assert facts.PLUGINS["tdm"].families[0].value.effect is terms.Effect.PANIC
    rsf = facts.PLUGINS["resource-strategy-fit"].arguments
    assert isinstance(rsf["resources"], terms.MapOf) and isinstance(rsf["sra"], terms.Struct)
    assert isinstance(facts.PLUGINS["rescheduling"].arguments["strategies"], terms.ListOf)
    assert isinstance(facts.PLUGINS["usage"].arguments["estimator"], terms.Struct)
    assert isinstance(facts.PLUGINS["deviceshare"].arguments["deviceshare.GPUExclusiveRules"], terms.ListOf)


MODULES = sorted(Path(conf.__file__).parent.glob("*.py"))
"""The modules of the package: its facts, the terms they are written in, and the checker."""


def test_every_rule_used_exists_in_the_catalogue():
    used = {
        node.value
        for module in MODULES
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in BY_NAME
    }
    allowed = {
        "unknown-scheduler-action",
        "unknown-scheduler-plugin",
        "unknown-plugin-option",
        "unknown-plugin-argument",
        "plugin-argument-type",
        "conflicting-plugins",
        "duplicate-plugin",
        "invalid-value",
    }
    assert used == allowed


def test_package_imports_only_the_standard_library_policycs_messages_and_quantities_and_the_action_names():
    trees = [ast.parse(module.read_text(encoding="utf-8")) for module in MODULES]
    modules = {a.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    modules |= {n.module for tree in trees for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    allowed = {"__future__", "re", "collections.abc", "dataclasses", "enum", "typing"}
    allowed |= {"policyc.diagnostics", "policyc.k8s.quantity", "policyc.backends.volcano.settings"}
    own = {"policyc.backends.volcano.conf.terms", "policyc.backends.volcano.conf.facts"}
    assert modules - own <= allowed


def test_the_facts_are_declarations_and_the_checker_holds_the_code():
    """The facts module reads like Volcano's documentation: tables written in the terms, no function of its own."""
    tree = ast.parse(Path(facts.__file__).read_text(encoding="utf-8"))
    code = [
        ast.dump(node)[:60] for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.Lambda | ast.ClassDef)
    ]
    assert code == []


# --------------------------------------------------------------------------------------------------------------
# The traps of fact sheet §8 that concern this file


def test_enabled_hierarchy_misspelling():
    conf = load(CAPACITY_HIERARCHY.replace("enableHierarchy", "enabledHierarchy"))
    finding = one(check_conf(conf))
    assert finding.rule == "unknown-plugin-option"
    assert finding.path == ("tiers", 1, "plugins", 2, "enabledHierarchy")
    assert "ignores" in finding.message
    assert finding.hint == "did you mean 'enableHierarchy'?"


@pytest.mark.parametrize(
    ("wrong", "right"),
    [
        ("numaaware", "numa-aware"),
        ("tasktopology", "task-topology"),
        ("networktopologyaware", "network-topology-aware"),
        ("resource_strategy_fit", "resource-strategy-fit"),
        ("predicate", "predicates"),
        ("nodeOrder", "nodeorder"),
    ],
)
def test_misspelt_plugin_names(wrong, right):
    conf = with_plugin({"name": wrong})
    finding = one(check_conf(conf))
    assert finding.rule == "unknown-scheduler-plugin"
    assert finding.path == ("tiers", 1, "plugins", 6, "name")
    assert f"Failed to get plugin {wrong}." in finding.message
    assert finding.hint == f"did you mean '{right}'?"


def test_removed_reservation_plugin():
    finding = one(check_conf(with_plugin({"name": "reservation"})))
    assert finding.rule == "unknown-scheduler-plugin"
    assert "removed in Volcano v1.6" in finding.hint


@pytest.mark.parametrize(
    ("key", "hint_parts"),
    [
        ("predicate.GPUSharingEnable", ("deviceshare.GPUSharingEnable", "v1.9")),
        ("predicate.GPUNumberEnable", ("deviceshare.GPUNumberEnable", "v1.9")),
        ("predicate.ProportionalEnable", ("v1.13", "proportional")),
        ("predicate.resources", ("v1.13", "proportional")),
        ("predicate.resources.nvidia.com/gpu.cpu", ("v1.13", "proportional")),
        ("predicate.DynamicResourceAllocationEnable", ("v1.15", "feature gate")),
    ],
)
def test_retired_predicates_arguments(key, hint_parts):
    finding = one(plugin_args("predicates", **{key: True}))
    assert (finding.rule, finding.path) == ("unknown-plugin-argument", ("arguments", key))
    assert "ignores" in finding.message
    for part in hint_parts:
        assert part in finding.hint


def test_overcommit_factor_under_the_overcommit_plugin_is_fine():
    assert plugin_args("overcommit", **{"overcommit-factor": 2}) == []
    assert plugin_args("overcommit", **{"overcommit-factor": 1.25}) == []


def test_quoted_binpack_weight():
    conf = load(
        SHIPPED_DEFAULT.replace(
            "  - name: binpack\n", '  - name: binpack\n    arguments:\n      binpack.weight: "10"\n'
        )
    )
    finding = one(check_conf(conf))
    assert finding.rule == "plugin-argument-type"
    assert finding.path == ("tiers", 1, "plugins", 5, "arguments", "binpack.weight")
    assert "the string '10'" in finding.message and "Volcano ignores it" in finding.message
    assert finding.hint == "write 10 without quotes"


def test_capacity_and_proportion_together():
    conf = base_conf()
    conf["tiers"][0]["plugins"].append({"name": "capacity"})
    finding = one(check_conf(conf))
    assert finding.rule == "conflicting-plugins"
    # proportion sits in tier 1, later in the file than capacity in tier 0.
    assert finding.path == ("tiers", 1, "plugins", 3, "name")
    assert "proportion" in finding.message and "capacity" in finding.message
    assert "keep one" in finding.hint


# --------------------------------------------------------------------------------------------------------------
# Type rules


@pytest.mark.parametrize(
    ("value", "described", "hint"),
    [
        ("10", "the string '10'", "write 10 without quotes"),
        (10.0, "the number 10.0", "write 10 without the decimal point"),
        (2.5, "the number 2.5", "write a whole number such as 1"),
        (True, "the boolean true", "write a whole number such as 1"),
        ([1], "a list", "write a whole number such as 1"),
    ],
)
def test_int_arguments_need_a_yaml_int(value, described, hint):
    finding = one(plugin_args("binpack", **{"binpack.cpu": value}))
    assert (finding.rule, finding.path) == ("plugin-argument-type", ("arguments", "binpack.cpu"))
    assert described in finding.message and "not a YAML integer" in finding.message
    assert "Volcano ignores it and uses the default 1" in finding.message
    assert finding.hint == hint


@pytest.mark.parametrize("value", [0, 7, 100])
def test_int_arguments_accept_ints(value):
    assert plugin_args("nodeorder", **{"nodeaffinity.weight": value}) == []


@pytest.mark.parametrize(("value", "ok"), [(2, True), (1.5, True), ("1.5", False), (True, False)])
def test_float_arguments_take_ints_and_floats(value, ok):
    findings = plugin_args("overcommit", **{"overcommit-factor": value})
    if ok:
        assert findings == []
    else:
        finding = one(findings)
        assert finding.rule == "plugin-argument-type"
        assert "not a number" in finding.message


@pytest.mark.parametrize(
    ("value", "hint"),
    [("true", "write true without quotes"), ("False", "write false without quotes"), (1, "write true or false")],
)
def test_bool_arguments_need_a_yaml_boolean(value, hint):
    finding = one(plugin_args("predicates", **{"predicate.CacheEnable": value}))
    assert (finding.rule, finding.path) == ("plugin-argument-type", ("arguments", "predicate.CacheEnable"))
    assert "not a YAML boolean" in finding.message
    assert finding.hint == hint


def test_quoted_boolean_message_is_truthful_about_newer_releases():
    finding = one(plugin_args("nodegroup", strict="false"))
    assert "recent Volcano releases parse the string" in finding.message


def test_string_arguments_need_a_string():
    finding = one(plugin_args("deviceshare", **{"deviceshare.KnownGeometriesCMNamespace": 5}))
    assert finding.rule == "plugin-argument-type"
    assert "not a string" in finding.message and "ignores it" in finding.message
    assert finding.hint == 'quote it: "5"'


def test_schedule_policy_type_and_value():
    crash = one(plugin_args("deviceshare", **{"deviceshare.SchedulePolicy": 1}))
    assert crash.rule == "plugin-argument-type" and "panics" in crash.message
    wrong = one(plugin_args("deviceshare", **{"deviceshare.SchedulePolicy": "binpak"}))
    assert wrong.rule == "invalid-value" and wrong.hint == "did you mean 'binpack'?"


@pytest.mark.parametrize("value", ["0", "5m", "1h30m", "300ms", ".5s", "1.5h", "2h45m30.5s", "-1m", "10us", "10µs"])
def test_go_durations_accepted(value):
    assert plugin_args("sla", **{"sla-waiting-time": value}) == []


@pytest.mark.parametrize("value", ["", "5", "5 minutes", "1d", "1hr", "m", ".s", "1h 30m", "00"])
def test_go_durations_rejected(value):
    finding = one(plugin_args("sla", **{"sla-waiting-time": value}))
    assert finding.rule == "invalid-value"
    assert "not a Go duration" in finding.message
    assert "1h30m" in finding.hint


def test_duration_given_as_a_number():
    finding = one(plugin_args("extender", **{"extender.httpTimeout": 1}))
    assert finding.rule == "plugin-argument-type"
    assert finding.hint == 'write a quoted Go duration, e.g. "1s" for 1 seconds'


@pytest.mark.parametrize(
    ("key", "value"),
    [("tdm.evict.period", 60), ("tdm.revocable-zone.rz1", 10), ("tdm.revocable-zone.rz1", True)],
)
def test_tdm_values_must_be_strings(key, value):
    finding = one(plugin_args("tdm", **{key: value}))
    assert (finding.rule, finding.path) == ("plugin-argument-type", ("arguments", key))
    assert "crash-loops" in finding.message


@pytest.mark.parametrize("zone", ["10:00 - 21:00", "10-21", "24:00-01:00", "10:00-21:60", "10:0-11:00", "10:00"])
def test_tdm_zone_syntax(zone):
    finding = one(plugin_args("tdm", **{"tdm.revocable-zone.rz1": zone}))
    assert finding.rule == "invalid-value"
    assert "HH:MM-HH:MM" in finding.message


def test_tdm_zone_family_needs_a_zone_name():
    finding = one(plugin_args("tdm", **{"tdm.revocable-zone.": "10:00-11:00"}))
    assert finding.rule == "unknown-plugin-argument"


@pytest.mark.parametrize(("key", "value"), [("interval", 5), ("interval", 1.5), ("metricsPeriod", 5)])
def test_rescheduling_interval_must_be_a_string(key, value):
    finding = one(plugin_args("rescheduling", **{key: value}))
    assert (finding.rule, finding.path) == ("plugin-argument-type", ("arguments", key))
    assert "panics" in finding.message and "crash-loops" in finding.message


def test_rescheduling_bad_interval_string_falls_back():
    finding = one(plugin_args("rescheduling", interval="five minutes"))
    assert finding.rule == "invalid-value"
    assert "5m" in finding.message


@pytest.mark.parametrize("value", ["80", 80.5, None])
def test_rescheduling_thresholds_must_be_ints(value):
    strategies = [{"name": "lowNodeUtilization", "params": {"targetThresholds": {"cpu": value}}}]
    finding = one(plugin_args("rescheduling", strategies=strategies))
    assert finding.rule == "plugin-argument-type"
    assert finding.path == ("arguments", "strategies", 0, "params", "targetThresholds", "cpu")


def test_rescheduling_thresholds_of_unknown_keys_still_crash():
    strategies = [{"name": "lowNodeUtilization", "params": {"thresholds": {"gpu": "50"}}}]
    findings = plugin_args("rescheduling", strategies=strategies)
    assert [f.rule for f in findings] == ["unknown-plugin-argument", "plugin-argument-type"]
    assert {f.path for f in findings} == {("arguments", "strategies", 0, "params", "thresholds", "gpu")}


def test_rescheduling_unknown_strategy():
    finding = one(plugin_args("rescheduling", strategies=[{"name": "highNodeUtilization"}]))
    assert finding.rule == "invalid-value"
    assert finding.path == ("arguments", "strategies", 0, "name")


def test_usage_thresholds():
    findings = plugin_args("usage", thresholds={"cpu": "80", "memory": 80})
    assert [(f.rule, f.path[-1]) for f in findings] == [
        ("plugin-argument-type", "cpu"),
        ("unknown-plugin-argument", "memory"),
    ]
    assert "silently reads it as 0" in findings[0].message
    assert findings[1].hint == "did you mean 'mem'?"
    assert one(plugin_args("usage", thresholds={"cpu": 120})).rule == "invalid-value"


def test_usage_estimator_quantities():
    assert plugin_args("usage", estimator={"be_cpu": "250m", "be_mem": "200Mi"}) == []
    for bad in ("200 MB", "200mi", "1KI"):  # Kubernetes' suffixes are case-sensitive: 'mi' is none of them
        finding = one(plugin_args("usage", estimator={"be_mem": bad}))
        assert finding.rule == "invalid-value" and "quantity" in finding.message, bad


@pytest.mark.parametrize("bad_type", [3, True, ["MostAllocated"]])
def test_resource_strategy_fit_resource_type_wrong_type_is_fatal(bad_type):
    finding = one(plugin_args("resource-strategy-fit", resources={"nvidia.com/gpu": {"type": bad_type, "weight": 1}}))
    assert finding.rule == "plugin-argument-type"
    assert finding.path == ("arguments", "resources", "nvidia.com/gpu", "type")
    assert "klog.Fatalf" in finding.message
    assert finding.hint == "write one of 'LeastAllocated', 'MostAllocated'"


def test_resource_strategy_fit_resource_type_unknown_value():
    finding = one(plugin_args("resource-strategy-fit", resources={"cpu": {"type": "MostAllocate"}}))
    assert finding.rule == "invalid-value"
    assert "LeastAllocated" in finding.message
    assert finding.hint == "did you mean 'MostAllocated'?"


@pytest.mark.parametrize(("key", "hint_part"), [("*", "prefix pattern"), ("nvidia*/gpu", "trailing"), ("a/*/*", "")])
def test_resource_strategy_fit_wildcards(key, hint_part):
    finding = one(plugin_args("resource-strategy-fit", resources={key: {"type": "MostAllocated", "weight": 1}}))
    assert (finding.rule, finding.path) == ("invalid-value", ("arguments", "resources", key))
    assert "ignores the entry" in finding.message
    assert hint_part in finding.hint or hint_part in finding.message


def test_resource_strategy_fit_framework_get_fields():
    findings = plugin_args(
        "resource-strategy-fit",
        resourceStrategyFitWeight="10",
        sra={"enable": "yes", "weight": 2.7, "resources": "nvidia.com/gpu"},
        proportional={"enable": True, "resources": "nvidia.com/gpu", "resourceProportion": {"nvidia.com/gpu.gpu": 4}},
    )
    assert [(f.rule, f.path[1:]) for f in findings] == [
        ("plugin-argument-type", ("resourceStrategyFitWeight",)),
        ("plugin-argument-type", ("sra", "enable")),
        ("plugin-argument-type", ("sra", "weight")),
        ("unknown-plugin-argument", ("proportional", "resourceProportion", "nvidia.com/gpu.gpu")),
    ]
    assert "klog.Fatalf" in findings[0].message
    assert "truncates it to 2" in findings[2].message


def test_resource_strategy_fit_resources_must_be_a_mapping():
    finding = one(plugin_args("resource-strategy-fit", resources=["nvidia.com/gpu"]))
    assert finding.rule == "plugin-argument-type" and "not a mapping" in finding.message


def test_extender_managed_resources_is_a_list_of_strings():
    finding = one(plugin_args("extender", **{"extender.managedResources": "nvidia.com/gpu"}))
    assert finding.rule == "plugin-argument-type" and "not a list" in finding.message
    finding = one(plugin_args("extender", **{"extender.managedResources": ["a", 1]}))
    assert finding.path == ("arguments", "extender.managedResources", 1)


def test_empty_argument_value():
    finding = one(plugin_args("binpack", **{"binpack.weight": None}))
    assert finding.rule == "plugin-argument-type" and "is empty" in finding.message


def test_ranges():
    assert one(plugin_args("overcommit", **{"overcommit-factor": 0.8})).rule == "invalid-value"
    assert one(plugin_args("binpack", **{"binpack.memory": -1})).rule == "invalid-value"
    assert one(plugin_args("capacity", ancestorReclaimLevel=-2)).rule == "invalid-value"
    assert plugin_args("binpack", **{"binpack.weight": 0}) == []


# --------------------------------------------------------------------------------------------------------------
# Families of keys


def test_binpack_resource_weights_are_read_only_for_listed_resources():
    findings = plugin_args(
        "binpack",
        **{
            "binpack.resources": "nvidia.com/gpu",
            "binpack.resources.nvidia.com/gpu": 3,
            "binpack.resources.amd.com/gpu": 2,
        },
    )
    finding = one(findings)
    assert (finding.rule, finding.path) == ("unknown-plugin-argument", ("arguments", "binpack.resources.amd.com/gpu"))
    assert finding.hint == "add 'amd.com/gpu' to binpack.resources"


def test_binpack_resource_weight_types():
    finding = one(
        plugin_args("binpack", **{"binpack.resources": "nvidia.com/gpu", "binpack.resources.nvidia.com/gpu": "3"})
    )
    assert finding.rule == "plugin-argument-type"


def test_hypernode_resource_weights_are_read_only_for_listed_resources():
    finding = one(plugin_args("network-topology-aware", **{"hypernode.binpack.resources.nvidia.com/gpu": 3}))
    assert finding.rule == "unknown-plugin-argument"
    assert finding.hint == "add 'nvidia.com/gpu' to hypernode.binpack.resources"


def test_unknown_argument_hints():
    assert one(plugin_args("binpack", **{"binpack.weigth": 1})).hint == "did you mean 'binpack.weight'?"
    assert one(plugin_args("gang", foo=1)).hint == "it reads no arguments; delete it"
    moved = one(plugin_args("nodeorder", **{"binpack.weight": 1}))
    assert moved.hint == "'binpack.weight' is an argument of the binpack plugin"
    flag = one(plugin_args("drf", enableHierarchy=True))
    assert flag.rule == "unknown-plugin-argument"
    assert flag.hint == "'enableHierarchy' is a plugin option: write it beside 'name', not under 'arguments'"


# --------------------------------------------------------------------------------------------------------------
# Plugin options (flags)


@pytest.mark.parametrize(("value", "tag"), [("false", "!!str"), (0, "!!int")])
def test_flag_of_the_wrong_type_rejects_the_file(value, tag):
    finding = one(check_plugin({"name": "gang", "enablePreemptable": value}, ("tiers", 0, "plugins", 1)))
    assert finding.rule == "invalid-value"
    assert finding.path == ("tiers", 0, "plugins", 1, "enablePreemptable")
    assert "rejects the whole file" in finding.message and tag in finding.message


def test_empty_flag():
    finding = one(check_plugin({"name": "gang", "enablePreemptable": None}))
    assert finding.rule == "invalid-value" and "unset (true)" in finding.message


def test_legacy_cluster_order_flag_is_accepted():
    assert check_plugin({"name": "priority", "EnabledClusterOrder": True}) == []
    assert check_plugin({"name": "priority", "enabledClusterOrder": True}) == []


@pytest.mark.parametrize(
    ("key", "hint"),
    [("enableVictim", "did you mean 'enabledVictim'?"), ("EnableJobOrder", "did you mean 'enableJobOrder'?")],
)
def test_misspelt_flags(key, hint):
    finding = one(check_plugin({"name": "priority", key: True}))
    assert (finding.rule, finding.path, finding.hint) == ("unknown-plugin-option", (key,), hint)


def test_argument_written_as_an_option():
    finding = one(check_plugin({"name": "binpack", "binpack.weight": 10}))
    assert finding.rule == "unknown-plugin-option"
    assert finding.hint == "'binpack.weight' is an argument of binpack: move it under 'arguments'"


def test_arguments_not_a_mapping():
    finding = one(check_plugin({"name": "binpack", "arguments": ["binpack.weight"]}))
    assert finding.rule == "invalid-value" and finding.path == ("arguments",)


@pytest.mark.parametrize(
    ("entry", "path"),
    [({"enablePreemptable": False}, ()), ({"name": None}, ("name",)), ({"name": 3}, ("name",))],
)
def test_plugin_entry_without_a_usable_name(entry, path):
    finding = one(check_plugin(entry))
    assert (finding.rule, finding.path) == ("invalid-value", path)


def test_plugin_entry_not_a_mapping():
    finding = one(check_plugin("gang", ("tiers", 0, "plugins", 0)))  # type: ignore[arg-type]
    assert (finding.rule, finding.path) == ("invalid-value", ("tiers", 0, "plugins", 0))


def test_check_plugin_prefixes_paths():
    finding = one(check_plugin({"name": "binpack", "arguments": {"binpack.cpu": "2"}}, ("scheduler", "plugins", 3)))
    assert finding.path == ("scheduler", "plugins", 3, "arguments", "binpack.cpu")


# --------------------------------------------------------------------------------------------------------------
# Conflicts and duplicates


def test_proportion_and_capacity_in_different_tiers():
    conf = load(CAPACITY_GUIDE)
    conf["tiers"][0]["plugins"].append({"name": "proportion"})
    finding = one(check_conf(conf))
    assert finding.rule == "conflicting-plugins"
    assert finding.path == ("tiers", 1, "plugins", 2, "name")


def test_drf_hierarchy_with_proportion_in_the_same_tier():
    conf = load(SHIPPED_DEFAULT.replace("  - name: drf\n", "  - name: drf\n    enableHierarchy: true\n"))
    finding = one(check_conf(conf))
    assert finding.rule == "conflicting-plugins"
    assert finding.path == ("tiers", 1, "plugins", 1, "enableHierarchy")
    assert "proportion and drf with hierarchy enabled conflicts" in finding.message


def test_drf_hierarchy_with_proportion_in_different_tiers_is_fine():
    conf = base_conf()
    conf["tiers"][1]["plugins"].remove({"name": "drf", "enablePreemptable": False})
    conf["tiers"][0]["plugins"].append({"name": "drf", "enableHierarchy": True})
    assert check_conf(conf) == []


def test_drf_without_hierarchy_beside_proportion_is_fine():
    conf = load(SHIPPED_DEFAULT.replace("  - name: drf\n", "  - name: drf\n    enableHierarchy: false\n"))
    assert check_conf(conf) == []


@pytest.mark.parametrize(
    ("flags", "second"),
    [
        (("deviceshare.GPUSharingEnable", "deviceshare.GPUNumberEnable"), "deviceshare.GPUNumberEnable"),
        (("deviceshare.GPUSharingEnable", "deviceshare.VGPUEnable"), "deviceshare.VGPUEnable"),
        (("deviceshare.GPUNumberEnable", "deviceshare.VGPUEnable"), "deviceshare.VGPUEnable"),
    ],
)
def test_deviceshare_exclusive_modes(flags, second):
    finding = one(plugin_args("deviceshare", **dict.fromkeys(flags, True)))
    assert (finding.rule, finding.path) == ("conflicting-plugins", ("arguments", second))
    assert "crash-loops" in finding.message


@pytest.mark.parametrize(
    "flags",
    [
        {"deviceshare.GPUSharingEnable": True},
        {"deviceshare.GPUNumberEnable": True, "deviceshare.NodeLockEnable": True},
        {"deviceshare.VGPUEnable": True, "deviceshare.GPUSharingEnable": False},
    ],
)
def test_deviceshare_compatible_modes(flags):
    assert plugin_args("deviceshare", **flags) == []


def test_deviceshare_conflict_counts_quoted_booleans():
    findings = plugin_args(
        "deviceshare", **{"deviceshare.GPUSharingEnable": True, "deviceshare.GPUNumberEnable": "true"}
    )
    assert sorted(f.rule for f in findings) == ["conflicting-plugins", "plugin-argument-type"]


def test_duplicate_plugin():
    conf = base_conf()
    conf["tiers"][1]["plugins"].append({"name": "gang"})
    finding = one(check_conf(conf))
    assert (finding.rule, finding.path) == ("duplicate-plugin", ("tiers", 1, "plugins", 6, "name"))
    assert "tiers[0].plugins[1]" in finding.message


# --------------------------------------------------------------------------------------------------------------
# Actions


def test_check_actions_list_form():
    assert check_actions(["enqueue", "allocate", "backfill", "reclaim"], ("scheduler", "actions")) == []
    findings = check_actions(["enqueue", "elect", "alocate", "", 3, "enqueue"], ("scheduler", "actions"))
    assert [(f.rule, f.path[-1]) for f in findings] == [
        ("unknown-scheduler-action", 1),
        ("unknown-scheduler-action", 2),
        ("invalid-value", 3),
        ("invalid-value", 4),
        ("invalid-value", 5),
    ]
    assert findings[0].hint == "removed in Volcano v1.6; delete it"
    assert findings[1].hint == "did you mean 'allocate'?"
    assert all(f.path[:2] == ("scheduler", "actions") for f in findings)


def test_check_actions_empty_and_string_forms():
    assert one(check_actions([])).rule == "invalid-value"
    assert check_actions("enqueue, allocate") == []
    assert one(check_actions("enqueue, gang-preempt")).hint == "did you mean 'gangpreempt'?"


# --------------------------------------------------------------------------------------------------------------
# The file's shape


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda c: c.__setitem__("tiers", {"plugins": []}), ("tiers",)),
        (lambda c: c["tiers"].append("gang"), ("tiers", 2)),
        (lambda c: c["tiers"][0].__setitem__("plugin", []), ("tiers", 0, "plugin")),
        (lambda c: c["tiers"][0].__setitem__("plugins", {"name": "gang"}), ("tiers", 0, "plugins")),
    ],
)
def test_malformed_structure(mutate, path):
    conf = base_conf()
    mutate(conf)
    finding = one(check_conf(conf))
    assert (finding.rule, finding.path) == ("invalid-value", path)


# --------------------------------------------------------------------------------------------------------------
# One pass over a file with many mistakes: every finding, every path valid


MANY_MISTAKES = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: "false"
  - name: conformance
  - name: capacity
- plugins:
  - name: overcommit
  - name: drf
    enabledHierarchy: true
    enableHierarchy: true
  - name: predicates
    arguments:
      predicate.GPUSharingEnable: true
  - name: proportion
  - name: numaaware
  - name: binpack
    arguments:
      binpack.weight: "10"
      binpack.resources.nvidia.com/gpu: 2
  - name: tdm
    arguments:
      tdm.evict.period: 60
  - name: gang
"""


def test_every_mistake_is_reported_in_one_pass():
    conf = load(MANY_MISTAKES)
    findings = check_conf(conf)
    assert sorted(f.rule for f in findings) == sorted(
        [
            "invalid-value",  # enablePreemptable: "false"
            "unknown-plugin-option",  # enabledHierarchy
            "unknown-plugin-argument",  # predicate.GPUSharingEnable
            "unknown-scheduler-plugin",  # numaaware
            "plugin-argument-type",  # binpack.weight
            "unknown-plugin-argument",  # binpack.resources.nvidia.com/gpu not listed
            "plugin-argument-type",  # tdm.evict.period
            "duplicate-plugin",  # gang
            "conflicting-plugins",  # capacity + proportion
            "conflicting-plugins",  # drf hierarchy + proportion
        ]
    )
    for finding in findings:
        resolve(conf, finding.path)
        assert finding.rule in BY_NAME
        assert "\n" not in finding.message and finding.message
        assert finding.hint is None or "\n" not in finding.hint


def test_findings_are_stable_and_the_input_is_untouched():
    conf = load(MANY_MISTAKES)
    before = copy.deepcopy(conf)
    assert check_conf(conf) == check_conf(conf)
    assert conf == before


def test_findings_are_frozen():
    finding = Finding(("actions",), "invalid-value", "x")
    with pytest.raises(AttributeError):
        finding.rule = "other"  # type: ignore[misc]
    assert finding.hint is None

"""A strict model of Volcano's ``volcano-scheduler.conf``, and a checker for it.

Volcano reads the file with the non-strict ``gopkg.in/yaml.v2``: unknown keys vanish, a misspelt plugin is only
logged every session, and a value of the wrong type is ignored, or crash-loops the scheduler, depending on how the
plugin reads it. policyc generates this file and passes user-written plugin arguments through, so it checks the
file against the tables below instead. The tables follow Volcano's source (``pkg/scheduler/conf``,
``pkg/scheduler/actions``, ``pkg/scheduler/plugins/*``, ``pkg/scheduler/framework/arguments.go``).

How Volcano reads an argument decides what a wrong type does, so every spec names an `Effect`:

- ``GetInt`` / ``GetFloat64`` / ``GetBool`` / ``GetString`` log "Could not parse argument" and keep the default;
- ``framework.Get[T]`` (mapstructure) calls ``klog.Fatalf`` on a mismatch: the scheduler exits and crash-loops;
- ``tdm``, ``rescheduling`` and ``deviceshare.SchedulePolicy`` use unchecked type assertions: a panic;
- a YAML type error in the fixed structure (a flag that is not a boolean, tiers that are not a list) rejects the
  whole file, and the scheduler keeps its previous configuration.

The checker is pure: `check_conf` for the tiers of a file, `check_plugin` for one plugin entry and `check_actions` for
a list of action names. Each returns every `Finding` in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from policyc.backends.volcano.settings import ACTIONS
from policyc.diagnostics import closest, describe_value
from policyc.k8s.quantity import Quantity, QuantityError

__all__ = [
    "ACTIONS",
    "PLUGINS",
    "PLUGIN_CONFLICTS",
    "PLUGIN_FLAGS",
    "REMOVED_ACTIONS",
    "REMOVED_PLUGINS",
    "Conflict",
    "Effect",
    "Family",
    "Finding",
    "Kind",
    "ListOf",
    "MapOf",
    "PluginSpec",
    "Scalar",
    "Struct",
    "check_actions",
    "check_conf",
    "check_plugin",
]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    """One problem in the configuration; `path` is the place inside the conf (or inside a plugin entry)."""

    path: Path
    rule: str
    message: str
    hint: str | None = None


# --------------------------------------------------------------------------------------------------------------
# The model


class Kind(StrEnum):
    """The type a scalar argument must have."""

    INT = "int"  # a YAML integer (not a boolean, not a quoted number, not 10.0)
    FLOAT = "float"  # a YAML integer or float
    BOOL = "bool"  # a YAML boolean
    STRING = "string"
    DURATION = "duration"  # a string in Go's time.ParseDuration syntax
    CSV = "csv"  # a comma-separated string of names
    CLOCK_RANGE = "clock-range"  # "HH:MM-HH:MM" (tdm revocable zones)
    QUANTITY = "quantity"  # a Kubernetes quantity: "250m", "200Mi" (or a number)


class Effect(StrEnum):
    """What Volcano does with a value of the wrong type (the text ends the finding's message)."""

    IGNORED = "Volcano ignores it"
    DROPPED = "Volcano silently ignores it"
    ZERO = "Volcano silently reads it as 0"
    FATAL = "the scheduler exits (klog.Fatalf in framework.Get) on its first cycle and crash-loops"
    PANIC = "the scheduler panics on an unchecked type assertion and crash-loops"
    REJECTED = "Volcano rejects the whole file and keeps its previous configuration"


@dataclass(frozen=True, slots=True)
class Scalar:
    kind: Kind
    effect: Effect
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    value_effect: str = "Volcano cannot use it"
    """What Volcano does with a well-typed value outside `choices`, the range or the syntax."""


@dataclass(frozen=True, slots=True)
class Struct:
    """A nested mapping with fixed keys."""

    fields: Mapping[str, Spec]
    effect: Effect
    """What Volcano does when the value is not a mapping."""


@dataclass(frozen=True, slots=True)
class MapOf:
    """A nested mapping with free keys (resource names) and values of one spec."""

    value: Spec
    effect: Effect
    known_keys: tuple[str, ...] = ()
    """If set, the only keys Volcano reads; the values of other keys are still checked (they may crash it)."""
    key_check: Callable[[str, Mapping[Any, Any]], tuple[str, str, str | None] | None] | None = None
    """Called with the key and the mapping holding this one; returns (rule, message, hint) for a bad key."""


@dataclass(frozen=True, slots=True)
class ListOf:
    item: Spec
    effect: Effect


Spec = Scalar | Struct | MapOf | ListOf


@dataclass(frozen=True, slots=True)
class Family:
    """Argument keys with a variable suffix, such as ``binpack.resources.<resource>``."""

    prefix: str
    value: Scalar
    listed_by: str | None = None
    """The comma-separated argument that lists the suffixes Volcano reads (None: every suffix is read)."""
    placeholder: str = "<name>"


@dataclass(frozen=True, slots=True)
class PluginSpec:
    arguments: Mapping[str, Spec] = field(default_factory=dict)
    families: tuple[Family, ...] = ()
    retired: Mapping[str, str] = field(default_factory=dict)
    """Keys Volcano no longer reads (or never read here), with the hint that replaces them."""
    retired_prefixes: Mapping[str, str] = field(default_factory=dict)
    exclusive: tuple[tuple[str, str, str], ...] = ()
    """Boolean arguments that must not both be true: (first, second, what Volcano does)."""


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two plugins that must not be enabled together."""

    first: str
    second: str
    same_tier: bool
    """Only a conflict inside one tier."""
    flag: str | None
    """Only a conflict when `second` sets this option to true."""
    consequence: str
    hint: str


# --------------------------------------------------------------------------------------------------------------
# The tables

REMOVED_ACTIONS: dict[str, str] = {
    "elect": "removed in Volcano v1.6; delete it",
    "reserve": "removed in Volcano v1.6; delete it",
}

_I, _F, _B, _S = Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.STRING
_IGN = Effect.IGNORED


def _int(default: int | None = None, effect: Effect = _IGN, **kw: Any) -> Scalar:
    return Scalar(_I, effect, default, **kw)


def _float(default: float | None = None, effect: Effect = _IGN, **kw: Any) -> Scalar:
    return Scalar(_F, effect, default, **kw)


def _bool(default: bool | None = None, effect: Effect = _IGN) -> Scalar:
    return Scalar(_B, effect, default)


def _str(default: str | None = None, effect: Effect = _IGN, **kw: Any) -> Scalar:
    return Scalar(_S, effect, default, **kw)


def _duration(
    default: str | None = None, effect: Effect = _IGN, value_effect: str = "Volcano cannot parse it"
) -> Scalar:
    return Scalar(Kind.DURATION, effect, default, value_effect=value_effect)


# PluginOption flags (pkg/scheduler/conf/scheduler_conf.go) and their defaults after ApplyPluginConfDefaults.
PLUGIN_FLAGS: dict[str, bool] = {
    "enableJobOrder": True,
    "enableHierarchy": False,
    "enableJobReady": True,
    "enableJobPipelined": True,
    "enableTaskOrder": True,
    "enablePreemptable": True,
    "enableReclaimable": True,
    "enablePreemptive": True,
    "enableQueueOrder": True,
    "enabledClusterOrder": False,
    "enablePredicate": True,
    "enableBestNode": True,
    "enableNodeOrder": True,
    "enableTargetJob": True,
    "enableReservedNodes": True,
    "enableJobEnqueued": True,
    "enabledVictim": True,
    "enableJobStarving": True,
    "enabledOverused": True,
    "enabledAllocatable": True,
    "enabledHyperNodeOrder": True,
    "enabledSubJobReady": True,
    "enabledSubJobPipelined": True,
    "enabledSubJobOrder": True,
    "enabledHyperNodeGradient": True,
}
# The YAML key of the cluster-order flag was "EnabledClusterOrder" from v1.5 to v1.15.1 (lower-case at HEAD).
_LEGACY_FLAGS: dict[str, bool] = {"EnabledClusterOrder": False}


def _csv(value: Any) -> list[str]:
    """The names of a comma-separated argument, as Volcano splits them (empty parts skipped)."""
    if not isinstance(value, str):
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def _wildcard_resource(key: str, _parent: Mapping[Any, Any]) -> tuple[str, str, str | None] | None:
    if "*" not in key:
        return None
    if key == "*":
        return (
            "invalid-value",
            "resource-strategy-fit resources key '*': a lone '*' is not supported, Volcano ignores the entry",
            "use a prefix pattern such as 'nvidia.com/*', or list the resources",
        )
    if key.count("*") != 1 or not key.endswith("*"):
        return (
            "invalid-value",
            f"resource-strategy-fit resources key '{key}': only one trailing '*' is supported, "
            "Volcano ignores the entry",
            "write a prefix pattern such as 'nvidia.com/*'",
        )
    return None


def _listed_in_sra(key: str, parent: Mapping[Any, Any]) -> tuple[str, str, str | None] | None:
    if key in _csv(parent.get("resources")):
        return None
    return (
        "unknown-plugin-argument",
        f"resource-strategy-fit reads sra.resourceWeight[{key}] only for resources listed in sra.resources: "
        "Volcano ignores it",
        f"add '{key}' to sra.resources",
    )


def _listed_in_proportional(key: str, parent: Mapping[Any, Any]) -> tuple[str, str, str | None] | None:
    listed = _csv(parent.get("resources"))
    resource, dot, dimension = key.rpartition(".")
    if dot and dimension in ("cpu", "memory") and resource in listed:
        return None
    if dot and dimension in ("cpu", "memory"):
        hint = f"add '{resource}' to proportional.resources"
    else:
        hint = "keys are '<resource>.cpu' and '<resource>.memory', e.g. 'nvidia.com/gpu.cpu'"
    return (
        "unknown-plugin-argument",
        f"resource-strategy-fit does not read proportional.resourceProportion[{key}]: Volcano ignores it",
        hint,
    )


_FATAL = Effect.FATAL
_PANIC = Effect.PANIC

_LOW_NODE_THRESHOLDS = MapOf(
    _int(100, _PANIC, minimum=0, maximum=100), Effect.DROPPED, known_keys=("cpu", "memory", "pods")
)

PLUGINS: dict[str, PluginSpec] = {
    "priority": PluginSpec(),
    "gang": PluginSpec(),
    "conformance": PluginSpec(),
    "drf": PluginSpec(),
    "proportion": PluginSpec(),
    "pdb": PluginSpec(),
    "resourcequota": PluginSpec(),
    "cdp": PluginSpec(),
    "binpack": PluginSpec(
        arguments={
            "binpack.weight": _int(1),
            "binpack.cpu": _int(1, minimum=0, value_effect="Volcano uses 1 instead"),
            "binpack.memory": _int(1, minimum=0, value_effect="Volcano uses 1 instead"),
            "binpack.resources": Scalar(Kind.CSV, Effect.DROPPED, ""),
        },
        families=(
            Family(
                "binpack.resources.",
                _int(1, minimum=0, value_effect="Volcano uses 1 instead"),
                listed_by="binpack.resources",
                placeholder="<resource>",
            ),
        ),
    ),
    "nodeorder": PluginSpec(
        arguments={
            "leastrequested.weight": _int(1),
            "mostrequested.weight": _int(0),
            "nodeaffinity.weight": _int(2),
            "podaffinity.weight": _int(2),
            "balancedresource.weight": _int(1),
            "tainttoleration.weight": _int(3),
            "imagelocality.weight": _int(1),
            "podtopologyspread.weight": _int(2),
        }
    ),
    "predicates": PluginSpec(
        arguments={
            "predicate.NodeAffinityEnable": _bool(True),
            "predicate.NodePortsEnable": _bool(True),
            "predicate.TaintTolerationEnable": _bool(True),
            "predicate.PodAffinityEnable": _bool(True),
            "predicate.NodeVolumeLimitsEnable": _bool(True),
            "predicate.VolumeZoneEnable": _bool(True),
            "predicate.PodTopologySpreadEnable": _bool(True),
            "predicate.VolumeBindingEnable": _bool(True),
            "predicate.CacheEnable": _bool(False),
            "volumebinding.bindTimeoutSeconds": _int(600, _FATAL),
            "volumebinding.weight": _int(1, _FATAL),
            "volumebinding.shape": ListOf(
                Struct({"utilization": _int(None, _FATAL), "score": _int(None, _FATAL)}, _FATAL), _FATAL
            ),
            "dynamicresources.filterTimeoutSeconds": _int(10, _FATAL, minimum=0),
        },
        retired={
            "predicate.GPUSharingEnable": "moved to deviceshare.GPUSharingEnable in Volcano v1.9 "
            "(an argument of the deviceshare plugin)",
            "predicate.GPUNumberEnable": "moved to deviceshare.GPUNumberEnable in Volcano v1.9 "
            "(an argument of the deviceshare plugin)",
            "predicate.NodeLockEnable": "moved to deviceshare.NodeLockEnable in Volcano v1.9 "
            "(an argument of the deviceshare plugin)",
            "predicate.VGPUEnable": "moved to deviceshare.VGPUEnable in Volcano v1.9 "
            "(an argument of the deviceshare plugin)",
            "predicate.ProportionalEnable": "removed in Volcano v1.13; use the resource-strategy-fit plugin's "
            "'proportional' argument",
            "predicate.resources": "removed in Volcano v1.13; use the resource-strategy-fit plugin's "
            "'proportional' argument",
            "predicate.DynamicResourceAllocationEnable": "not read since Volcano v1.15: DRA follows the "
            "Kubernetes DynamicResourceAllocation feature gate; delete it",
        },
        retired_prefixes={
            "predicate.resources.": "removed in Volcano v1.13; use the resource-strategy-fit plugin's "
            "'proportional.resourceProportion'",
        },
    ),
    "deviceshare": PluginSpec(
        arguments={
            "deviceshare.GPUSharingEnable": _bool(False),
            "deviceshare.GPUNumberEnable": _bool(False),
            "deviceshare.NodeLockEnable": _bool(False),
            "deviceshare.VGPUEnable": _bool(False),
            "deviceshare.AscendMindClusterVNPUEnable": _bool(False),
            "deviceshare.AscendHAMiVNPUEnable": _bool(False),
            "deviceshare.SchedulePolicy": _str(
                "", _PANIC, choices=("binpack", "spread"), value_effect="Volcano has no such device policy"
            ),
            "deviceshare.ScheduleWeight": _int(0),
            "deviceshare.KnownGeometriesCMName": _str("volcano-vgpu-device-config"),
            "deviceshare.KnownGeometriesCMNamespace": _str("kube-system"),
            "deviceshare.GPUExclusiveRules": ListOf(MapOf(_str(None, Effect.DROPPED), Effect.DROPPED), Effect.DROPPED),
        },
        exclusive=(
            (
                "deviceshare.GPUSharingEnable",
                "deviceshare.GPUNumberEnable",
                "the scheduler exits ('can not define true in both gpu sharing and gpu number') and crash-loops",
            ),
            (
                "deviceshare.GPUSharingEnable",
                "deviceshare.VGPUEnable",
                "the scheduler exits ('gpu-share and vgpu can't be used together') and crash-loops",
            ),
            (
                "deviceshare.GPUNumberEnable",
                "deviceshare.VGPUEnable",
                "the scheduler exits ('gpu-share and vgpu can't be used together') and crash-loops",
            ),
        ),
    ),
    "overcommit": PluginSpec(
        arguments={
            "overcommit-factor": _float(1.2, minimum=1.0, value_effect="Volcano uses the default 1.2 instead"),
        }
    ),
    "capacity": PluginSpec(
        arguments={
            "ancestorReclaimLevel": _int(0, minimum=0, value_effect="Volcano uses 0 instead"),
            "capacity.DynamicResourceAllocationEnable": _bool(None),
            "capacity.DRAConsumableCapacityEnable": _bool(None),
        }
    ),
    "numa-aware": PluginSpec(arguments={"weight": _int(1)}),
    "task-topology": PluginSpec(arguments={"task-topology.weight": _int(1)}),
    "network-topology-aware": PluginSpec(
        arguments={
            "weight": _int(1, minimum=0, value_effect="Volcano uses 1 instead"),
            "hypernode.binpack.cpu": _int(1),
            "hypernode.binpack.memory": _int(1),
            "hypernode.binpack.resources": Scalar(Kind.CSV, Effect.DROPPED, ""),
            "hypernode.binpack.normal-pod.enable": _bool(True),
            "hypernode.binpack.normal-pod.fading": _float(0.8, minimum=0.0),
            "hypernode.gradient.evict.max-hypernodes": _int(8, minimum=1),
        },
        families=(
            Family(
                "hypernode.binpack.resources.",
                _int(1),
                listed_by="hypernode.binpack.resources",
                placeholder="<resource>",
            ),
        ),
    ),
    "resource-strategy-fit": PluginSpec(
        arguments={
            "resourceStrategyFitWeight": _int(10, _FATAL, minimum=0, value_effect="Volcano uses the default 10"),
            "resources": MapOf(
                Struct(
                    {
                        "type": _str(
                            "LeastAllocated",
                            _FATAL,
                            choices=("LeastAllocated", "MostAllocated"),
                            value_effect="Volcano silently uses LeastAllocated",
                        ),
                        "weight": _int(1, _FATAL, minimum=1, value_effect="Volcano uses 1 instead"),
                    },
                    _FATAL,
                ),
                _FATAL,
                key_check=_wildcard_resource,
            ),
            "sra": Struct(
                {
                    "enable": _bool(False, _FATAL),
                    "resources": Scalar(Kind.CSV, _FATAL, ""),
                    "weight": _int(None, _FATAL),
                    "resourceWeight": MapOf(
                        _int(1, _FATAL, minimum=0, value_effect="Volcano uses 1 instead"),
                        _FATAL,
                        key_check=_listed_in_sra,
                    ),
                },
                _FATAL,
            ),
            "proportional": Struct(
                {
                    "enable": _bool(False, _FATAL),
                    "resources": Scalar(Kind.CSV, _FATAL, ""),
                    "resourceProportion": MapOf(
                        _float(1.0, _FATAL, minimum=0.0, value_effect="Volcano uses 1 instead"),
                        _FATAL,
                        key_check=_listed_in_proportional,
                    ),
                },
                _FATAL,
            ),
        }
    ),
    "sla": PluginSpec(arguments={"sla-waiting-time": _duration()}),
    "tdm": PluginSpec(
        arguments={
            "tdm.evict.period": _duration("1m", _PANIC, value_effect="Volcano silently uses the default 1m"),
        },
        families=(
            Family(
                "tdm.revocable-zone.",
                Scalar(Kind.CLOCK_RANGE, _PANIC, value_effect="the zone is never active"),
                placeholder="<zone>",
            ),
        ),
    ),
    "rescheduling": PluginSpec(
        arguments={
            "interval": _duration("5m", _PANIC, value_effect="Volcano silently uses the default 5m"),
            "metricsPeriod": _str("5m", _PANIC),
            "strategies": ListOf(
                Struct(
                    {
                        "name": _str(
                            None,
                            Effect.DROPPED,
                            choices=("lowNodeUtilization",),
                            value_effect="Volcano has no victim function for it",
                        ),
                        "params": Struct(
                            {
                                "thresholds": _LOW_NODE_THRESHOLDS,
                                "targetThresholds": _LOW_NODE_THRESHOLDS,
                                "thresholdPriorityClassName": _str("system-cluster-critical"),
                                "nodeFit": _bool(True),
                            },
                            Effect.DROPPED,
                        ),
                    },
                    Effect.DROPPED,
                ),
                Effect.DROPPED,
            ),
        }
    ),
    "usage": PluginSpec(
        arguments={
            "usage.weight": _int(5),
            "cpu.weight": _int(1),
            "memory.weight": _int(1),
            "thresholds": Struct(
                {
                    "cpu": _int(80, Effect.ZERO, minimum=0, maximum=100),
                    "mem": _int(80, Effect.ZERO, minimum=0, maximum=100),
                },
                Effect.IGNORED,
            ),
            "estimator": Struct(
                {
                    "request_ratio": _float(0.7),
                    "burst_ratio": _float(0.0),
                    "risk_threshold": _float(0.6),
                    "risk_factor": _float(1.2, minimum=1.0, value_effect="Volcano ignores a factor below 1.0"),
                    "be_cpu": Scalar(Kind.QUANTITY, _IGN, "250m"),
                    "be_mem": Scalar(Kind.QUANTITY, _IGN, "200Mi"),
                },
                Effect.IGNORED,
            ),
        }
    ),
    "nodegroup": PluginSpec(arguments={"strict": _bool(True), "enablePreferredOrder": _bool(False)}),
    "extender": PluginSpec(
        arguments={
            "extender.urlPrefix": _str(""),
            "extender.httpTimeout": _duration("1s"),
            **{
                f"extender.{verb}Verb": _str("")
                for verb in (
                    "onSessionOpen",
                    "onSessionClose",
                    "predicate",
                    "prioritize",
                    "preemptable",
                    "reclaimable",
                    "queueOverused",
                    "jobEnqueueable",
                    "jobEnqueued",
                    "jobReady",
                    "allocateFunc",
                    "deallocateFunc",
                )
            },
            "extender.ignorable": _bool(False),
            "extender.managedResources": ListOf(_str(None, _FATAL), _FATAL),
        }
    ),
}

REMOVED_PLUGINS: dict[str, str] = {"reservation": "the reservation plugin was removed in Volcano v1.6; delete it"}

PLUGIN_CONFLICTS: tuple[Conflict, ...] = (
    Conflict(
        "proportion",
        "capacity",
        same_tier=False,
        flag=None,
        consequence="both divide the cluster between queues, and Volcano documents them as conflicting "
        "(nothing in the scheduler stops it)",
        hint="keep one: capacity (deserved, hierarchical queues) or proportion (weights)",
    ),
    Conflict(
        "proportion",
        "drf",
        same_tier=True,
        flag="enableHierarchy",
        consequence="Volcano rejects the whole file ('proportion and drf with hierarchy enabled conflicts') "
        "and keeps its previous configuration",
        hint="set enableHierarchy: false on drf, or move drf to another tier",
    ),
)

# Which plugin reads an argument key, for "it is an argument of the X plugin" hints.
_ARGUMENT_OWNER: dict[str, str] = {key: plugin for plugin, spec in reversed(PLUGINS.items()) for key in spec.arguments}


# --------------------------------------------------------------------------------------------------------------
# Value helpers

# Go's time.ParseDuration: "0", or one or more <decimal><unit>, with an optional sign.
_DURATION = re.compile(r"[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")
_PARSE_BOOL = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_PARSE_BOOL |= {"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}

_EXPECTED = {
    Kind.INT: "a YAML integer",
    Kind.FLOAT: "a number",
    Kind.BOOL: "a YAML boolean",
    Kind.STRING: "a string",
    Kind.DURATION: "a duration string",
    Kind.CSV: "a comma-separated string",
    Kind.CLOCK_RANGE: "a string 'HH:MM-HH:MM'",
    Kind.QUANTITY: "a quantity",
}


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _accepts(kind: Kind, value: Any) -> bool:
    if kind is Kind.INT:
        return _is_int(value)
    if kind is Kind.FLOAT:
        return _is_number(value)
    if kind is Kind.BOOL:
        return isinstance(value, bool)
    if kind is Kind.QUANTITY:
        return isinstance(value, str) or _is_number(value)
    return isinstance(value, str)


def _is_quantity(text: str) -> bool:
    """Whether resource.ParseQuantity accepts `text` (suffixes are case-sensitive: '200mi' is refused)."""
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _yaml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _describe(value: Any) -> str:
    return "empty" if value is None else describe_value(value)


def _yaml_tag(value: Any) -> str:
    if isinstance(value, bool):
        return "!!bool"
    if isinstance(value, int):
        return "!!int"
    if isinstance(value, float):
        return "!!float"
    if isinstance(value, str):
        return "!!str"
    if isinstance(value, Mapping):
        return "!!map"
    return "!!seq" if _is_list(value) else "!!null"


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"' if value else '""'
    return _yaml_text(value)


def _did_you_mean(word: str, candidates: Sequence[str] | Mapping[str, Any]) -> str | None:
    match = closest(word, candidates)
    return f"did you mean '{match}'?" if match else None


def _label(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    if not base:
        return key
    if any(c in key for c in "./*") or not key:
        return f"{base}[{key}]"
    return f"{base}.{key}"


# --------------------------------------------------------------------------------------------------------------
# Checking values against specs


@dataclass(frozen=True, slots=True)
class _Ctx:
    owner: str  # "binpack argument"


def _consequence(effect: Effect, default: Any) -> str:
    if effect is Effect.IGNORED and default is not None:
        return f"{effect.value} and uses the default {_fmt(default)}"
    return effect.value


def _type_hint(spec: Scalar, value: Any) -> str:
    kind = spec.kind
    if kind is Kind.INT:
        if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
            return f"write {int(value)} without quotes"
        if isinstance(value, float) and value.is_integer():
            return f"write {int(value)} without the decimal point"
        return f"write a whole number such as {spec.default if _is_int(spec.default) else 1}"
    if kind is Kind.FLOAT:
        if isinstance(value, str):
            try:
                float(value)
            except ValueError:
                pass
            else:
                return f"write {value.strip()} without quotes"
        return f"write a number such as {spec.default if spec.default is not None else 1.0}"
    if kind is Kind.BOOL:
        if isinstance(value, str) and value.strip() in _PARSE_BOOL:
            return f"write {_yaml_text(_PARSE_BOOL[value.strip()])} without quotes"
        return "write true or false"
    if kind is Kind.DURATION:
        if _is_number(value):
            return f'write a quoted Go duration, e.g. "{_yaml_text(value)}s" for {_yaml_text(value)} seconds'
        return f'write a quoted Go duration such as "{spec.default or "1m"}"'
    if kind is Kind.CLOCK_RANGE:
        return 'write a quoted range such as "10:00-21:00"'
    if kind is Kind.QUANTITY:
        return 'write a quantity such as "250m" or "200Mi"'
    if spec.choices:
        return "write one of " + ", ".join(f"'{c}'" for c in spec.choices if c)
    if kind is Kind.CSV and _is_list(value) and all(isinstance(v, str) for v in value):
        return f'write one string: "{", ".join(value)}"'
    if value is not None and not isinstance(value, Mapping) and not _is_list(value):
        return f'quote it: "{_yaml_text(value)}"'
    return "write a string"


def _empty(label: str, path: Path, ctx: _Ctx) -> Finding:
    return Finding(
        path,
        "plugin-argument-type",
        f"{ctx.owner} '{label}' is empty: Volcano treats it as unset or zero",
        "give it a value or delete the key",
    )


def _check_scalar(spec: Scalar, value: Any, label: str, path: Path, ctx: _Ctx) -> list[Finding]:
    if value is None:
        return [_empty(label, path, ctx)]
    kind = spec.kind
    if not _accepts(kind, value):
        what = f"{ctx.owner} '{label}' is {_describe(value)}, not {_EXPECTED[kind]}"
        if kind is Kind.INT and spec.effect is Effect.FATAL and isinstance(value, float):
            consequence = f"framework.Get truncates it to {int(value)}"
        elif kind is Kind.BOOL and isinstance(value, str) and value.strip() in _PARSE_BOOL:
            consequence = "recent Volcano releases parse the string, older ones ignore it"
        else:
            consequence = _consequence(spec.effect, spec.default)
        return [Finding(path, "plugin-argument-type", f"{what}: {consequence}", _type_hint(spec, value))]

    problem: str | None = None
    hint: str | None = None
    if kind in (Kind.INT, Kind.FLOAT):
        if spec.minimum is not None and value < spec.minimum:
            problem, hint = f"below the minimum {_yaml_text(spec.minimum)}", f"use at least {spec.minimum}"
        elif spec.maximum is not None and value > spec.maximum:
            problem, hint = f"above the maximum {_yaml_text(spec.maximum)}", f"use at most {spec.maximum}"
        if problem:
            return [
                Finding(
                    path, "invalid-value", f"{ctx.owner} '{label}' is {value}, {problem}: {spec.value_effect}", hint
                )
            ]
        return []
    if kind is Kind.DURATION and not _DURATION.fullmatch(value):
        problem = "not a Go duration"
        hint = 'use Go duration syntax such as "300ms", "5m" or "1h30m"'
    elif kind is Kind.CLOCK_RANGE and not _valid_clock_range(value):
        problem = "not a range 'HH:MM-HH:MM'"
        hint = 'write a range such as "10:00-21:00" (no spaces around "-")'
    elif kind is Kind.QUANTITY and isinstance(value, str) and not _is_quantity(value.strip()):
        problem = "not a Kubernetes quantity"
        hint = 'write a quantity such as "250m" or "200Mi"'
    elif spec.choices and value not in spec.choices:
        problem = "not one of " + ", ".join(f"'{c}'" for c in spec.choices if c)
        hint = _did_you_mean(value, [c for c in spec.choices if c]) or "use one of the values listed"
    if problem:
        return [
            Finding(path, "invalid-value", f"{ctx.owner} '{label}' is '{value}', {problem}: {spec.value_effect}", hint)
        ]
    return []


def _valid_clock_range(value: str) -> bool:
    parts = value.strip().split("-")
    if len(parts) != 2:
        return False
    for part in parts:
        match = _CLOCK.fullmatch(part)
        if not match or int(match[1]) > 23 or int(match[2]) > 59:
            return False
    return True


def _not_container(spec: Struct | MapOf | ListOf, value: Any, label: str, path: Path, ctx: _Ctx) -> Finding:
    expected = "a list" if isinstance(spec, ListOf) else "a mapping"
    return Finding(
        path,
        "plugin-argument-type",
        f"{ctx.owner} '{label}' is {_describe(value)}, not {expected}: {_consequence(spec.effect, None)}",
        f"write {expected}",
    )


def _check_value(spec: Spec, value: Any, label: str, path: Path, ctx: _Ctx, parent: Mapping[Any, Any]) -> list[Finding]:
    if isinstance(spec, Scalar):
        return _check_scalar(spec, value, label, path, ctx)
    if value is None:
        return [_empty(label, path, ctx)]
    out: list[Finding] = []
    if isinstance(spec, ListOf):
        if not _is_list(value):
            return [_not_container(spec, value, label, path, ctx)]
        for i, item in enumerate(value):
            out += _check_value(spec.item, item, _label(label, i), (*path, i), ctx, parent)
        return out
    if not isinstance(value, Mapping):
        return [_not_container(spec, value, label, path, ctx)]
    if isinstance(spec, Struct):
        for key, item in value.items():
            sub = spec.fields.get(key) if isinstance(key, str) else None
            if sub is None:
                out.append(
                    Finding(
                        (*path, key),
                        "unknown-plugin-argument",
                        f"{ctx.owner} '{label}' has no key '{key}': Volcano ignores it",
                        _did_you_mean(str(key), spec.fields) or "keys are " + ", ".join(spec.fields),
                    )
                )
                continue
            out += _check_value(sub, item, _label(label, key), (*path, key), ctx, value)
        return out
    for key, item in value.items():  # MapOf
        text = str(key)
        if spec.known_keys and text not in spec.known_keys:
            out.append(
                Finding(
                    (*path, key),
                    "unknown-plugin-argument",
                    f"{ctx.owner} '{label}' has no key '{text}': Volcano ignores it",
                    _did_you_mean(text, spec.known_keys) or "keys are " + ", ".join(spec.known_keys),
                )
            )
        elif spec.key_check is not None:
            bad = spec.key_check(text, parent)
            if bad is not None:
                out.append(Finding((*path, key), *bad))
                continue
        out += _check_value(spec.value, item, _label(label, text), (*path, key), ctx, value)
    return out


def _unknown_argument_hint(key: str, spec: PluginSpec, plugin: str) -> str | None:
    if key in PLUGIN_FLAGS or key in _LEGACY_FLAGS:
        return f"'{key}' is a plugin option: write it beside 'name', not under 'arguments'"
    candidates = [*spec.arguments, *(f.prefix + f.placeholder for f in spec.families)]
    suggestion = _did_you_mean(key, candidates) if candidates else None
    if suggestion:
        return suggestion
    owner = _ARGUMENT_OWNER.get(key)
    if owner is not None and owner != plugin:
        return f"'{key}' is an argument of the {owner} plugin"
    if not candidates:
        return "it reads no arguments; delete it"
    return "it reads " + ", ".join(candidates)


def _check_arguments(args: Mapping[Any, Any], spec: PluginSpec, path: Path, ctx: _Ctx, plugin: str) -> list[Finding]:
    out: list[Finding] = []
    subject = ctx.owner.removesuffix(" argument")
    for key, value in args.items():
        text = str(key)
        where = (*path, key)
        sub = spec.arguments.get(text)
        if sub is not None:
            out += _check_value(sub, value, text, where, ctx, args)
            continue
        family = next((f for f in spec.families if text.startswith(f.prefix) and len(text) > len(f.prefix)), None)
        if family is not None:
            name = text[len(family.prefix) :]
            if family.listed_by is not None and name not in _csv(args.get(family.listed_by)):
                out.append(
                    Finding(
                        where,
                        "unknown-plugin-argument",
                        f"{subject} reads '{text}' only for resources listed in '{family.listed_by}': "
                        "Volcano ignores it",
                        f"add '{name}' to {family.listed_by}",
                    )
                )
                continue
            out += _check_value(family.value, value, text, where, ctx, args)
            continue
        retired = spec.retired.get(text)
        if retired is None:
            retired = next((h for p, h in spec.retired_prefixes.items() if text.startswith(p)), None)
        out.append(
            Finding(
                where,
                "unknown-plugin-argument",
                f"{subject} does not read the argument '{text}': Volcano ignores it",
                retired or _unknown_argument_hint(text, spec, plugin),
            )
        )
    for first, second, consequence in spec.exclusive:
        if _truthy(args.get(first)) and _truthy(args.get(second)):
            out.append(
                Finding(
                    (*path, second),
                    "conflicting-plugins",
                    f"{subject} enables both '{first}' and '{second}': {consequence}",
                    f"set one of {first} and {second} to false",
                )
            )
    return out


def _truthy(value: Any) -> bool:
    """True as Volcano's GetBool reads it (a boolean, or a string strconv.ParseBool reads as true)."""
    if isinstance(value, str):
        return _PARSE_BOOL.get(value) is True
    return value is True


# --------------------------------------------------------------------------------------------------------------
# Public checks


def check_plugin(entry: Mapping[str, Any], path: Sequence[str | int] = ()) -> list[Finding]:
    """Check one plugin entry ``{name, <flags>, arguments}``; `path` is where the entry sits."""
    base: Path = tuple(path)
    if not isinstance(entry, Mapping):
        return [
            Finding(
                base,
                "invalid-value",
                f"a plugin entry is {_describe(entry)}, not a mapping: Volcano rejects the whole file "
                "and keeps its previous configuration",
                "write a mapping such as {name: gang}",
            )
        ]
    out: list[Finding] = []
    name = entry.get("name")
    plugin: str | None = None
    if name is None or name == "":
        out.append(
            Finding(
                (*base, "name") if "name" in entry else base,
                "invalid-value",
                "a plugin entry has no name: Volcano logs 'Failed to get plugin' every session and skips it",
                "add name: <plugin>",
            )
        )
    elif not isinstance(name, str):
        out.append(
            Finding(
                (*base, "name"),
                "invalid-value",
                f"the plugin name is {_describe(name)}, not a string: no plugin has that name",
                "write the plugin name as a string, such as 'gang'",
            )
        )
    elif name not in PLUGINS:
        removed = REMOVED_PLUGINS.get(name.strip())
        suggestion = closest(name, PLUGINS)
        out.append(
            Finding(
                (*base, "name"),
                "unknown-scheduler-plugin",
                f"unknown plugin '{name}': Volcano logs 'Failed to get plugin {name}.' every session and skips it",
                removed or (f"did you mean '{suggestion}'?" if suggestion else "plugins are " + ", ".join(PLUGINS)),
            )
        )
    else:
        plugin = name
    who = plugin or (name if isinstance(name, str) and name else "the plugin")

    for key, value in entry.items():
        if key in ("name", "arguments"):
            continue
        text = str(key)
        default = PLUGIN_FLAGS.get(text, _LEGACY_FLAGS.get(text))
        if default is not None:
            if value is None:
                out.append(
                    Finding(
                        (*base, key),
                        "invalid-value",
                        f"{who} option '{text}' is empty: Volcano treats it as unset ({_yaml_text(default)})",
                        "write true or false",
                    )
                )
            elif not isinstance(value, bool):
                hint = _type_hint(Scalar(Kind.BOOL, Effect.REJECTED), value)
                out.append(
                    Finding(
                        (*base, key),
                        "invalid-value",
                        f"{who} option '{text}' is {_describe(value)}, not a YAML boolean: Volcano rejects the "
                        f"whole file (cannot unmarshal {_yaml_tag(value)} into bool) and keeps its previous "
                        "configuration",
                        hint,
                    )
                )
            continue
        spec = PLUGINS.get(plugin) if plugin else None
        if spec is not None and (text in spec.arguments or any(text.startswith(f.prefix) for f in spec.families)):
            hint = f"'{text}' is an argument of {plugin}: move it under 'arguments'"
        else:
            hint = _did_you_mean(text, [*PLUGIN_FLAGS, "name", "arguments"]) or (
                "a plugin entry holds name, arguments and the enable.../enabled... options"
            )
        out.append(
            Finding((*base, key), "unknown-plugin-option", f"{who} has no option '{text}': Volcano ignores it", hint)
        )

    args = entry.get("arguments")
    if args is not None:
        if not isinstance(args, Mapping):
            out.append(
                Finding(
                    (*base, "arguments"),
                    "invalid-value",
                    f"{who} arguments are {_describe(args)}, not a mapping: Volcano rejects the whole file "
                    f"(cannot unmarshal {_yaml_tag(args)} into map) and keeps its previous configuration",
                    "write the arguments as key: value pairs",
                )
            )
        elif plugin is not None:
            out += _check_arguments(args, PLUGINS[plugin], (*base, "arguments"), _Ctx(f"{plugin} argument"), plugin)
    return out


def check_actions(actions: Sequence[str], path: Sequence[str | int] = ()) -> list[Finding]:
    """Check a list of action names (the policy form); a string is read as the conf's comma-separated form."""
    base: Path = tuple(path)
    if isinstance(actions, str):
        return _check_action_names([(part.strip(), base) for part in actions.split(",")], base)
    if not _is_list(actions):
        return [Finding(base, "invalid-value", f"actions are {_describe(actions)}, not a list of action names", None)]
    return _check_action_names([(item, (*base, i)) for i, item in enumerate(actions)], base)


def _check_action_names(items: list[tuple[Any, Path]], base: Path) -> list[Finding]:
    if not items:
        return [
            Finding(
                base,
                "invalid-value",
                "no actions: Volcano looks up the action '' and rejects the whole file",
                'list the actions to run, e.g. "enqueue, allocate, backfill"',
            )
        ]
    out: list[Finding] = []
    seen: set[str] = set()
    for name, where in items:
        if not isinstance(name, str):
            out.append(Finding(where, "invalid-value", f"an action name is {_describe(name)}, not a string", None))
            continue
        name = name.strip()
        if not name:
            out.append(
                Finding(
                    where,
                    "invalid-value",
                    "an empty action name: Volcano fails to find the action '' and rejects the whole file",
                    "remove the stray comma",
                )
            )
        elif name not in ACTIONS:
            hint = (
                REMOVED_ACTIONS.get(name)
                or _did_you_mean(name, ACTIONS)
                or (f"'{name}' is a plugin, not an action: remove it here" if name in PLUGINS else None)
                or "remove it; actions are " + ", ".join(ACTIONS)
            )
            out.append(
                Finding(
                    where,
                    "unknown-scheduler-action",
                    f"unknown action '{name}': Volcano (v1.14 and later) fails to find it and rejects the whole "
                    "file, keeping its previous configuration",
                    hint,
                )
            )
        elif name in seen:
            out.append(
                Finding(
                    where,
                    "invalid-value",
                    f"the action '{name}' is listed twice: Volcano runs it twice every cycle",
                    "list each action once",
                )
            )
        seen.add(name)
    return out


def check_conf(conf: Mapping[str, Any]) -> list[Finding]:
    """Check the tiers of a ``volcano-scheduler.conf`` (already parsed from YAML) and return every finding."""
    return _check_tiers(conf.get("tiers"))


def _check_tiers(tiers: Any) -> list[Finding]:
    if tiers is None:
        return []
    if not _is_list(tiers):
        return [
            Finding(
                ("tiers",),
                "invalid-value",
                f"tiers are {_describe(tiers)}, not a list: Volcano rejects the whole file "
                f"(cannot unmarshal {_yaml_tag(tiers)}) and keeps its previous configuration",
                "write tiers as a list of {plugins: [...]}",
            )
        ]
    out: list[Finding] = []
    placed: list[tuple[int, Path, str, Mapping[str, Any]]] = []
    first_seen: dict[str, Path] = {}
    for t, tier in enumerate(tiers):
        tier_path: Path = ("tiers", t)
        if not isinstance(tier, Mapping):
            out.append(
                Finding(
                    tier_path,
                    "invalid-value",
                    f"tier {t} is {_describe(tier)}, not a mapping: Volcano rejects the whole file",
                    "write a tier as {plugins: [...]}",
                )
            )
            continue
        for key in tier:
            if key != "plugins":
                out.append(
                    Finding(
                        (*tier_path, key),
                        "invalid-value",
                        f"tier {t} has the key '{key}', which Volcano ignores (a tier holds only 'plugins')",
                        _did_you_mean(str(key), ["plugins"]) or "move it into a plugin entry, or delete it",
                    )
                )
        plugins = tier.get("plugins")
        if plugins is None:
            continue
        if not _is_list(plugins):
            out.append(
                Finding(
                    (*tier_path, "plugins"),
                    "invalid-value",
                    f"the plugins of tier {t} are {_describe(plugins)}, not a list: Volcano rejects the whole file",
                    "write plugins as a list of {name: ...} entries",
                )
            )
            continue
        for p, entry in enumerate(plugins):
            entry_path: Path = (*tier_path, "plugins", p)
            out += check_plugin(entry, entry_path)
            name = entry.get("name") if isinstance(entry, Mapping) else None
            if not isinstance(name, str) or name not in PLUGINS:
                continue
            if name in first_seen:
                out.append(
                    Finding(
                        (*entry_path, "name"),
                        "duplicate-plugin",
                        f"the plugin '{name}' is configured twice (first at {_where(first_seen[name])}): Volcano "
                        "opens it twice every session and one copy's settings override the other's",
                        "keep one entry and merge their options and arguments",
                    )
                )
            else:
                first_seen[name] = entry_path
            placed.append((t, entry_path, name, entry))
    return out + _check_conflicts(placed)


def _where(path: Path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else ("." if i else "") + p for i, p in enumerate(path))


def _check_conflicts(placed: list[tuple[int, Path, str, Mapping[str, Any]]]) -> list[Finding]:
    out: list[Finding] = []
    for conflict in PLUGIN_CONFLICTS:
        firsts = [(t, p) for t, p, name, _ in placed if name == conflict.first]
        for t, path, name, entry in placed:
            if name != conflict.second:
                continue
            if conflict.flag is not None and entry.get(conflict.flag) is not True:
                continue
            partners = [(ft, fp) for ft, fp in firsts if not conflict.same_tier or ft == t]
            if not partners:
                continue
            partner_path = partners[0][1]
            if conflict.flag is not None:
                where: Path = (*path, conflict.flag)
                what = f"{name} with {conflict.flag}: true and {conflict.first} are in the same tier ({t})"
            else:
                # Point at whichever of the two comes later in the file.
                where = (*max(path, partner_path), "name")
                what = f"{conflict.first} and {conflict.second} are both enabled"
            out.append(Finding(where, "conflicting-plugins", f"{what}: {conflict.consequence}", conflict.hint))
    return out

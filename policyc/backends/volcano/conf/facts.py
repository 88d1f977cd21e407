"""What Volcano's scheduler reads from ``volcano-scheduler.conf``, and how: its actions, its plugins with their flags
and arguments (type, default, what a wrong value does), the plugins that conflict, and how it parses values.

Volcano at commit ``ed72c7c8`` (master after v1.16.0-alpha.1, the build the recorded vectors ran), checked against
v1.15.1 where the two differ; the fact sheet is ``../shared/reference/volcano.md`` §2. Each table names the files it
comes from, under ``pkg/scheduler/`` of volcano-sh/volcano.
"""

from __future__ import annotations

import re

from policyc.backends.volcano.conf.terms import (
    Conflict,
    Effect,
    Exclusive,
    Family,
    Kind,
    ListOf,
    MapOf,
    PluginSpec,
    Scalar,
    Struct,
    boolean,
    duration,
    integer,
    names,
    number,
    string,
)
from policyc.backends.volcano.settings import ACTIONS

__all__ = [
    "ACTIONS",
    "CLOCK",
    "GO_DURATION",
    "LEGACY_FLAGS",
    "PARSE_BOOL",
    "PLUGINS",
    "PLUGIN_CONFLICTS",
    "PLUGIN_FLAGS",
    "REMOVED_ACTIONS",
    "REMOVED_PLUGINS",
    "RESCHEDULING_THRESHOLDS",
]

FATAL, PANIC, DROPPED = Effect.FATAL, Effect.PANIC, Effect.DROPPED

# --------------------------------------------------------------------------------------------------------------
# Actions: `ACTIONS` (the registry, actions/factory.go), and those gone since v1.6.

REMOVED_ACTIONS: dict[str, str] = {
    "elect": "removed in Volcano v1.6; delete it",
    "reserve": "removed in Volcano v1.6; delete it",
}

# --------------------------------------------------------------------------------------------------------------
# Plugin options: the flags of PluginOption (conf/scheduler_conf.go, YAML keys as in its struct tags) and their
# defaults after ApplyPluginConfDefaults (plugins/defaults.go), which sets every absent flag to true but these two.

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

LEGACY_FLAGS: dict[str, bool] = {"EnabledClusterOrder": False}
"""The YAML key of the cluster-order flag from v1.5 to v1.15.1 (lower-case at ``ed72c7c8``)."""

# --------------------------------------------------------------------------------------------------------------
# Plugins: the registry (plugins/factory.go, each name its package's PluginName) and the arguments each reads.

RESCHEDULING_THRESHOLDS = MapOf(
    integer(100, PANIC, minimum=0, maximum=100), DROPPED, known_keys=("cpu", "memory", "pods")
)
"""rescheduling/low_node_utilization.go: a lowNodeUtilization threshold, per cent of a node, asserted to be an int."""

PLUGINS: dict[str, PluginSpec] = {
    # Plugins that read no argument (each in plugins/<name>/<name>.go).
    "priority": PluginSpec(),
    "gang": PluginSpec(),
    "conformance": PluginSpec(),
    "drf": PluginSpec(),
    "proportion": PluginSpec(),
    "pdb": PluginSpec(),
    "resourcequota": PluginSpec(),
    "cdp": PluginSpec(),
    # binpack/binpack.go: a weight below 0 becomes 1; a resource weight is read only for the resources listed.
    "binpack": PluginSpec(
        arguments={
            "binpack.weight": integer(1),
            "binpack.cpu": integer(1, minimum=0, value_effect="Volcano uses 1 instead"),
            "binpack.memory": integer(1, minimum=0, value_effect="Volcano uses 1 instead"),
            "binpack.resources": names(),
        },
        families=(
            Family(
                "binpack.resources.",
                integer(1, minimum=0, value_effect="Volcano uses 1 instead"),
                listed_by="binpack.resources",
                placeholder="<resource>",
            ),
        ),
    ),
    # nodeorder/nodeorder.go
    "nodeorder": PluginSpec(
        arguments={
            "leastrequested.weight": integer(1),
            "mostrequested.weight": integer(0),
            "nodeaffinity.weight": integer(2),
            "podaffinity.weight": integer(2),
            "balancedresource.weight": integer(1),
            "tainttoleration.weight": integer(3),
            "imagelocality.weight": integer(1),
            "podtopologyspread.weight": integer(2),
        }
    ),
    # predicates/predicates.go: the volumebinding and dynamicresources arguments through framework.Get.
    "predicates": PluginSpec(
        arguments={
            "predicate.NodeAffinityEnable": boolean(True),
            "predicate.NodePortsEnable": boolean(True),
            "predicate.TaintTolerationEnable": boolean(True),
            "predicate.PodAffinityEnable": boolean(True),
            "predicate.NodeVolumeLimitsEnable": boolean(True),
            "predicate.VolumeZoneEnable": boolean(True),
            "predicate.PodTopologySpreadEnable": boolean(True),
            "predicate.VolumeBindingEnable": boolean(True),
            "predicate.CacheEnable": boolean(False),
            "volumebinding.bindTimeoutSeconds": integer(600, FATAL),
            "volumebinding.weight": integer(1, FATAL),
            "volumebinding.shape": ListOf(
                Struct({"utilization": integer(None, FATAL), "score": integer(None, FATAL)}, FATAL), FATAL
            ),
            "dynamicresources.filterTimeoutSeconds": integer(10, FATAL, minimum=0),
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
    # deviceshare/deviceshare.go (the exclusive pairs end in klog.Fatal) and deviceshare/gpuexclusive.go.
    "deviceshare": PluginSpec(
        arguments={
            "deviceshare.GPUSharingEnable": boolean(False),
            "deviceshare.GPUNumberEnable": boolean(False),
            "deviceshare.NodeLockEnable": boolean(False),
            "deviceshare.VGPUEnable": boolean(False),
            "deviceshare.AscendMindClusterVNPUEnable": boolean(False),
            "deviceshare.AscendHAMiVNPUEnable": boolean(False),
            "deviceshare.SchedulePolicy": string(
                "", PANIC, choices=("binpack", "spread"), value_effect="Volcano has no such device policy"
            ),
            "deviceshare.ScheduleWeight": integer(0),
            "deviceshare.KnownGeometriesCMName": string("volcano-vgpu-device-config"),
            "deviceshare.KnownGeometriesCMNamespace": string("kube-system"),
            "deviceshare.GPUExclusiveRules": ListOf(MapOf(string(None, DROPPED), DROPPED), DROPPED),
        },
        exclusive=(
            Exclusive(
                "deviceshare.GPUSharingEnable",
                "deviceshare.GPUNumberEnable",
                "the scheduler exits ('can not define true in both gpu sharing and gpu number') and crash-loops",
            ),
            Exclusive(
                "deviceshare.GPUSharingEnable",
                "deviceshare.VGPUEnable",
                "the scheduler exits ('gpu-share and vgpu can't be used together') and crash-loops",
            ),
            Exclusive(
                "deviceshare.GPUNumberEnable",
                "deviceshare.VGPUEnable",
                "the scheduler exits ('gpu-share and vgpu can't be used together') and crash-loops",
            ),
        ),
    ),
    # overcommit/overcommit.go: a factor below 1.0 falls back to 1.2.
    "overcommit": PluginSpec(
        arguments={
            "overcommit-factor": number(1.2, minimum=1.0, value_effect="Volcano uses the default 1.2 instead"),
        }
    ),
    # capacity/capacity.go: ancestorReclaimLevel since v1.15, a negative level becomes 0.
    "capacity": PluginSpec(
        arguments={
            "ancestorReclaimLevel": integer(0, minimum=0, value_effect="Volcano uses 0 instead"),
            "capacity.DynamicResourceAllocationEnable": boolean(None),
            "capacity.DRAConsumableCapacityEnable": boolean(None),
        }
    ),
    # numaaware/numaaware.go
    "numa-aware": PluginSpec(arguments={"weight": integer(1)}),
    # task-topology/topology.go
    "task-topology": PluginSpec(arguments={"task-topology.weight": integer(1)}),
    # network-topology-aware/network_topology_aware.go: a weight below 0 becomes 1.
    "network-topology-aware": PluginSpec(
        arguments={
            "weight": integer(1, minimum=0, value_effect="Volcano uses 1 instead"),
            "hypernode.binpack.cpu": integer(1),
            "hypernode.binpack.memory": integer(1),
            "hypernode.binpack.resources": names(),
            "hypernode.binpack.normal-pod.enable": boolean(True),
            "hypernode.binpack.normal-pod.fading": number(0.8, minimum=0.0),
            "hypernode.gradient.evict.max-hypernodes": integer(8, minimum=1),
        },
        families=(
            Family(
                "hypernode.binpack.resources.",
                integer(1),
                listed_by="hypernode.binpack.resources",
                placeholder="<resource>",
            ),
        ),
    ),
    # resource-strategy-fit/{resource_strategy_fit,sra,proportional}.go, every argument through framework.Get.
    "resource-strategy-fit": PluginSpec(
        arguments={
            "resourceStrategyFitWeight": integer(10, FATAL, minimum=0, value_effect="Volcano uses the default 10"),
            "resources": MapOf(
                Struct(
                    {
                        "type": string(
                            "LeastAllocated",
                            FATAL,
                            choices=("LeastAllocated", "MostAllocated"),
                            value_effect="Volcano silently uses LeastAllocated",
                        ),
                        "weight": integer(1, FATAL, minimum=1, value_effect="Volcano uses 1 instead"),
                    },
                    FATAL,
                ),
                FATAL,
                prefix_patterns=True,
            ),
            "sra": Struct(
                {
                    "enable": boolean(False, FATAL),
                    "resources": names(FATAL),
                    "weight": integer(None, FATAL),
                    "resourceWeight": MapOf(
                        integer(1, FATAL, minimum=0, value_effect="Volcano uses 1 instead"),
                        FATAL,
                        keys_listed_in="resources",
                    ),
                },
                FATAL,
            ),
            "proportional": Struct(
                {
                    "enable": boolean(False, FATAL),
                    "resources": names(FATAL),
                    "resourceProportion": MapOf(
                        number(1.0, FATAL, minimum=0.0, value_effect="Volcano uses 1 instead"),
                        FATAL,
                        keys_listed_in="resources",
                        key_dimensions=("cpu", "memory"),
                    ),
                },
                FATAL,
            ),
        }
    ),
    # sla/sla.go
    "sla": PluginSpec(arguments={"sla-waiting-time": duration()}),
    # tdm/tdm.go: every value is asserted to be a string.
    "tdm": PluginSpec(
        arguments={
            "tdm.evict.period": duration("1m", PANIC, value_effect="Volcano silently uses the default 1m"),
        },
        families=(
            Family(
                "tdm.revocable-zone.",
                Scalar(Kind.CLOCK_RANGE, PANIC, value_effect="the zone is never active"),
                placeholder="<zone>",
            ),
        ),
    ),
    # rescheduling/rescheduling.go (interval and metricsPeriod asserted to be strings) and low_node_utilization.go,
    # the only strategy with a victim function.
    "rescheduling": PluginSpec(
        arguments={
            "interval": duration("5m", PANIC, value_effect="Volcano silently uses the default 5m"),
            "metricsPeriod": string("5m", PANIC),
            "strategies": ListOf(
                Struct(
                    {
                        "name": string(
                            None,
                            DROPPED,
                            choices=("lowNodeUtilization",),
                            value_effect="Volcano has no victim function for it",
                        ),
                        "params": Struct(
                            {
                                "thresholds": RESCHEDULING_THRESHOLDS,
                                "targetThresholds": RESCHEDULING_THRESHOLDS,
                                "thresholdPriorityClassName": string("system-cluster-critical"),
                                "nodeFit": boolean(True),
                            },
                            DROPPED,
                        ),
                    },
                    DROPPED,
                ),
                DROPPED,
            ),
        }
    ),
    # usage/usage.go and usage/estimator.go (the estimator: not in v1.15.1).
    "usage": PluginSpec(
        arguments={
            "usage.weight": integer(5),
            "cpu.weight": integer(1),
            "memory.weight": integer(1),
            "thresholds": Struct(
                {
                    "cpu": integer(80, Effect.ZERO, minimum=0, maximum=100),
                    "mem": integer(80, Effect.ZERO, minimum=0, maximum=100),
                },
                Effect.IGNORED,
            ),
            "estimator": Struct(
                {
                    "request_ratio": number(0.7),
                    "burst_ratio": number(0.0),
                    "risk_threshold": number(0.6),
                    "risk_factor": number(1.2, minimum=1.0, value_effect="Volcano ignores a factor below 1.0"),
                    "be_cpu": Scalar(Kind.QUANTITY, Effect.IGNORED, "250m"),
                    "be_mem": Scalar(Kind.QUANTITY, Effect.IGNORED, "200Mi"),
                },
                Effect.IGNORED,
            ),
        }
    ),
    # nodegroup/nodegroup.go: strict since v1.13, enablePreferredOrder since v1.15.
    "nodegroup": PluginSpec(arguments={"strict": boolean(True), "enablePreferredOrder": boolean(False)}),
    # extender/argument.go (extender.managedResources through framework.Get).
    "extender": PluginSpec(
        arguments={
            "extender.urlPrefix": string(""),
            "extender.httpTimeout": duration("1s"),
            **{
                f"extender.{verb}Verb": string("")
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
            "extender.ignorable": boolean(False),
            "extender.managedResources": ListOf(string(None, FATAL), FATAL),
        }
    ),
}

REMOVED_PLUGINS: dict[str, str] = {"reservation": "the reservation plugin was removed in Volcano v1.6; delete it"}

# --------------------------------------------------------------------------------------------------------------
# Conflicts: proportion and capacity (docs/user-guide/how_to_use_capacity_plugin.md; nothing in the code stops it),
# proportion and drf with hierarchy in one tier (util.go, UnmarshalSchedulerConf).

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

# --------------------------------------------------------------------------------------------------------------
# How values are parsed: GetBool with Go's strconv.ParseBool (framework/arguments.go), durations with Go's
# time.ParseDuration, tdm's revocable zones as two "15:04" clock times.

PARSE_BOOL: dict[str, bool] = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}

GO_DURATION = re.compile(r"[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)")
"""``0``, or one or more ``<decimal><unit>``, with an optional sign."""

CLOCK = re.compile(r"(\d{1,2}):(\d{2})")
"""A clock time of a revocable zone, ``HH:MM`` (hours up to 23, minutes up to 59)."""

"""A strict model of the part of kube-scheduler's `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`)
that policyc writes: profiles, their plugin sets and `NodeResourcesFit` scoring.

kube-scheduler decodes its configuration strictly and validates plugin arguments; policyc checks the same
rules before anything is deployed (facts from kube-scheduler v1.36 `config/v1/types*.go` and
`pkg/scheduler/apis/config/validation/validation_pluginargs.go`): profile names unique and non-empty, extension
points and plugin names as kube-scheduler defines them, scoring weights integers in (0, 100], a strategy type of
LeastAllocated, MostAllocated or RequestedToCapacityRatio.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

API_VERSION = "kubescheduler.config.k8s.io/v1"

PLUGINS = (
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
    "SchedulingGates",
    "DynamicResources",
)
"""kube-scheduler's in-tree plugins."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Plugin(_Strict):
    name: str
    weight: int | None = Field(None, ge=1, le=100)

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in PLUGINS:
            raise ValueError(f"'{name}' is not a kube-scheduler plugin")
        return name


class PluginSet(_Strict):
    enabled: list[Plugin] = []
    disabled: list[Plugin] = []


class Plugins(_Strict):
    model_config = ConfigDict(alias_generator=to_camel)

    pre_enqueue: PluginSet | None = None
    queue_sort: PluginSet | None = None
    pre_filter: PluginSet | None = None
    filter: PluginSet | None = None
    post_filter: PluginSet | None = None
    pre_score: PluginSet | None = None
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    pre_bind: PluginSet | None = None
    bind: PluginSet | None = None
    post_bind: PluginSet | None = None
    multi_point: PluginSet | None = None


class ResourceSpec(_Strict):
    name: str = Field(min_length=1)
    weight: int = Field(ge=1, le=100)


class ScoringStrategy(_Strict):
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
    resources: list[ResourceSpec] = Field(min_length=1)

    @field_validator("resources")
    @classmethod
    def _unique(cls, resources: list[ResourceSpec]) -> list[ResourceSpec]:
        names = [r.name for r in resources]
        if len(names) != len(set(names)):
            raise ValueError("a resource is listed twice")
        return resources


class NodeResourcesFitArgs(_Strict):
    scoring_strategy: ScoringStrategy = Field(alias="scoringStrategy")


class PluginConfig(_Strict):
    name: Literal["NodeResourcesFit"]
    args: NodeResourcesFitArgs


class Profile(_Strict):
    scheduler_name: str = Field(alias="schedulerName", min_length=1)
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = Field([], alias="pluginConfig")


class LeaderElection(_Strict):
    leader_elect: bool = Field(alias="leaderElect")
    resource_name: str = Field(alias="resourceName", min_length=1)
    resource_namespace: str = Field(alias="resourceNamespace", min_length=1)


class KubeSchedulerConfiguration(_Strict):
    api_version: Literal["kubescheduler.config.k8s.io/v1"] = Field(alias="apiVersion")
    kind: Literal["KubeSchedulerConfiguration"]
    leader_election: LeaderElection | None = Field(None, alias="leaderElection")
    profiles: list[Profile] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_profiles(self) -> KubeSchedulerConfiguration:
        names = [p.scheduler_name for p in self.profiles]
        if len(names) != len(set(names)):
            raise ValueError("profiles need unique schedulerNames")
        return self


def check(conf: dict) -> list[str]:
    """Problems kube-scheduler would refuse to start with, as 'path: message' (empty when none)."""
    try:
        KubeSchedulerConfiguration.model_validate(conf)
    except ValidationError as e:
        return [f"{'.'.join(map(str, err['loc'])) or '(root)'}: {err['msg']}" for err in e.errors()]
    return []

"""A strict model of the part of Kueue's controller `Configuration` (`config.kueue.x-k8s.io/v1beta2`) that policyc
writes: fair sharing and the job integrations.

Kueue decodes the file strictly (an unknown key stops the controller). Facts from Kueue v0.19.2
`apis/config/v1beta2/configuration_types.go` and `pkg/config/validation.go`: fair sharing is on when the
`fairSharing` block is present (v1beta2 has no `enable`), and then `preemptionStrategies` must be one of three
lists; integration names come from a fixed set, and the pod-based integrations (deployment, statefulset,
leaderworkerset) need the `pod` integration.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

API_VERSION = "config.kueue.x-k8s.io/v1beta2"

PREEMPTION_STRATEGIES = (
    ("LessThanOrEqualToFinalShare",),
    ("LessThanInitialShare",),
    ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
)
"""The lists Kueue accepts as fairSharing.preemptionStrategies."""

FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
NEED_POD = ("deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FairSharing(_Strict):
    preemption_strategies: list[str] = Field(alias="preemptionStrategies")

    @field_validator("preemption_strategies")
    @classmethod
    def _allowed(cls, strategies: list[str]) -> list[str]:
        if tuple(strategies) not in PREEMPTION_STRATEGIES:
            allowed = " or ".join(str(list(s)) for s in PREEMPTION_STRATEGIES)
            raise ValueError(f"must be {allowed}")
        return strategies


class Integrations(_Strict):
    frameworks: list[str] = Field(min_length=1)

    @field_validator("frameworks")
    @classmethod
    def _known(cls, frameworks: list[str]) -> list[str]:
        unknown = [f for f in frameworks if f not in FRAMEWORKS]
        if unknown:
            raise ValueError(f"unknown integrations {unknown}")
        if len(set(frameworks)) != len(frameworks):
            raise ValueError("an integration is listed twice")
        if "pod" not in frameworks and any(f in NEED_POD for f in frameworks):
            raise ValueError("deployment, statefulset and leaderworkerset need the pod integration")
        return frameworks


class Configuration(_Strict):
    api_version: Literal["config.kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["Configuration"]
    manage_jobs_without_queue_name: bool = Field(False, alias="manageJobsWithoutQueueName")
    fair_sharing: FairSharing | None = Field(None, alias="fairSharing")
    integrations: Integrations


def check(conf: dict) -> list[str]:
    """Problems Kueue's controller would refuse to start with, as 'path: message' (empty when none)."""
    try:
        Configuration.model_validate(conf)
    except ValidationError as e:
        return [f"{'.'.join(map(str, err['loc'])) or '(root)'}: {err['msg']}" for err in e.errors()]
    return []

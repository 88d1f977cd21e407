"""What the rest of policyc knows of the Volcano backend without importing it: its settings (`spec.scheduler` when
the policy selects it), the workload kinds it runs, and what it owns on a cluster."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from policyc.language.model.base import SchedulerSettings

TITLE = "Volcano"
WORKLOAD_KINDS = ("VolcanoJob", "Job", "Deployment", "PyTorchJob")
"""batch/v1 Jobs and Deployments join through their pods' schedulerName and queue annotation."""
PODS_AFTER_ADMISSION = {"VolcanoJob": "gang", "PyTorchJob": "gang"}
"""Kinds whose controller creates a job's pods only once the queue admits it (its PodGroup leaves Pending: Volcano's
job controller, and the training operator's DelayPodCreationDueToPodGroup), and what the queue counts of the job
then: its gang's pods (the PodGroup's minResources). A Deployment's or batch Job's pods exist before their queue
sees them."""
DEFAULT_KINDS = {"training": "VolcanoJob", "inference": "Deployment"}
GANG_KINDS = ("VolcanoJob", "PyTorchJob")
"""The kinds whose template carries a gang minimum (`minMember`): a Volcano Job's minAvailable, a PyTorchJob's
schedulingPolicy.minAvailable. A batch Job's and a Deployment's pods are placed one by one."""
NAMESPACES = ("volcano-system", "volcano-monitoring")
"""Where its components run: no tenant may own them."""
LABEL_DOMAINS = ("volcano.sh",)
"""Label domains it owns: never the policy's own."""
DEVICE_RESOURCES = ("volcano.sh/vgpu-number",)
"""Extended resources its device plugin (volcano-vgpu-device-plugin) advertises."""

ACTIONS: tuple[str, ...] = (
    "reclaim",
    "allocate",
    "backfill",
    "preempt",
    "gangpreempt",
    "gangreclaim",
    "enqueue",
    "shuffle",
)
"""The actions of Volcano's scheduler (v1.15)."""

ActionName = Annotated[str, WithJsonSchema({"enum": list(ACTIONS)})]
"""An action name; checked (with hints for removed and misspelt actions) by the backend's rules."""


class VolcanoSettings(SchedulerSettings):
    backend: Literal["volcano"] = Field(
        "volcano",
        description=(
            "The batch scheduler the policy compiles for: volcano (the default), kueue (Kueue admits, a "
            "kube-scheduler profile places) or kai (NVIDIA's KAI Scheduler). Each takes its own settings."
        ),
    )
    actions: list[ActionName] = Field(
        default_factory=lambda: ["enqueue", "allocate", "preempt", "reclaim", "backfill"],
        description="Volcano scheduler actions, in the order they run each cycle.",
    )
    queue_plugin: Literal["proportion", "capacity"] = Field(
        "proportion",
        description=(
            "proportion shares by queue weight; capacity shares by deserved and supports hierarchical queues."
        ),
    )
    plugins: list[dict[str, Any]] = Field(
        default_factory=list,
        description=(
            "Extra plugin settings, written as in volcano-scheduler.conf ({name, enable... flags, arguments}): "
            "merged into the generated plugin of that name, or added to the last tier. policyc checks names, "
            "flags, argument keys and types against its model of Volcano's scheduler."
        ),
    )


Settings = VolcanoSettings
"""The backend's settings model (the name the registry reads)."""

"""What the rest of policyc knows of the KAI Scheduler backend without importing it: its settings (`spec.scheduler`
when the policy selects it), the workload kinds it runs, and what it owns on a cluster."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from policyc.language.model.base import SchedulerSettings

TITLE = "KAI"
WORKLOAD_KINDS = ("Job", "Deployment", "PyTorchJob")
"""They join through their top owner's queue label and their pods' schedulerName; KAI's pod-grouper makes their
PodGroups."""
DEFAULT_KINDS = {"training": "Job", "inference": "Deployment"}
GANG_KINDS = ("Job", "PyTorchJob")
"""The kinds whose template carries a gang minimum (`minMember`): a batch Job's kai.scheduler/batch-min-member, a
PyTorchJob's schedulingPolicy.minAvailable. A Deployment's pods are placed one by one."""

PODS_AFTER_ADMISSION: dict[str, str] = {}
"""None: their controllers create the pods at once, and KAI's queues schedule pods that exist."""
NAMESPACES = ("kai-scheduler", "kai-resource-reservation")
"""Where its components run (the second: its GPU-sharing reservation pods): no tenant may own them."""
LABEL_DOMAINS = ("kai.scheduler", "run.ai")
"""Label domains it owns: never the policy's own."""
DEVICE_RESOURCES: tuple[str, ...] = ()


class KaiSettings(SchedulerSettings):
    """NVIDIA's KAI Scheduler queues and places: a Queue per tenant, under one per policy; GPUs packed or spread."""

    backend: Literal["kai"] = Field(
        description=(
            "kai: NVIDIA's KAI Scheduler schedules by hierarchical queues (quota, limit and over-quota weight "
            "for gpu, cpu and memory) and places GPUs by its scheduling shard's placement strategy."
        )
    )


Settings = KaiSettings
"""The backend's settings model (the name the registry reads)."""

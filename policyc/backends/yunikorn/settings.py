"""What the rest of policyc knows of the Apache YuniKorn backend without importing it: its settings (`spec.scheduler`
when the policy selects it), the workload kinds it runs, and what it owns on a cluster."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from policyc.language.model.base import SchedulerSettings

TITLE = "Apache YuniKorn"
WORKLOAD_KINDS = ("Job", "Deployment", "PyTorchJob")
"""Their pods join through `schedulerName: yunikorn` and the queue they name (`yunikorn.apache.org/queue`)."""
DEFAULT_KINDS = {"training": "Job", "inference": "Deployment"}
GANG_KINDS = ("Job", "PyTorchJob")
"""The kinds whose pods carry a task group (`yunikorn.apache.org/task-groups`, its `minMember` the gang): YuniKorn
reserves the gang's room with placeholder pods before any of them runs. A Deployment's pods are placed one by one."""

PODS_AFTER_ADMISSION: dict[str, str] = {}
"""None: their controllers create the pods at once; YuniKorn queues the pods that exist."""
NAMESPACES = ("yunikorn",)
"""Where its Helm chart installs the scheduler and admission controller, and its ConfigMaps live: no tenant may own
it."""
LABEL_DOMAINS = ("yunikorn.apache.org",)
"""Label domains it owns: never the policy's own."""
DEVICE_RESOURCES: tuple[str, ...] = ()


class YuniKornSettings(SchedulerSettings):
    """Apache YuniKorn queues and places: a queue per tenant in `queues.yaml`, nodes sorted to pack or spread."""

    backend: Literal["yunikorn"] = Field(
        description=(
            "yunikorn: Apache YuniKorn schedules by a hierarchy of queues (guaranteed and max resources, "
            "priority offsets, preemption policies) in its ConfigMap yunikorn-configs."
        )
    )
    gang_style: Literal["Soft", "Hard"] = Field(
        "Soft",
        description=(
            "What YuniKorn does when a gang's placeholders time out: Soft runs the job as an ordinary one, Hard "
            "fails it (gangSchedulingStyle)."
        ),
    )
    application_sort: Literal["fifo", "fair"] = Field(
        "fifo",
        description=(
            "How each tenant's queue orders its applications: fifo by submission, fair by usage "
            "(application.sort.policy). Gang scheduling needs fifo."
        ),
    )
    non_preemptible_classes: list[str] = Field(
        default_factory=list,
        description=(
            "Priority classes whose pods YuniKorn must not preempt: their workloads' pods carry "
            'yunikorn.apache.org/allow-preemption: "false".'
        ),
    )


Settings = YuniKornSettings
"""The backend's settings model (the name the registry reads)."""

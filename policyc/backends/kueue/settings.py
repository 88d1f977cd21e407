"""What the rest of policyc knows of the Kueue backend without importing it: its settings (`spec.scheduler` when the
policy selects it), the workload kinds it runs, and what it owns on a cluster."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from policyc.language.model.base import SchedulerSettings

TITLE = "Kueue"
WORKLOAD_KINDS = ("Job", "Deployment", "PyTorchJob")
DEFAULT_KINDS = {"training": "Job", "inference": "Deployment"}
GANG_KINDS = ("Job", "PyTorchJob")
"""The kinds whose template carries a gang minimum (`minMember`): a batch Job's partial admission, a PyTorchJob's
schedulingPolicy.minAvailable (which Kueue does not read: PC708 says so). A Deployment has none."""

PODS_AFTER_ADMISSION = {"Job": "all", "PyTorchJob": "all"}
"""Kinds Kueue holds suspended until their ClusterQueue admits them, so that their pods are created only then, and
what the queue counts of a job: all its pods (Kueue admits a workload whole). A Deployment's pods are created at
once, held by a scheduling gate."""
NAMESPACES = ("kueue-system",)
"""Where its components run: no tenant may own them."""
LABEL_DOMAINS = ("kueue.x-k8s.io",)
"""Label domains it owns: never the policy's own."""
DEVICE_RESOURCES: tuple[str, ...] = ()


class KueueSettings(SchedulerSettings):
    """Kueue admits; a kube-scheduler profile the backend writes places, packing or spreading GPUs."""

    backend: Literal["kueue"] = Field(
        description="kueue: Kueue admits workloads by quota per GPU tier and usage; kube-scheduler places them."
    )


Settings = KueueSettings
"""The backend's settings model (the name the registry reads)."""

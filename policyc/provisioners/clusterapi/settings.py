"""What the rest of policyc knows of the Cluster API provisioner without importing it: its settings
(`spec.provisioning.clusterapi`, `nodePools[].clusterapi`) and how its pools' nodes come up."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from policyc.language.model.base import Model
from policyc.language.model.types import Name, SubdomainName, Why

TITLE = "Cluster API"
NAMED_NODES = False
REGISTERS_TAINTED = True
"""kubeadm registers each node with its pool's taints (`joinConfiguration.nodeRegistration.taints`)."""
NAMESPACES: tuple[str, ...] = ()
LABEL_DOMAINS: tuple[str, ...] = ()

VERSION_PATTERN = r"^1\.(0|[1-9][0-9]*)$"


class ClusterApiSettings(Model):
    """Pools whose nodes are the Machines of a MachineDeployment bootstrapped by kubeadm: policyc writes the labels and
    taints to merge into it and its KubeadmConfigTemplate (clusterapi/pools.yaml)."""

    version: Annotated[
        str,
        Why(shape=("a Cluster API version is its minor version, 1.<minor>", 'write e.g. "1.12"')),
    ] = Field(
        "1.14",
        pattern=VERSION_PATTERN,
        description='The Cluster API minor version of the management cluster (e.g. "1.12"): what it syncs to Nodes.',
    )
    namespace: Name = Field(
        "default",
        description="The namespace of the MachineDeployments and KubeadmConfigTemplates (management cluster).",
    )
    additional_sync_machine_labels: list[str] = Field(
        default_factory=list,
        description=(
            "The regexes given to the Cluster API manager's --additional-sync-machine-labels (v1.10 and later): "
            "Machine labels whose keys match one are synced to Nodes too."
        ),
    )
    machine_taint_propagation: bool = Field(
        False,
        description=(
            "The manager runs with the alpha feature gate MachineTaintPropagation (v1.12 and later): the pools' taints "
            "also go into the MachineDeployments' spec.template.spec.taints, kept in sync on existing nodes."
        ),
    )


class ClusterApiPoolSettings(Model):
    """The MachineDeployment and KubeadmConfigTemplate of a Cluster API pool"""

    machine_deployment: SubdomainName | None = Field(
        None, description="The MachineDeployment's name (default: the pool's)."
    )
    kubeadm_config_template: SubdomainName | None = Field(
        None,
        description="The KubeadmConfigTemplate its Machines bootstrap from (default: the MachineDeployment's name).",
    )


Settings = ClusterApiSettings
PoolSettings = ClusterApiPoolSettings

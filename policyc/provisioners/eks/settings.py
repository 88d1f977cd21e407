"""What the rest of policyc knows of the EKS provisioner without importing it: its settings (`spec.provisioning.eks`)
and how its pools' nodes come up."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from policyc.language.model.base import Model
from policyc.provisioners.terraform import VARIABLE_PATTERN, VARIABLE_WHY

TITLE = "EKS"
NAMED_NODES = False
REGISTERS_TAINTED = True
"""EKS creates a node of a managed node group with the group's taints (`taint`)."""
NAMESPACES: tuple[str, ...] = ()
LABEL_DOMAINS: tuple[str, ...] = ()


class EksSettings(Model):
    """Pools that are EKS managed node groups made by Terraform: policyc writes their labels, taints and sizes as a
    Terraform variable (terraform/eks-node-pools.tf.json)."""

    variable: Annotated[str, VARIABLE_WHY] = Field(
        "policyc_eks_node_pools",
        pattern=VARIABLE_PATTERN,
        description="The name of the Terraform variable that holds the pools (pool name -> its fields).",
    )


Settings = EksSettings
PoolSettings = None
"""No settings of its own per pool."""

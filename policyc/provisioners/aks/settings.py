"""What the rest of policyc knows of the AKS provisioner without importing it: its settings (`spec.provisioning.aks`)
and how its pools' nodes come up."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from policyc.language.model.base import Model
from policyc.provisioners.terraform import VARIABLE_PATTERN, VARIABLE_WHY

TITLE = "AKS"
NAMED_NODES = False
REGISTERS_TAINTED = True
"""AKS creates a node of a pool with the pool's taints (`node_taints`)."""
NAMESPACES: tuple[str, ...] = ()
LABEL_DOMAINS: tuple[str, ...] = ()


class AksSettings(Model):
    """Pools that are AKS node pools made by Terraform: policyc writes their labels, taints and sizes as a Terraform
    variable (terraform/aks-node-pools.tf.json)."""

    variable: Annotated[str, VARIABLE_WHY] = Field(
        "policyc_aks_node_pools",
        pattern=VARIABLE_PATTERN,
        description="The name of the Terraform variable that holds the pools (pool name -> its fields).",
    )


Settings = AksSettings
PoolSettings = None
"""No settings of its own per pool."""

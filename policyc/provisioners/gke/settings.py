"""What the rest of policyc knows of the GKE provisioner without importing it: its settings (`spec.provisioning.gke`,
`nodePools[].gke`) and how its pools' nodes come up."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from policyc.language.model.base import Model
from policyc.language.model.types import Why
from policyc.provisioners.terraform import VARIABLE_PATTERN, VARIABLE_WHY

TITLE = "GKE"
NAMED_NODES = False
REGISTERS_TAINTED = True
"""GKE creates a node of a pool with the pool's taints (`node_config.taint`)."""
NAMESPACES: tuple[str, ...] = ()
LABEL_DOMAINS: tuple[str, ...] = ()


class GkeSettings(Model):
    """Pools that are GKE node pools made by Terraform: policyc writes their labels, taints and sizes as a Terraform
    variable (terraform/gke-node-pools.tf.json)."""

    variable: Annotated[str, VARIABLE_WHY] = Field(
        "policyc_gke_node_pools",
        pattern=VARIABLE_PATTERN,
        description="The name of the Terraform variable that holds the pools (pool name -> its fields).",
    )


class GkePoolSettings(Model):
    """The GKE node pool of a pool"""

    accelerator_type: Annotated[
        str | None,
        Why(
            shape=("a GKE accelerator type is lower-case letters, digits and '-'", "write e.g. nvidia-h100-80gb"),
            suggest=lambda value: re.sub(r"[^a-z0-9-]", "-", value.lower()) or None,
        ),
    ] = Field(
        None,
        pattern=r"^[a-z0-9-]+$",
        description="The GPU type of its node_config.guest_accelerator, as GKE names it (e.g. nvidia-h100-80gb).",
    )


Settings = GkeSettings
PoolSettings = GkePoolSettings

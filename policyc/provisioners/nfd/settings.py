"""What the rest of policyc knows of the nfd provisioner without importing it: its settings per pool
(`nodePools[].nfd`: the hardware NFD recognises the pool's nodes by) and how its pools' nodes come up."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from policyc.language.model.base import Model
from policyc.language.model.types import Why

TITLE = "Node Feature Discovery"
NAMED_NODES = False
"""Its pools are pools by size: NFD recognises their nodes by their hardware."""
REGISTERS_TAINTED = False
"""Its nodes register with policyc's registration taint: NFD taints a node only once its worker has reported it."""
NAMESPACES: tuple[str, ...] = ()
LABEL_DOMAINS: tuple[str, ...] = ()

MatchOp = Literal["In", "NotIn", "InRegexp", "Exists", "DoesNotExist", "Gt", "Ge", "Lt", "Le", "GtLt", "GeLe",
                  "IsTrue", "IsFalse"]  # fmt: skip
"""The operators of a NodeFeatureRule's match expression (the CRD's enum, NFD v0.19)."""


class NfdSettings(Model):
    """Pools matched by hardware: Node Feature Discovery's NodeFeatureRules give a node the labels and taints of the
    pool whose PCI devices it has (its master needs enableTaints). Nothing to set cluster-wide."""


class MatchExpression(Model):
    """One NFD match expression: an operator and its values."""

    op: MatchOp = Field(description="In, NotIn, InRegexp, Exists, DoesNotExist, Gt, Ge, Lt, Le, GtLt, GeLe, IsTrue, "
                        "IsFalse.")  # fmt: skip
    value: list[str] = Field(
        default_factory=list,
        description="Its values: one or more for In, NotIn and InRegexp; none for Exists, DoesNotExist, IsTrue and "
        "IsFalse; one integer for Gt, Ge, Lt and Le; two, the lower first, for GtLt and GeLe.",
    )


class FeatureTerm(Model):
    """A further term of the pool's match (NFD's matchFeatures[]): a feature and expressions on its elements."""

    feature: str = Field(description="The feature, <domain>.<feature>, e.g. system.dmiid or kernel.loadedmodule.")
    match_expressions: Annotated[
        dict[str, MatchExpression],
        Why(low=("a term matches by at least one expression", "add one, e.g. product_name: {op: In, value: [...]}")),
    ] = Field(
        min_length=1, description="Element name (an attribute, such as product_name) -> the expression it must meet."
    )


class NfdPoolSettings(Model):
    """The hardware Node Feature Discovery recognises the pool's nodes by: a PCI device (its vendor, device IDs and
    class) and any further terms; every node that has it gets the pool's labels and taints"""

    vendor: str | None = Field(
        None,
        description="PCI vendor ID of the pool's accelerators, 4 lower-case hex digits as NFD reports it. Default: "
        "the GPU vendor's (10de for nvidia, 1002 for amd, 1da3 for intel-gaudi); state it for other hardware.",
    )
    devices: list[str] = Field(
        default_factory=list,
        description="PCI device IDs of the pool's accelerators (4 lower-case hex digits each, from lspci -nn on a "
        "node). Empty: any device of the vendor, so no other pool of the vendor can be matched by hardware.",
    )
    classes: list[str] | None = Field(
        None,
        description="PCI class codes the device must have (4 hex digits, class and subclass). Default: 0300 and 0302 "
        "(display and 3D controllers) for vendor 10de (NVIDIA), so that no other device of the vendor matches; none "
        "for others.",
    )
    features: list[FeatureTerm] = Field(
        default_factory=list,
        description="Further terms the node must also match (ANDed), to tell apart pools of the same device, e.g. "
        "{feature: system.dmiid, matchExpressions: {product_name: {op: In, value: [...]}}}.",
    )


Settings = NfdSettings
"""Its settings model, the block `spec.provisioning.nfd` (the name the registry reads)."""
PoolSettings = NfdPoolSettings
"""Its settings of one pool, the block `nodePools[].nfd`."""

"""What the rest of policyc knows of the Karpenter provisioner without importing it: its settings
(`spec.provisioning.karpenter`, `nodePools[].karpenter`) and how its pools' nodes come up."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from policyc.language.model.base import Model
from policyc.language.model.types import LabelKey, SubdomainName, Why

TITLE = "Karpenter"
NAMED_NODES = False
"""Its pools are pools by size: Karpenter names the nodes it makes."""
REGISTERS_TAINTED = True
"""A node Karpenter makes registers with its NodePool's taints: Karpenter puts them in the node's kubelet
configuration and on the Node as it registers (with its own karpenter.sh/unregistered:NoExecute until then)."""
NAMESPACES: tuple[str, ...] = ("karpenter",)
LABEL_DOMAINS: tuple[str, ...] = ("karpenter.sh", "karpenter.k8s.aws")

Duration = Annotated[
    str,
    Why(shape=("a duration is a number of seconds, minutes or hours, e.g. 30s, 10m, 1h30m", "write e.g. 10m")),
]


class NodeClassRef(Model):
    """The node class a NodePool's nodes are made from (its nodeClassRef): on EKS, an EC2NodeClass the cluster's
    owners write (its AMI, subnets, security groups, IAM role); policyc names it and never writes it."""

    group: SubdomainName = Field("karpenter.k8s.aws", description="API group of the node class.")
    kind: Annotated[str, Why(shape=("a kind is a word in CamelCase", "write e.g. EC2NodeClass"))] = Field(
        "EC2NodeClass", pattern=r"^[A-Z][A-Za-z0-9]*$", description="Kind of the node class."
    )
    name: SubdomainName = Field(description="Name of the node class object.")


class Requirement(Model):
    """A requirement of the NodePool as Karpenter writes it (its spec.template.spec.requirements[])."""

    key: LabelKey = Field(description="A node label key, e.g. karpenter.k8s.aws/instance-generation.")
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"] = Field(
        description="In/NotIn need values; Exists/DoesNotExist none; Gt/Lt/Gte/Lte one non-negative integer."
    )
    values: list[str] = Field(default_factory=list, description="Label values (63 characters at most each).")
    min_values: Annotated[
        int | None,
        Why(
            low=("minValues is 1 at the least", "write 1 or more"), high=("minValues is at most 50", "write 50 or less")
        ),
    ] = Field(None, ge=1, le=50, description="The fewest distinct values Karpenter must keep to choose from.")


class KarpenterSettings(Model):
    """Pools by size made by Karpenter (karpenter.sh/v1 NodePools, karpenter/nodepools.yaml, synced by Argo CD)."""

    version: Annotated[
        str,
        Why(shape=("Karpenter's version is its major.minor, 1.0 or later", 'write e.g. "1.14"')),
    ] = Field(
        "1.14",
        pattern=r"^1\.(0|[1-9][0-9]*)$",
        description=(
            "The Karpenter version the cluster runs (major.minor): which label domains it refuses depends on it "
            "(before 1.9, kubernetes.io and k8s.io too)."
        ),
    )
    node_class: NodeClassRef | None = Field(
        None,
        description="The node class of every pool that names none (default: EC2NodeClass 'default', group "
        "karpenter.k8s.aws).",
    )
    consolidate_after: Duration = Field(
        "10m",
        pattern=r"^([0-9]+(s|m|h))+$",
        description="How long a node stays empty (or, on inference pools, underused) before Karpenter removes it.",
    )


class KarpenterPoolSettings(Model):
    """The pool's NodePool: which instances, which capacity, where, how it ranks."""

    instance_types: Annotated[
        list[str] | None, Why(low=("a pool needs at least one instance type", "list one, e.g. [p5.48xlarge]"))
    ] = Field(
        None,
        min_length=1,
        description="EC2 instance types (node.kubernetes.io/instance-type); default: any with the pool's GPUs "
        "(gpuName and the pool's GPU count).",
    )
    gpu_name: str | None = Field(
        None,
        description="The GPU's name as Karpenter labels instances (karpenter.k8s.aws/instance-gpu-name, e.g. h100, "
        "a100, l4, l40s, a10g, t4), for a pool that lists no instance types.",
    )
    capacity_types: Annotated[
        list[Literal["on-demand", "spot", "reserved"]],
        Why(low=("a pool needs a capacity type", "write [on-demand]")),
    ] = Field(["on-demand"], min_length=1, description="karpenter.sh/capacity-type: on-demand, spot, reserved.")
    zones: Annotated[list[str] | None, Why(low=("a pool needs at least one zone", "list one, or remove zones"))] = (
        Field(None, min_length=1, description="topology.kubernetes.io/zone values; default: every zone.")
    )
    weight: Annotated[
        int | None,
        Why(
            low=("a NodePool's weight is 1 at the least", "write 1 or more"),
            high=("a NodePool's weight is at most 100", "write 100 or less"),
        ),
    ] = Field(None, ge=1, le=100, description="Karpenter tries NodePools of higher weight first (1-100).")
    node_class: NodeClassRef | None = Field(
        None, description="Its node class (default: spec.provisioning.karpenter's)."
    )
    requirements: list[Requirement] = Field(
        default_factory=list, description="Further requirements, as Karpenter writes them (e.g. instance-generation)."
    )


Settings = KarpenterSettings
"""Its settings model, the block `spec.provisioning.karpenter`."""
PoolSettings = KarpenterPoolSettings
"""Its settings of one pool, the block `nodePools[].karpenter`."""

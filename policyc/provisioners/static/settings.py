"""What the rest of policyc knows of the static provisioner without importing it: its settings
(`spec.provisioning.static`) and how its pools' nodes come up."""

from __future__ import annotations

from pydantic import Field

from policyc.language.model.base import Model

TITLE = "static"
NAMED_NODES = True
"""Its pools list their nodes by name (`nodes`)."""
REGISTERS_TAINTED = False
"""Its nodes register with policyc's registration taint: nothing taints a node as it joins."""
NAMESPACES: tuple[str, ...] = ()
LABEL_DOMAINS: tuple[str, ...] = ()


class StaticSettings(Model):
    """Pools of nodes listed by name (nodes): nodes/apply.sh labels and taints them, and Node Feature Discovery's
    NodeFeatureRules too, for nodes that join later under those names."""

    node_feature_rules: bool = Field(
        True,
        description=(
            "Write a NodeFeatureRule (nfd.k8s-sigs.io/v1alpha1) per static pool, giving nodes of its names its labels "
            "and taints (Argo CD syncs them; NFD's master needs enableTaints). false: a cluster without Node Feature "
            "Discovery, where nodes/apply.sh alone labels and taints the nodes."
        ),
    )


Settings = StaticSettings
"""Its settings model, the block `spec.provisioning.static` (the name the registry reads)."""
PoolSettings = None
"""No settings of its own per pool."""

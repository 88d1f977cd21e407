"""The sized provisioner's settings: a cluster-wide block and a block per pool."""

from __future__ import annotations

from pydantic import Field

from policyc.language.model.base import Model

TITLE = "Sized"
NAMED_NODES = False
REGISTERS_TAINTED = True
NAMESPACES = ("sized-system",)
LABEL_DOMAINS = ("sized.example",)


class SizedSettings(Model):
    """Pools by size, made by the tests' provisioner."""

    class_name: str = Field("default", description="The node class its pools name.")


class SizedPoolSettings(Model):
    """The tests' provisioner's settings of one pool."""

    instance_type: str | None = Field(None, description="The machine type of the pool's nodes.")


Settings = SizedSettings
PoolSettings = SizedPoolSettings

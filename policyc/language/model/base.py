"""The base of every model of the policy language, the scheduler backends' settings included."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class Model(BaseModel):
    """Strict: unknown fields are errors, values are never coerced between types, fields are camelCase.

    Nothing is built when a model class is defined (`defer_build`): the validator of a policy is built once, on first
    use, whole (`policy_model`), rather than one for every model of the language as each class is defined.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        alias_generator=to_camel,
        validate_by_name=False,
        validate_by_alias=True,
        defer_build=True,
    )


class SchedulerSettings(Model):
    """`spec.scheduler`: what every backend reads. A backend's `settings.Settings` extends it with its own fields
    and narrows `backend` to its name, the tag of the union `spec.scheduler` is."""

    backend: str
    placement: Literal["binpack", "spread"] = Field(
        "binpack",
        description="binpack fills GPU nodes before using empty ones; spread balances GPU use across nodes.",
    )

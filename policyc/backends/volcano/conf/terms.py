"""The terms the facts of `volcano-scheduler.conf` are written in (`policyc.backends.volcano.conf.facts`): the type a
value must have, what Volcano does with a wrong one, and the shapes of nested arguments.

How Volcano reads an argument decides what a wrong type does, so every spec names an `Effect`:

- ``GetInt`` / ``GetFloat64`` / ``GetBool`` / ``GetString`` log "Could not parse argument" and keep the default;
- ``framework.Get[T]`` (mapstructure) calls ``klog.Fatalf`` on a mismatch: the scheduler exits and crash-loops;
- ``tdm``, ``rescheduling`` and ``deviceshare.SchedulePolicy`` use unchecked type assertions: a panic;
- a YAML type error in the fixed structure (a flag that is not a boolean, tiers that are not a list) rejects the
  whole file, and the scheduler keeps its previous configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    """The type a scalar argument must have."""

    INT = "int"  # a YAML integer (not a boolean, not a quoted number, not 10.0)
    FLOAT = "float"  # a YAML integer or float
    BOOL = "bool"  # a YAML boolean
    STRING = "string"
    DURATION = "duration"  # a string in Go's time.ParseDuration syntax
    CSV = "csv"  # a comma-separated string of names
    CLOCK_RANGE = "clock-range"  # "HH:MM-HH:MM" (tdm revocable zones)
    QUANTITY = "quantity"  # a Kubernetes quantity: "250m", "200Mi" (or a number)


class Effect(StrEnum):
    """What Volcano does with a value of the wrong type (the text ends the finding's message)."""

    IGNORED = "Volcano ignores it"
    DROPPED = "Volcano silently ignores it"
    ZERO = "Volcano silently reads it as 0"
    FATAL = "the scheduler exits (klog.Fatalf in framework.Get) on its first cycle and crash-loops"
    PANIC = "the scheduler panics on an unchecked type assertion and crash-loops"
    REJECTED = "Volcano rejects the whole file and keeps its previous configuration"


@dataclass(frozen=True, slots=True)
class Scalar:
    kind: Kind
    effect: Effect
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    value_effect: str = "Volcano cannot use it"
    """What Volcano does with a well-typed value outside `choices`, the range or the syntax."""


@dataclass(frozen=True, slots=True)
class Struct:
    """A nested mapping with fixed keys."""

    fields: Mapping[str, Spec]
    effect: Effect
    """What Volcano does when the value is not a mapping."""


@dataclass(frozen=True, slots=True)
class MapOf:
    """A nested mapping with free keys (resource names) and values of one spec."""

    value: Spec
    effect: Effect
    known_keys: tuple[str, ...] = ()
    """If set, the only keys Volcano reads; the values of other keys are still checked (they may crash it)."""
    keys_listed_in: str | None = None
    """The comma-separated key beside this mapping that lists the resources whose keys Volcano reads."""
    key_dimensions: tuple[str, ...] = ()
    """If set, a key is '<listed resource>.<dimension>' with one of these dimensions."""
    prefix_patterns: bool = False
    """A key may end in one '*', standing for every resource that starts with the rest; a lone '*' is not read."""


@dataclass(frozen=True, slots=True)
class ListOf:
    item: Spec
    effect: Effect


Spec = Scalar | Struct | MapOf | ListOf


@dataclass(frozen=True, slots=True)
class Family:
    """Argument keys with a variable suffix, such as ``binpack.resources.<resource>``."""

    prefix: str
    value: Scalar
    listed_by: str | None = None
    """The comma-separated argument that lists the suffixes Volcano reads (None: every suffix is read)."""
    placeholder: str = "<name>"


@dataclass(frozen=True, slots=True)
class Exclusive:
    """Two boolean arguments that must not both be true, and what Volcano does when they are."""

    first: str
    second: str
    consequence: str


@dataclass(frozen=True, slots=True)
class PluginSpec:
    arguments: Mapping[str, Spec] = field(default_factory=dict)
    families: tuple[Family, ...] = ()
    retired: Mapping[str, str] = field(default_factory=dict)
    """Keys Volcano no longer reads (or never read here), with the hint that replaces them."""
    retired_prefixes: Mapping[str, str] = field(default_factory=dict)
    exclusive: tuple[Exclusive, ...] = ()


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two plugins that must not be enabled together."""

    first: str
    second: str
    same_tier: bool
    """Only a conflict inside one tier."""
    flag: str | None
    """Only a conflict when `second` sets this option to true."""
    consequence: str
    hint: str


# Shorthands for the facts: an argument read by GetInt, GetFloat64, GetBool, GetString (a wrong type is ignored, the
# default kept) unless another effect is named; `constraints` are the other fields of `Scalar` (choices, minimum,
# maximum, value_effect).


def integer(default: int | None = None, effect: Effect = Effect.IGNORED, **constraints: Any) -> Scalar:
    return Scalar(Kind.INT, effect, default, **constraints)


def number(default: float | None = None, effect: Effect = Effect.IGNORED, **constraints: Any) -> Scalar:
    return Scalar(Kind.FLOAT, effect, default, **constraints)


def boolean(default: bool | None = None, effect: Effect = Effect.IGNORED) -> Scalar:
    return Scalar(Kind.BOOL, effect, default)


def string(default: str | None = None, effect: Effect = Effect.IGNORED, **constraints: Any) -> Scalar:
    return Scalar(Kind.STRING, effect, default, **constraints)


def names(effect: Effect = Effect.DROPPED) -> Scalar:
    """A comma-separated list of names, empty by default."""
    return Scalar(Kind.CSV, effect, "")


def duration(
    default: str | None = None, effect: Effect = Effect.IGNORED, value_effect: str = "Volcano cannot parse it"
) -> Scalar:
    return Scalar(Kind.DURATION, effect, default, value_effect=value_effect)

"""The policy an import writes, as it is built: its blocks (ruamel.yaml maps, so that a guessed value carries its
comment), and the cluster's objects it expressed or could not."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from policyc.cluster.reading import ObjectRef

_TYPED = re.compile(r"[-+]?[0-9][0-9_.e+-]*|true|false|yes|no|on|off|null|~")


def block(values: dict, guesses: dict[str, str] | None = None) -> CommentedMap:
    """A map of the policy (nested dicts and lists become maps and sequences), each guessed key with its comment."""
    out = CommentedMap()
    for key, value in values.items():
        out[key] = _commented(value)
    for key, why in (guesses or {}).items():
        guess(out, key, why)
    return out


def quoted(value: str) -> str:
    """A string YAML would read as another type ("512", "1.36", "true") in double quotes, as policies write it."""
    return DoubleQuotedScalarString(value) if _TYPED.fullmatch(value.lower()) else value


def _commented(value: object) -> object:
    if isinstance(value, str):
        return quoted(value)
    if isinstance(value, CommentedMap | CommentedSeq):
        return value
    if isinstance(value, dict):
        return block(value)
    if isinstance(value, list | tuple):
        out = CommentedSeq(_commented(v) for v in value)
        if not any(isinstance(v, dict | list | tuple) for v in value):
            out.fa.set_flow_style()  # a list of names on one line, as people write them
        return out
    return value


def flow(values: list | dict) -> CommentedSeq | CommentedMap:
    """A short list or map written on one line, as people write node ranges and resource maps."""
    out = _commented(values)
    out.fa.set_flow_style()  # type: ignore[union-attr]
    return out  # type: ignore[return-value]


def guess(mapping: CommentedMap, key: str, why: str) -> None:
    """Mark `mapping[key]` as guessed: a comment at the end of its line saying from what."""
    if key in mapping:
        mapping.yaml_add_eol_comment(f"guessed: {why}", key)


@dataclass
class Draft:
    """What the import has gathered so far."""

    spec: CommentedMap = field(default_factory=CommentedMap)
    name: str = "imported"
    name_guess: str | None = "no object names its policy"
    expressed: set[ObjectRef] = field(default_factory=set)
    """Objects the policy carries over (it builds them again)."""
    owned: set[ObjectRef] = field(default_factory=set)
    """Objects carrying policyc's ownership that no reading took: the policy's own where its build has them again."""
    unexpressed: dict[ObjectRef, str] = field(default_factory=dict)
    """Objects the policy cannot express -> why."""
    spec_guesses: dict[str, str] = field(default_factory=dict)
    """Key of `spec` -> from what its value was guessed."""
    notes: list[str] = field(default_factory=list)
    """What the policy carries over only in part, one line each (listed at the top with the objects)."""

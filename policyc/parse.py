"""Parse loaded data into the policy model, turning every validation error into a located diagnostic.

When some items of the named lists (pools, tiers, tenants, ...) are invalid, parsing drops those items
and validates the rest again, so that later stages can still report their own problems in the same
run. The names of dropped items are kept: a reference to one of them is not reported a second time.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, Tag, TypeAdapter, ValidationError

from policyc.backends import settings as backend_settings
from policyc.diagnostics import Diagnostic, Path, describe_value, diag, did_you_mean, where
from policyc.load import SourceMap
from policyc.model import ClusterPolicy

NAMED_LISTS = ("gpuTiers", "nodePools", "priorityClasses", "tenants", "workloads")

UNREADABLE_NAME = None
"""Stands in `Parsed.dropped` for a dropped item whose name could not be read: any name may be it."""


@dataclass
class Parsed:
    policy: ClusterPolicy | None
    diagnostics: list[Diagnostic]
    dropped: dict[str, set[str | None]] = field(default_factory=dict)
    """Names of list items dropped for errors, per list ("tenants" -> {"team-a"})."""
    kept: dict[str, list[int]] = field(default_factory=dict)
    """For each named list, the index in the file of each item kept in `policy`."""

    @property
    def complete(self) -> bool:
        """True when nothing was dropped: cluster-wide checks may trust the totals."""
        return self.policy is not None and not any(self.dropped.values())

    def source_path(self, list_name: str, index: int) -> Path:
        """Document path of item `index` of `policy.spec.<list_name>`."""
        kept = self.kept.get(list_name)
        return ("spec", list_name, kept[index] if kept is not None else index)

    def was_dropped(self, list_name: str, name: str) -> bool:
        dropped = self.dropped.get(list_name, ())
        return name in dropped or UNREADABLE_NAME in dropped


def parse(data: Any, source_map: SourceMap | None = None) -> Parsed:
    """Validate `data` against the policy model, dropping invalid named-list items to go on."""
    try:
        return Parsed(ClusterPolicy.model_validate(data), [])
    except ValidationError as e:
        errors = e.errors(include_url=False)
    source_map = source_map or SourceMap()
    diagnostics = [_diagnostic(err, source_map) for err in errors if not _already_reported(err, source_map)]
    drop: dict[str, set[int]] = {}
    for err in errors:
        loc = err["loc"]
        if len(loc) >= 3 and loc[0] == "spec" and loc[1] in NAMED_LISTS and isinstance(loc[2], int):
            drop.setdefault(loc[1], set()).add(loc[2])
        else:
            return Parsed(None, diagnostics)
    spec = dict(data["spec"])
    dropped: dict[str, set[str | None]] = {}
    kept: dict[str, list[int]] = {}
    for list_name, indices in drop.items():
        items = spec[list_name]
        kept[list_name] = [i for i in range(len(items)) if i not in indices]
        spec[list_name] = [items[i] for i in kept[list_name]]
        dropped[list_name] = {_name(items[i]) for i in indices}
    try:
        policy = ClusterPolicy.model_validate({**data, "spec": spec})
    except ValidationError:  # an error only visible once items are gone
        return Parsed(None, diagnostics)
    return Parsed(policy, diagnostics, dropped, kept)


def _name(item: Any) -> str | None:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else UNREADABLE_NAME


def _already_reported(err: dict, source_map: SourceMap) -> bool:
    """An error about a value the loader rejected (and reported) already."""
    return source_map.is_rejected(err["loc"])


_TYPE_NAMES = {
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "true or false",
    "float_type": "a number",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "int_from_float": "an integer",
}
_RANGE = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">", "less_than": "<"}


def _diagnostic(err: dict, source_map: SourceMap) -> Diagnostic:
    kind, tagged, value, ctx = err["type"], tuple(err["loc"]), err.get("input"), err.get("ctx") or {}
    at_key = False
    if tagged and tagged[-1] == "[key]":
        tagged, at_key = tagged[:-1], True
    loc = _untagged(tagged)
    place = where(loc)
    if kind == "policyc":
        return diag(ctx["rule"], f"{place}: {ctx['message']}", loc, hint=ctx.get("hint"), at_key=at_key)
    if kind == "extra_forbidden":
        return _unknown_field(tagged)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return _unknown_tag(loc, value, source_map)
    if kind == "missing":
        return diag(
            "missing-field", f"{where(loc[:-1])} is missing the required field '{loc[-1]}'", loc[:-1], at_key=True
        )
    text = source_map.texts.get(loc)
    if kind in _TYPE_NAMES:
        return diag(
            "wrong-type",
            f"{place} must be {_TYPE_NAMES[kind]}, not {describe_value(value, text)}",
            loc,
            hint=_type_hint(kind, value, text, tagged),
        )
    if kind == "literal_error":
        expected = [x.strip().strip("'") for x in ctx.get("expected", "").replace(" or ", ", ").split(",")]
        if len(expected) == 1:
            return diag("invalid-value", f"{place} must be '{expected[0]}', not {describe_value(value, text)}", loc)
        if not isinstance(value, str):
            return diag(
                "wrong-type", f"{place} must be one of {ctx.get('expected')}, not {describe_value(value, text)}", loc
            )
        return diag(
            "invalid-value",
            f"{place} is '{value}', which is not one of {ctx.get('expected')}",
            loc,
            hint=did_you_mean(value, expected),
        )
    if kind in _RANGE:
        bound = next(iter(ctx.values()))
        return diag("invalid-value", f"{place} is {text or value}, but it must be {_RANGE[kind]} {bound}", loc)
    if kind == "too_short":
        return diag("invalid-value", f"{place} must have at least {ctx.get('min_length')} item(s)", loc)
    if kind == "too_long":
        return diag("invalid-value", f"{place} must have at most {ctx.get('max_length')} item(s)", loc)
    return diag("invalid-value", f"{place}: {err['msg']}", loc)


def _unknown_field(tagged: Path) -> Diagnostic:
    name, loc = str(tagged[-1]), _untagged(tagged)
    allowed = _fields_at(tagged[:-1])
    hint = did_you_mean(name, allowed) if allowed else None
    if hint is None or not hint.startswith("did you mean"):
        other = _other_member_with(tagged[:-1], name)
        if other is not None:
            tag, title = other
            own = [f for f in allowed if f != _DISCRIMINATOR]
            settings = (
                f"{own[0]} is the one scheduler setting" if len(own) == 1 else f"its settings are {', '.join(own)}"
            )
            return diag(
                "setting-not-supported-by-backend",
                f"{where(loc)}: a {title} setting; the {tag} backend has no equivalent",
                loc,
                hint=f"remove {name} ({settings} {tag} uses)" if len(own) == 1 else f"remove {name} ({settings})",
                at_key=True,
            )
        homes = [child for child in allowed if name in _fields_at((*tagged[:-1], child))]
        if homes:
            hint = f"'{name}' belongs under '{homes[0]}'"
    return diag("unknown-field", f"unknown field '{name}' in {where(loc[:-1])}", loc, hint=hint, at_key=True)


_DISCRIMINATOR = "backend"
"""The field whose value picks the member of a tagged union (`spec.scheduler`)."""


def _unknown_tag(loc: Path, value: Any, source_map: SourceMap) -> Diagnostic:
    """A tagged union's `backend` names no member (or is not a string)."""
    tags = list(_tags(_unwrap(_model_at(loc))))
    expected = ", ".join(f"'{t}'" for t in tags[:-1]) + f" or '{tags[-1]}'" if len(tags) > 1 else f"'{tags[0]}'"
    at = (*loc, _DISCRIMINATOR)
    tag = value.get(_DISCRIMINATOR) if isinstance(value, dict) else None
    if not isinstance(tag, str):
        return diag(
            "wrong-type",
            f"{where(at)} must be one of {expected}, not {describe_value(tag, source_map.texts.get(at))}",
            at,
        )
    return diag(
        "invalid-value", f"{where(at)} is '{tag}', which is not one of {expected}", at, hint=did_you_mean(tag, tags)
    )


def _tags(tp: Any) -> dict[str, Any]:
    """Tag -> member of a tagged union type (empty for any other type)."""
    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return {}
    out = {}
    for member in typing.get_args(tp):
        tag = next((m for m in getattr(member, "__metadata__", ()) if isinstance(m, Tag)), None)
        if tag is not None:
            out[tag.tag] = typing.get_args(member)[0]
    return out


def _untagged(tagged: Path) -> Path:
    """A pydantic location without the tags of tagged unions it passes (the file has no such level)."""
    out: list = []
    for part in tagged:
        if isinstance(part, str) and part in _tags(_unwrap(_model_at(tuple(out)))):
            continue
        out.append(part)
    return tuple(out)


def _other_member_with(tagged: Path, name: str) -> tuple[str, str] | None:
    """(tag, title) when `tagged` is in a member of the backends' tagged union and another backend's member defines
    field `name`: the title is that backend's (its `settings.TITLE`)."""
    if not tagged or not isinstance(tagged[-1], str):
        return None
    members = _tags(_unwrap(_model_at(tagged[:-1])))
    if tagged[-1] not in members:
        return None
    for tag, model in members.items():
        if tag != tagged[-1] and name in {f.alias or n for n, f in model.model_fields.items()}:
            return tagged[-1], backend_settings(tag).TITLE
    return None


def _type_hint(kind: str, value: Any, text: str | None, loc: Path) -> str | None:
    if kind == "string_type" and isinstance(value, int | float | bool):
        return f'quote it: "{text if text is not None else value}"'
    if kind in ("int_type", "int_from_float"):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return f"remove the quotes: {value.strip()}"
        if isinstance(value, float):
            if not value.is_integer():
                return "use a whole number"
            refused = _refusal(loc, int(value))
            return (
                f"write {int(value)}" if refused is None else f"write a whole number, but not {int(value)}: {refused}"
            )
    if kind == "bool_type" and isinstance(value, str):
        return "write true or false (YAML 1.2 reads yes/no/on/off as strings)"
    if kind == "list_type" and isinstance(value, str | int | float):
        return f"write a list: [{value}]"
    if kind in ("dict_type", "model_type", "model_attributes_type") and isinstance(value, list):
        return "write a mapping of keys to values, not a list"
    return None


def _refusal(loc: Path, value: Any) -> str | None:
    """Why the field at `loc` would refuse `value` too (its range or its own rule), or None: a hint never suggests
    what the next run refuses."""
    parent = _unwrap(_model_at(loc[:-1]))
    if not (isinstance(parent, type) and issubclass(parent, BaseModel)):
        return None
    field = {f.alias or n: f for n, f in parent.model_fields.items()}.get(str(loc[-1]))
    if field is None:
        return None
    try:
        TypeAdapter(
            Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
        ).validate_python(value)
    except ValidationError as e:
        error = e.errors()[0]
        if error["type"] == "policyc":
            return error["ctx"]["message"]
        bound = next(iter((error.get("ctx") or {}).values()), None)
        if error["type"] in _RANGE and bound is not None:
            return f"it must be {_RANGE[error['type']]} {bound}"
        return error["msg"]
    return None


def _model_at(loc: Path) -> Any:
    """The type the policy language expects at a location (None where it defines nothing)."""
    model: Any = ClusterPolicy
    for part in loc:
        model = _unwrap(model)
        members = _tags(model)
        if members:
            model = members.get(part) if isinstance(part, str) else None
        elif isinstance(part, int):
            args = typing.get_args(model)
            model = args[0] if args else None
        elif isinstance(model, type) and issubclass(model, BaseModel):
            fields = {f.alias or n: f for n, f in model.model_fields.items()}
            model = fields[part].annotation if part in fields else None
        else:
            args = typing.get_args(model)  # a dict: values have the second type argument
            model = args[1] if len(args) == 2 else None
    return model


def _fields_at(loc: Path) -> list[str]:
    """Field names (aliases) allowed at a location, for "did you mean" hints on unknown fields."""
    model = _unwrap(_model_at(loc))
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [f.alias or n for n, f in model.model_fields.items()]
    return []


def _unwrap(tp: Any) -> Any:
    """Strip Optional[...] and Annotated[...] from a type."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp

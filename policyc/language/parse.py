"""Parse loaded data into the policy model, turning every validation error into a located diagnostic.

When some items of the named lists (pools, tiers, tenants, ...) are invalid, parsing drops those items
and validates the rest again, so that later stages can still report their own problems in the same
run. The names of dropped items are kept: a reference to one of them is not reported a second time.
"""

from __future__ import annotations

import collections
import re
import types
import typing
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from pydantic import BaseModel, Tag, TypeAdapter, ValidationError

from policyc.diagnostics import QUOTED, Diagnostic, Path, closest, describe_value, diag, did_you_mean, where
from policyc.language.load import SourceMap
from policyc.language.model import ClusterPolicy, policy_model
from policyc.language.model.types import Why
from policyc.registry import settings as backend_settings

NAMED_LISTS = ("gpuTiers", "nodePools", "priorityClasses", "tenants", "workloads")

UNREADABLE_NAME = None
"""Stands in `Parsed.dropped` for a dropped item whose name could not be read: any name may be it."""


@dataclass(eq=False)
class Parsed:
    policy: ClusterPolicy | None
    diagnostics: list[Diagnostic]
    dropped: dict[str, set[str | None]] = field(default_factory=dict)
    """Names of list items dropped for errors, per list ("tenants" -> {"team-a"}), and of items a later stage leaves
    out because of them (`leave_out`): a reference to one, or an inference over its list, is not a new error."""
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

    def leave_out(self, list_name: str, name: str) -> None:
        """Record an item a later stage leaves out because an item it depends on was dropped (a pool whose tier was)."""
        self.dropped.setdefault(list_name, set()).add(name)


def parse(data: Any, source_map: SourceMap | None = None) -> Parsed:
    """Validate `data` against the policy model, dropping invalid named-list items to go on."""
    try:
        return Parsed(policy_model().model_validate(data), [])
    except ValidationError as e:
        errors = e.errors(include_url=False)
    source_map = source_map or SourceMap()
    diagnostics = [_diagnostic(err, source_map, data) for err in _causes(errors, source_map)]
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
        policy = policy_model().model_validate({**data, "spec": spec})
    except ValidationError:  # an error only visible once items are gone
        return Parsed(None, diagnostics)
    return Parsed(policy, diagnostics, dropped, kept)


def _name(item: Any) -> str | None:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else UNREADABLE_NAME


def _causes(errors: list[dict], source_map: SourceMap) -> list[dict]:
    """The errors that are causes, in pydantic's order; left out are those that follow from another:
    - about a value the loader rejected (and reported) already;
    - a second about the same value or key (a key refused, then its value);
    - a required field reported missing beside an unknown field that stands for it: misspelt ('usgae'), or glued to
      its value without a space ('count:8', one key in YAML)."""
    meant = {
        (*loc[:-1], field)
        for loc in (tuple(err["loc"]) for err in errors if err["type"] == "extra_forbidden")
        if (field := _meant_field(loc)) is not None
    }
    out, seen = [], set()
    for err in errors:
        loc = tuple(err["loc"])
        place = _untagged(loc[:-1] if loc and loc[-1] == "[key]" else loc)
        if source_map.is_rejected(place) or place in seen or (err["type"] == "missing" and loc in meant):
            continue
        seen.add(place)
        out.append(err)
    return out


def _meant_field(tagged: Path) -> str | None:
    """The field an unknown field's name stands for: the key of 'count:8', or the field it is a misspelling of."""
    allowed = _fields_at(tagged[:-1])
    name = str(tagged[-1])
    glued = _glued(name)
    if glued is not None and glued[0] in allowed:
        return glued[0]
    return closest(name, allowed) if allowed else None


def _glued(key: str) -> tuple[str, str] | None:
    """'count:8' -> ('count', '8'): a key and its value without the space after ':', which YAML reads as one key
    (in a flow mapping) with no value; not a time or a URL, whose ':' belongs to them."""
    from policyc.language.yaml_errors import value_like

    match = re.fullmatch(r"([^\s:]+):(\S+)", key)
    return (match[1], match[2]) if match and not value_like(key) else None


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
_BOUNDS = {
    # pydantic's error type -> the side of the field's `Why` that explains it, and how the bound (the error's context
    # entry) is said for a field without one
    "greater_than_equal": ("low", "at least {ge}"),
    "greater_than": ("low", "above {gt}"),
    "too_short": ("low", "at least {min_length} long"),
    "string_too_short": ("low", "at least {min_length} long"),
    "less_than_equal": ("high", "at most {le}"),
    "less_than": ("high", "below {lt}"),
    "too_long": ("high", "at most {max_length} long"),
    "string_too_long": ("high", "at most {max_length} long"),
    "string_pattern_mismatch": ("shape", "of the form {pattern}"),
}


def _diagnostic(err: dict, source_map: SourceMap, data: Any) -> Diagnostic:
    tagged, at_key = tuple(err["loc"]), False
    if tagged and tagged[-1] == "[key]":
        tagged, at_key = tagged[:-1], True
    loc = _untagged(tagged)
    glued = _glued(loc[-1]) if loc and isinstance(loc[-1], str) else None
    if glued is not None and _value_at(data, loc) is None:  # 'count:8' in a flow mapping: one key, without a value
        hint = f"write '{glued[0]}: {glued[1]}': YAML reads '{loc[-1]}' as one key, without a value"
        return replace(_described(err, tagged, at_key, loc, source_map), hint=hint)
    return _described(err, tagged, at_key, loc, source_map)


def _value_at(data: Any, loc: Path) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _described(err: dict, tagged: Path, at_key: bool, loc: Path, source_map: SourceMap) -> Diagnostic:
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
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
            message = f"{place} must be '{expected[0]}', not {describe_value(value, text)}"
            return diag("invalid-value", message, loc, hint=f"write {expected[0]}")
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
    if kind in _BOUNDS:
        why, fix = _constraint(kind, tagged, at_key, value, ctx)
        return diag("invalid-value", f"{place} {_shown(value, text, kind)}: {why}", loc, hint=fix, at_key=at_key)
    if kind == "finite_number":
        return diag("invalid-value", f"{place} is {text or value}, not a finite number", loc, hint="write a number")
    # Never pydantic's own words ("Input should be ..."): an error of a kind not worded above is said plainly.
    return diag("invalid-value", f"{place}: {describe_value(value, text)} is not a value it takes", loc, at_key=at_key)


def _constraint(kind: str, tagged: Path, at_key: bool, value: Any, ctx: dict) -> tuple[str, str | None]:
    """Why `value` breaks a bound or pattern of the field at `tagged`, and what to write: its `Why`, in the policy's
    terms (a plain statement of the bound for a field without one)."""
    side, words = _BOUNDS[kind]
    why = _why_at(tagged, at_key)
    reason = getattr(why, side) if why is not None else None
    if reason is None:
        return "it must be " + words.format_map(collections.defaultdict(str, ctx)), None
    message, fix = reason
    fixed = why.suggest(value) if side == "shape" and why.suggest and isinstance(value, str) else None
    if fixed and fixed != value and re.fullmatch(ctx.get("pattern", ""), fixed):
        fix = f"did you mean '{fixed}'?"
    return message, fix


def _shown(value: Any, text: str | None, kind: str) -> str:
    """How a message names a value beyond a bound: "is 0", "is empty", "has 300 characters", "is '1g-10gb'"."""
    if isinstance(value, str | list | dict) and kind.endswith(("too_short", "too_long")):
        if not value:
            return "is empty"
        return f"has {len(value):,} {'characters' if isinstance(value, str) else 'items'}"
    if isinstance(value, str):
        return f"is '{value if len(value) <= QUOTED else value[: QUOTED - 3] + '...'}'"
    return f"is {text if text is not None else value}"


def _why_at(tagged: Path, at_key: bool = False) -> Why | None:
    """The `Why` of the value (or the key, `at_key`) at a pydantic location: in its field's metadata, or in the item
    type of the list or dict holding it."""
    container = _unwrap(_model_at(tagged[:-1]))
    if isinstance(container, type) and issubclass(container, BaseModel):
        field = {f.alias or n: f for n, f in container.model_fields.items()}.get(str(tagged[-1]))
        metadata = list(field.metadata) if field is not None else []
    else:
        args = typing.get_args(container)
        metadata = _peel(args[0] if at_key or len(args) == 1 else args[1])[1] if args else []
    return next((m for m in metadata if isinstance(m, Why)), None)


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
        if tag == tagged[-1] or not (isinstance(model, type) and issubclass(model, BaseModel)):  # `rdma: true`'s bool
            continue
        if name in {f.alias or n for n, f in model.model_fields.items()}:
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
        if error["type"] in _BOUNDS:
            return _constraint(error["type"], loc, False, value, error.get("ctx") or {})[0]
        return "it is not a value the field takes"
    return None


def _model_at(loc: Path) -> Any:
    """The type the policy language expects at a location (None where it defines nothing)."""
    model: Any = policy_model()
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
    return _peel(tp)[0]


def _peel(tp: Any) -> tuple[Any, list[Any]]:
    """A type without Optional[...] and Annotated[...], and the Annotated metadata stripped."""
    metadata: list[Any] = []
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp, *extra = typing.get_args(tp)
            metadata.extend(extra)
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp, metadata
            tp = args[0]
        else:
            return tp, metadata

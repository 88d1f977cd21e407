"""A checker of ``volcano-scheduler.conf`` against the facts of Volcano's scheduler (`facts`).

Volcano reads the file with the non-strict ``gopkg.in/yaml.v2``: unknown keys vanish, a misspelt plugin is only
logged every session, and a value of the wrong type is ignored, or crash-loops the scheduler, depending on how the
plugin reads it (`terms.Effect`). policyc generates this file and passes user-written plugin arguments through, so it
checks the file here instead.

The checker is pure: `check_conf` for the tiers of a file, `check_plugin` for one plugin entry and `check_actions` for
a list of action names. Each returns every `Finding` in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from policyc.backends.volcano.conf.facts import (
    ACTIONS,
    CLOCK,
    GO_DURATION,
    LEGACY_FLAGS,
    PARSE_BOOL,
    PLUGIN_CONFLICTS,
    PLUGIN_FLAGS,
    PLUGINS,
    REMOVED_ACTIONS,
    REMOVED_PLUGINS,
)
from policyc.backends.volcano.conf.terms import Effect, Kind, ListOf, MapOf, PluginSpec, Scalar, Spec, Struct
from policyc.diagnostics import Path, describe_value, did_you_mean, dotted
from policyc.k8s.quantity import Quantity, QuantityError

__all__ = ["Finding", "check_actions", "check_conf", "check_plugin"]


@dataclass(frozen=True)
class Finding:
    """One problem in the configuration; `path` is the place inside the conf (or inside a plugin entry)."""

    path: Path
    rule: str
    message: str
    hint: str | None = None


# --------------------------------------------------------------------------------------------------------------
# Tiers and plugin entries


def check_conf(conf: Mapping[str, Any]) -> list[Finding]:
    """Check the tiers of a ``volcano-scheduler.conf`` (already parsed from YAML) and return every finding."""
    tiers = conf.get("tiers")
    if tiers is None:
        return []
    if not _is_list(tiers):
        return [
            Finding(
                ("tiers",),
                "invalid-value",
                f"tiers are {_describe(tiers)}, not a list: Volcano rejects the whole file "
                f"(cannot unmarshal {_yaml_tag(tiers)}) and keeps its previous configuration",
                "write tiers as a list of {plugins: [...]}",
            )
        ]
    out: list[Finding] = []
    placed: list[_Placed] = []
    for t, tier in enumerate(tiers):
        out += _check_tier(t, tier, placed)
    return out + _check_conflicts(placed)


@dataclass(frozen=True, slots=True)
class _Placed:
    """A plugin entry of a known plugin, and where it sits."""

    tier: int
    path: Path
    name: str
    entry: Mapping[str, Any]


def _check_tier(t: int, tier: Any, placed: list[_Placed]) -> list[Finding]:
    """The findings of tier `t`; its entries of known plugins join `placed`."""
    tier_path: Path = ("tiers", t)
    if not isinstance(tier, Mapping):
        return [
            Finding(
                tier_path,
                "invalid-value",
                f"tier {t} is {_describe(tier)}, not a mapping: Volcano rejects the whole file",
                "write a tier as {plugins: [...]}",
            )
        ]
    out = [
        Finding(
            (*tier_path, key),
            "invalid-value",
            f"tier {t} has the key '{key}', which Volcano ignores (a tier holds only 'plugins')",
            did_you_mean(str(key), ["plugins"], list_few=False) or "move it into a plugin entry, or delete it",
        )
        for key in tier
        if key != "plugins"
    ]
    plugins = tier.get("plugins")
    if plugins is None:
        return out
    if not _is_list(plugins):
        return [
            *out,
            Finding(
                (*tier_path, "plugins"),
                "invalid-value",
                f"the plugins of tier {t} are {_describe(plugins)}, not a list: Volcano rejects the whole file",
                "write plugins as a list of {name: ...} entries",
            ),
        ]
    for p, entry in enumerate(plugins):
        entry_path: Path = (*tier_path, "plugins", p)
        out += check_plugin(entry, entry_path)
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if isinstance(name, str) and name in PLUGINS:
            out += _check_duplicate(name, entry_path, placed)
            placed.append(_Placed(t, entry_path, name, entry))
    return out


def _check_duplicate(name: str, path: Path, placed: list[_Placed]) -> list[Finding]:
    first = next((p.path for p in placed if p.name == name), None)
    if first is None:
        return []
    return [
        Finding(
            (*path, "name"),
            "duplicate-plugin",
            f"the plugin '{name}' is configured twice (first at {dotted(first)}): Volcano opens it twice every "
            "session and one copy's settings override the other's",
            "keep one entry and merge their options and arguments",
        )
    ]


def _check_conflicts(placed: list[_Placed]) -> list[Finding]:
    out: list[Finding] = []
    for conflict in PLUGIN_CONFLICTS:
        firsts = [p for p in placed if p.name == conflict.first]
        for second in placed:
            if second.name != conflict.second:
                continue
            if conflict.flag is not None and second.entry.get(conflict.flag) is not True:
                continue
            partners = [p for p in firsts if not conflict.same_tier or p.tier == second.tier]
            if not partners:
                continue
            if conflict.flag is not None:
                where: Path = (*second.path, conflict.flag)
                what = (
                    f"{second.name} with {conflict.flag}: true and {conflict.first} are in the same tier "
                    f"({second.tier})"
                )
            else:
                # Point at whichever of the two comes later in the file.
                where = (*max(second.path, partners[0].path), "name")
                what = f"{conflict.first} and {conflict.second} are both enabled"
            out.append(Finding(where, "conflicting-plugins", f"{what}: {conflict.consequence}", conflict.hint))
    return out


def check_plugin(entry: Mapping[str, Any], path: Sequence[str | int] = ()) -> list[Finding]:
    """Check one plugin entry ``{name, <flags>, arguments}``; `path` is where the entry sits."""
    base: Path = tuple(path)
    if not isinstance(entry, Mapping):
        return [
            Finding(
                base,
                "invalid-value",
                f"a plugin entry is {_describe(entry)}, not a mapping: Volcano rejects the whole file "
                "and keeps its previous configuration",
                "write a mapping such as {name: gang}",
            )
        ]
    name = entry.get("name")
    out = _check_plugin_name(entry, base)
    plugin = name if isinstance(name, str) and name in PLUGINS else None
    who = plugin or (name if isinstance(name, str) and name else "the plugin")
    for key, value in entry.items():
        if key not in ("name", "arguments"):
            out += _check_option(str(key), value, (*base, key), plugin, who)
    args = entry.get("arguments")
    if args is not None and not isinstance(args, Mapping):
        out.append(
            Finding(
                (*base, "arguments"),
                "invalid-value",
                f"{who} arguments are {_describe(args)}, not a mapping: Volcano rejects the whole file "
                f"(cannot unmarshal {_yaml_tag(args)} into map) and keeps its previous configuration",
                "write the arguments as key: value pairs",
            )
        )
    elif args is not None and plugin is not None:
        out += _check_arguments(args, plugin, (*base, "arguments"))
    return out


def _check_plugin_name(entry: Mapping[str, Any], base: Path) -> list[Finding]:
    name = entry.get("name")
    if name is None or name == "":
        return [
            Finding(
                (*base, "name") if "name" in entry else base,
                "invalid-value",
                "a plugin entry has no name: Volcano logs 'Failed to get plugin' every session and skips it",
                "add name: <plugin>",
            )
        ]
    if not isinstance(name, str):
        return [
            Finding(
                (*base, "name"),
                "invalid-value",
                f"the plugin name is {_describe(name)}, not a string: no plugin has that name",
                "write the plugin name as a string, such as 'gang'",
            )
        ]
    if name in PLUGINS:
        return []
    hint = (
        REMOVED_PLUGINS.get(name.strip())
        or did_you_mean(name, PLUGINS, list_few=False)
        or "plugins are " + ", ".join(PLUGINS)
    )
    message = f"unknown plugin '{name}': Volcano logs 'Failed to get plugin {name}.' every session and skips it"
    return [Finding((*base, "name"), "unknown-scheduler-plugin", message, hint)]


def _check_option(key: str, value: Any, path: Path, plugin: str | None, who: str) -> list[Finding]:
    """A key of a plugin entry beside `name` and `arguments`: one of the enable.../enabled... flags."""
    default = PLUGIN_FLAGS.get(key, LEGACY_FLAGS.get(key))
    if default is not None:
        return _check_flag(key, value, path, default, who)
    spec = PLUGINS.get(plugin) if plugin else None
    if spec is not None and (key in spec.arguments or any(key.startswith(f.prefix) for f in spec.families)):
        hint = f"'{key}' is an argument of {plugin}: move it under 'arguments'"
    else:
        hint = did_you_mean(key, [*PLUGIN_FLAGS, "name", "arguments"], list_few=False) or (
            "a plugin entry holds name, arguments and the enable.../enabled... options"
        )
    return [Finding(path, "unknown-plugin-option", f"{who} has no option '{key}': Volcano ignores it", hint)]


def _check_flag(key: str, value: Any, path: Path, default: bool, who: str) -> list[Finding]:
    if value is None:
        return [
            Finding(
                path,
                "invalid-value",
                f"{who} option '{key}' is empty: Volcano treats it as unset ({_yaml_text(default)})",
                "write true or false",
            )
        ]
    if isinstance(value, bool):
        return []
    return [
        Finding(
            path,
            "invalid-value",
            f"{who} option '{key}' is {_describe(value)}, not a YAML boolean: Volcano rejects the whole file "
            f"(cannot unmarshal {_yaml_tag(value)} into bool) and keeps its previous configuration",
            _type_hint(Scalar(Kind.BOOL, Effect.REJECTED), value),
        )
    ]


# --------------------------------------------------------------------------------------------------------------
# Actions


def check_actions(actions: Sequence[str], path: Sequence[str | int] = ()) -> list[Finding]:
    """Check a list of action names (the policy form); a string is read as the conf's comma-separated form."""
    base: Path = tuple(path)
    if isinstance(actions, str):
        items = [(part.strip(), base) for part in actions.split(",")]
    elif _is_list(actions):
        items = [(item, (*base, i)) for i, item in enumerate(actions)]
    else:
        return [Finding(base, "invalid-value", f"actions are {_describe(actions)}, not a list of action names", None)]
    if not items:
        return [
            Finding(
                base,
                "invalid-value",
                "no actions: Volcano looks up the action '' and rejects the whole file",
                'list the actions to run, e.g. "enqueue, allocate, backfill"',
            )
        ]
    out: list[Finding] = []
    seen: set[str] = set()
    for name, where in items:
        if not isinstance(name, str):
            out.append(Finding(where, "invalid-value", f"an action name is {_describe(name)}, not a string", None))
            continue
        out += _check_action(name.strip(), where, seen)
        seen.add(name.strip())
    return out


def _check_action(name: str, where: Path, seen: set[str]) -> list[Finding]:
    if not name:
        return [
            Finding(
                where,
                "invalid-value",
                "an empty action name: Volcano fails to find the action '' and rejects the whole file",
                "remove the stray comma",
            )
        ]
    if name not in ACTIONS:
        hint = (
            REMOVED_ACTIONS.get(name)
            or did_you_mean(name, ACTIONS, list_few=False)
            or (f"'{name}' is a plugin, not an action: remove it here" if name in PLUGINS else None)
            or "remove it; actions are " + ", ".join(ACTIONS)
        )
        message = (
            f"unknown action '{name}': Volcano (v1.14 and later) fails to find it and rejects the whole file, "
            "keeping its previous configuration"
        )
        return [Finding(where, "unknown-scheduler-action", message, hint)]
    if name in seen:
        return [
            Finding(
                where,
                "invalid-value",
                f"the action '{name}' is listed twice: Volcano runs it twice every cycle",
                "list each action once",
            )
        ]
    return []


# --------------------------------------------------------------------------------------------------------------
# Plugin arguments

_ARGUMENT_OWNER: dict[str, str] = {key: plugin for plugin, spec in reversed(PLUGINS.items()) for key in spec.arguments}
"""Which plugin reads an argument key, for "it is an argument of the X plugin" hints."""


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a value among a plugin's arguments sits: its path in the conf, its name under ``arguments`` (such as
    ``("sra", "resourceWeight")``), the mapping that holds it, and the plugin."""

    path: Path
    name: Path
    holder: Mapping[Any, Any]
    plugin: str

    @property
    def label(self) -> str:
        return dotted(self.name, brackets="./*")

    @property
    def owner(self) -> str:
        return f"{self.plugin} argument"

    def child(self, key: Any, holder: Mapping[Any, Any], name: str | int | None = None) -> _Place:
        """The place of `key` inside this value; `name` is how the key is named (the key itself by default)."""
        return _Place((*self.path, key), (*self.name, key if name is None else name), holder, self.plugin)


def _check_arguments(args: Mapping[Any, Any], plugin: str, path: Path) -> list[Finding]:
    spec = PLUGINS[plugin]
    out: list[Finding] = []
    for key, value in args.items():
        out += _check_argument(spec, value, _Place((*path, key), (str(key),), args, plugin))
    for pair in spec.exclusive:
        if _truthy(args.get(pair.first)) and _truthy(args.get(pair.second)):
            out.append(
                Finding(
                    (*path, pair.second),
                    "conflicting-plugins",
                    f"{plugin} enables both '{pair.first}' and '{pair.second}': {pair.consequence}",
                    f"set one of {pair.first} and {pair.second} to false",
                )
            )
    return out


def _check_argument(spec: PluginSpec, value: Any, at: _Place) -> list[Finding]:
    key = str(at.name[0])
    sub = spec.arguments.get(key)
    if sub is not None:
        return _check_value(sub, value, at)
    family = next((f for f in spec.families if key.startswith(f.prefix) and len(key) > len(f.prefix)), None)
    if family is not None:
        member = key[len(family.prefix) :]
        if family.listed_by is None or member in _csv(at.holder.get(family.listed_by)):
            return _check_value(family.value, value, at)
        return [
            Finding(
                at.path,
                "unknown-plugin-argument",
                f"{at.plugin} reads '{key}' only for resources listed in '{family.listed_by}': Volcano ignores it",
                f"add '{member}' to {family.listed_by}",
            )
        ]
    retired = spec.retired.get(key)
    if retired is None:
        retired = next((h for p, h in spec.retired_prefixes.items() if key.startswith(p)), None)
    return [
        Finding(
            at.path,
            "unknown-plugin-argument",
            f"{at.plugin} does not read the argument '{key}': Volcano ignores it",
            retired or _unknown_argument_hint(key, spec, at.plugin),
        )
    ]


def _unknown_argument_hint(key: str, spec: PluginSpec, plugin: str) -> str | None:
    if key in PLUGIN_FLAGS or key in LEGACY_FLAGS:
        return f"'{key}' is a plugin option: write it beside 'name', not under 'arguments'"
    candidates = [*spec.arguments, *(f.prefix + f.placeholder for f in spec.families)]
    suggestion = did_you_mean(key, candidates, list_few=False) if candidates else None
    if suggestion:
        return suggestion
    owner = _ARGUMENT_OWNER.get(key)
    if owner is not None and owner != plugin:
        return f"'{key}' is an argument of the {owner} plugin"
    if not candidates:
        return "it reads no arguments; delete it"
    return "it reads " + ", ".join(candidates)


def _check_value(spec: Spec, value: Any, at: _Place) -> list[Finding]:
    if isinstance(spec, Scalar):
        return _check_scalar(spec, value, at)
    if value is None:
        return [_empty(at)]
    if isinstance(spec, ListOf):
        if not _is_list(value):
            return [_not_container(spec, value, at)]
        return [f for i, item in enumerate(value) for f in _check_value(spec.item, item, at.child(i, at.holder))]
    if not isinstance(value, Mapping):
        return [_not_container(spec, value, at)]
    if isinstance(spec, Struct):
        return _check_struct(spec, value, at)
    return _check_map(spec, value, at)


def _check_struct(spec: Struct, value: Mapping[Any, Any], at: _Place) -> list[Finding]:
    out: list[Finding] = []
    for key, item in value.items():
        sub = spec.fields.get(key) if isinstance(key, str) else None
        if sub is not None:
            out += _check_value(sub, item, at.child(key, value))
            continue
        out.append(
            Finding(
                (*at.path, key),
                "unknown-plugin-argument",
                f"{at.owner} '{at.label}' has no key '{key}': Volcano ignores it",
                did_you_mean(str(key), spec.fields, list_few=False) or "keys are " + ", ".join(spec.fields),
            )
        )
    return out


def _check_map(spec: MapOf, value: Mapping[Any, Any], at: _Place) -> list[Finding]:
    out: list[Finding] = []
    for key, item in value.items():
        text = str(key)
        if spec.known_keys and text not in spec.known_keys:
            out.append(
                Finding(
                    (*at.path, key),
                    "unknown-plugin-argument",
                    f"{at.owner} '{at.label}' has no key '{text}': Volcano ignores it",
                    did_you_mean(text, spec.known_keys, list_few=False) or "keys are " + ", ".join(spec.known_keys),
                )
            )
        elif unread := _unread_key(spec, key, at):
            out.append(unread)
            continue
        out += _check_value(spec.value, item, at.child(key, value, text))
    return out


def _unread_key(spec: MapOf, key: Any, at: _Place) -> Finding | None:
    """A key of the mapping at `at` that Volcano does not read: a pattern it refuses, or a resource not listed."""
    text = str(key)
    if spec.prefix_patterns and text == "*":
        problem, hint = (
            "a lone '*' is not supported",
            "use a prefix pattern such as 'nvidia.com/*', or list the resources",
        )
    elif spec.prefix_patterns and "*" in text and (text.count("*") != 1 or not text.endswith("*")):
        problem, hint = "only one trailing '*' is supported", "write a prefix pattern such as 'nvidia.com/*'"
    else:
        return _unlisted_key(spec, key, at)
    message = f"{at.plugin} {at.label} key '{text}': {problem}, Volcano ignores the entry"
    return Finding((*at.path, key), "invalid-value", message, hint)


def _unlisted_key(spec: MapOf, key: Any, at: _Place) -> Finding | None:
    if spec.keys_listed_in is None:
        return None
    text = str(key)
    listed = _csv(at.holder.get(spec.keys_listed_in))
    listing = dotted((*at.name[:-1], spec.keys_listed_in), brackets="./*")
    if not spec.key_dimensions:
        if text in listed:
            return None
        message = f"{at.plugin} reads {at.label}[{text}] only for resources listed in {listing}: Volcano ignores it"
        return Finding((*at.path, key), "unknown-plugin-argument", message, f"add '{text}' to {listing}")
    resource, dot, dimension = text.rpartition(".")
    if dot and dimension in spec.key_dimensions:
        if resource in listed:
            return None
        hint = f"add '{resource}' to {listing}"
    else:
        forms = " and ".join(f"'<resource>.{d}'" for d in spec.key_dimensions)
        hint = f"keys are {forms}, e.g. 'nvidia.com/gpu.{spec.key_dimensions[0]}'"
    message = f"{at.plugin} does not read {at.label}[{text}]: Volcano ignores it"
    return Finding((*at.path, key), "unknown-plugin-argument", message, hint)


def _empty(at: _Place) -> Finding:
    return Finding(
        at.path,
        "plugin-argument-type",
        f"{at.owner} '{at.label}' is empty: Volcano treats it as unset or zero",
        "give it a value or delete the key",
    )


def _not_container(spec: Struct | MapOf | ListOf, value: Any, at: _Place) -> Finding:
    expected = "a list" if isinstance(spec, ListOf) else "a mapping"
    return Finding(
        at.path,
        "plugin-argument-type",
        f"{at.owner} '{at.label}' is {_describe(value)}, not {expected}: {_consequence(spec.effect, None)}",
        f"write {expected}",
    )


# --------------------------------------------------------------------------------------------------------------
# Scalar values

_EXPECTED = {
    Kind.INT: "a YAML integer",
    Kind.FLOAT: "a number",
    Kind.BOOL: "a YAML boolean",
    Kind.STRING: "a string",
    Kind.DURATION: "a duration string",
    Kind.CSV: "a comma-separated string",
    Kind.CLOCK_RANGE: "a string 'HH:MM-HH:MM'",
    Kind.QUANTITY: "a quantity",
}


def _check_scalar(spec: Scalar, value: Any, at: _Place) -> list[Finding]:
    if value is None:
        return [_empty(at)]
    if not _accepts(spec.kind, value):
        return [_wrong_type(spec, value, at)]
    if spec.kind in (Kind.INT, Kind.FLOAT):
        problem, shown = _out_of_range(spec, value), f"{value}"
    else:
        problem, shown = _bad_syntax(spec, value), f"'{value}'"
    if problem is None:
        return []
    what, hint = problem
    return [Finding(at.path, "invalid-value", f"{at.owner} '{at.label}' is {shown}, {what}: {spec.value_effect}", hint)]


def _wrong_type(spec: Scalar, value: Any, at: _Place) -> Finding:
    what = f"{at.owner} '{at.label}' is {_describe(value)}, not {_EXPECTED[spec.kind]}"
    if spec.kind is Kind.INT and spec.effect is Effect.FATAL and isinstance(value, float):
        consequence = f"framework.Get truncates it to {int(value)}"
    elif spec.kind is Kind.BOOL and isinstance(value, str) and value.strip() in PARSE_BOOL:
        consequence = "recent Volcano releases parse the string, older ones ignore it"
    else:
        consequence = _consequence(spec.effect, spec.default)
    return Finding(at.path, "plugin-argument-type", f"{what}: {consequence}", _type_hint(spec, value))


def _out_of_range(spec: Scalar, value: float) -> tuple[str, str] | None:
    if spec.minimum is not None and value < spec.minimum:
        return f"below the minimum {_yaml_text(spec.minimum)}", f"use at least {spec.minimum}"
    if spec.maximum is not None and value > spec.maximum:
        return f"above the maximum {_yaml_text(spec.maximum)}", f"use at most {spec.maximum}"
    return None


def _bad_syntax(spec: Scalar, value: Any) -> tuple[str, str] | None:
    if spec.kind is Kind.DURATION and not GO_DURATION.fullmatch(value):
        return "not a Go duration", 'use Go duration syntax such as "300ms", "5m" or "1h30m"'
    if spec.kind is Kind.CLOCK_RANGE and not _valid_clock_range(value):
        return "not a range 'HH:MM-HH:MM'", 'write a range such as "10:00-21:00" (no spaces around "-")'
    if spec.kind is Kind.QUANTITY and isinstance(value, str) and not _is_quantity(value.strip()):
        return "not a Kubernetes quantity", 'write a quantity such as "250m" or "200Mi"'
    if spec.choices and value not in spec.choices:
        choices = [c for c in spec.choices if c]
        return (
            "not one of " + ", ".join(f"'{c}'" for c in choices),
            did_you_mean(value, choices, list_few=False) or "use one of the values listed",
        )
    return None


def _consequence(effect: Effect, default: Any) -> str:
    if effect is Effect.IGNORED and default is not None:
        return f"{effect.value} and uses the default {_fmt(default)}"
    return effect.value


def _type_hint(spec: Scalar, value: Any) -> str:
    """How to write `value` as the type `spec` asks for."""
    return _TYPE_HINTS.get(spec.kind, _string_hint)(spec, value)


def _int_hint(spec: Scalar, value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
        return f"write {int(value)} without quotes"
    if isinstance(value, float) and value.is_integer():
        return f"write {int(value)} without the decimal point"
    return f"write a whole number such as {spec.default if _is_int(spec.default) else 1}"


def _float_hint(spec: Scalar, value: Any) -> str:
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            pass
        else:
            return f"write {value.strip()} without quotes"
    return f"write a number such as {spec.default if spec.default is not None else 1.0}"


def _bool_hint(_spec: Scalar, value: Any) -> str:
    if isinstance(value, str) and value.strip() in PARSE_BOOL:
        return f"write {_yaml_text(PARSE_BOOL[value.strip()])} without quotes"
    return "write true or false"


def _duration_hint(spec: Scalar, value: Any) -> str:
    if _is_number(value):
        return f'write a quoted Go duration, e.g. "{_yaml_text(value)}s" for {_yaml_text(value)} seconds'
    return f'write a quoted Go duration such as "{spec.default or "1m"}"'


def _string_hint(spec: Scalar, value: Any) -> str:
    if spec.choices:
        return "write one of " + ", ".join(f"'{c}'" for c in spec.choices if c)
    if spec.kind is Kind.CSV and _is_list(value) and all(isinstance(v, str) for v in value):
        return f'write one string: "{", ".join(value)}"'
    if value is not None and not isinstance(value, Mapping) and not _is_list(value):
        return f'quote it: "{_yaml_text(value)}"'
    return "write a string"


_TYPE_HINTS: dict[Kind, Callable[[Scalar, Any], str]] = {
    Kind.INT: _int_hint,
    Kind.FLOAT: _float_hint,
    Kind.BOOL: _bool_hint,
    Kind.DURATION: _duration_hint,
    Kind.CLOCK_RANGE: lambda _spec, _value: 'write a quoted range such as "10:00-21:00"',
    Kind.QUANTITY: lambda _spec, _value: 'write a quantity such as "250m" or "200Mi"',
}
"""The hint for a value of the wrong type, by the kind asked for (strings and comma-separated names otherwise)."""


# --------------------------------------------------------------------------------------------------------------
# Values as YAML and Volcano read them


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _accepts(kind: Kind, value: Any) -> bool:
    if kind is Kind.INT:
        return _is_int(value)
    if kind is Kind.FLOAT:
        return _is_number(value)
    if kind is Kind.BOOL:
        return isinstance(value, bool)
    if kind is Kind.QUANTITY:
        return isinstance(value, str) or _is_number(value)
    return isinstance(value, str)


def _is_quantity(text: str) -> bool:
    """Whether resource.ParseQuantity accepts `text` (suffixes are case-sensitive: '200mi' is refused)."""
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _valid_clock_range(value: str) -> bool:
    parts = value.strip().split("-")
    if len(parts) != 2:
        return False
    for part in parts:
        match = CLOCK.fullmatch(part)
        if not match or int(match[1]) > 23 or int(match[2]) > 59:
            return False
    return True


def _csv(value: Any) -> list[str]:
    """The names of a comma-separated argument, as Volcano splits them (empty parts skipped)."""
    if not isinstance(value, str):
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def _truthy(value: Any) -> bool:
    """True as Volcano's GetBool reads it (a boolean, or a string strconv.ParseBool reads as true)."""
    if isinstance(value, str):
        return PARSE_BOOL.get(value) is True
    return value is True


def _describe(value: Any) -> str:
    return "empty" if value is None else describe_value(value)


def _yaml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"' if value else '""'
    return _yaml_text(value)


def _yaml_tag(value: Any) -> str:
    if isinstance(value, bool):
        return "!!bool"
    if isinstance(value, int):
        return "!!int"
    if isinstance(value, float):
        return "!!float"
    if isinstance(value, str):
        return "!!str"
    if isinstance(value, Mapping):
        return "!!map"
    return "!!seq" if _is_list(value) else "!!null"

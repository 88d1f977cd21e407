"""The registry: the families of backends policyc knows, each a table of name -> the package that implements it.

It imports none of them and nothing of policyc's: `face` imports one module of one backend when it is first asked
for. A backend package has four such modules, its faces (`policyc.backends.interface` describes each):

- ``settings``: its member of the union `spec.scheduler` is, and what it owns on a cluster; light, read by the
  language and the checks.
- ``codes``: its diagnostic rules, which join the catalogue (`policyc.codes`).
- ``rules``: its checks of a policy, run only when a policy selects it.
- ``backend``: its objects and how a workload joins its queue, imported only when a policy selects it.

The pipeline (`policyc.compiler`) looks the selected backend up here and passes it to the stages that need it; no
emitter, no tenancy module and no proof looks a backend up by itself.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

SCHEDULERS = {
    "volcano": "policyc.backends.volcano",
    "kueue": "policyc.backends.kueue",
    "kai": "policyc.backends.kai",
}
"""Scheduler backend name -> its package. The first is the default."""

FAMILIES = {"scheduler": SCHEDULERS}
"""Family of backends -> its table. Each family is a `spec` section choosing one of its members by name."""


@cache
def face(family: str, name: str, module: str) -> ModuleType:
    """The module `module` (a face) of the backend `name` of `family`, imported on first use."""
    return importlib.import_module(f"{FAMILIES[family][name]}.{module}")


def scheduler(name: str) -> ModuleType:
    """The scheduler backend's `backend` face (`policyc.backends.interface.SchedulerBackend`)."""
    return face("scheduler", name, "backend")


def scheduler_rules(name: str) -> ModuleType:
    """The scheduler backend's `rules` face (`policyc.backends.interface.RulesFace`)."""
    return face("scheduler", name, "rules")


def settings(name: str) -> ModuleType:
    """The scheduler backend's `settings` face (`policyc.backends.interface.SettingsFace`)."""
    return face("scheduler", name, "settings")


def every_settings() -> list[ModuleType]:
    """Every registered scheduler backend's `settings` face, in registry order."""
    return [settings(name) for name in SCHEDULERS]


def every_codes() -> dict[str, dict[str, ModuleType]]:
    """Family -> backend name -> its `codes` face, in registry order. A backend's name names its family of rules in
    the catalogue (`policyc.codes`), so no two backends share a name, even in different families."""
    return {family: {name: face(family, name, "codes") for name in table} for family, table in FAMILIES.items()}

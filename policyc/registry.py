"""The registry: the families of backends policyc knows, each a table of name -> the package that implements it.

Two families: the scheduler backends (a policy selects one, `spec.scheduler.backend`) and the node provisioners, how
a pool's nodes come to be and get its labels and taints (each pool selects one, `nodePools[].provisioning`, or
`spec.provisioning.default`).

It imports none of them and nothing of policyc's: `face` imports one module of one backend when it is first asked
for. A backend package has four such modules, its faces (`policyc.backends.interface` describes each):

- ``settings``: its settings in the language (a scheduler's member of the union `spec.scheduler` is; a
  provisioner's blocks `spec.provisioning.<name>` and `nodePools[].<name>`), and what it owns on a cluster; light,
  read by the language and the checks.
- ``codes``: its diagnostic rules, which join the catalogue (`policyc.codes`).
- ``rules``: its checks of a policy, run only when a policy selects it.
- ``backend``: its objects (and, for a scheduler, how a workload joins its queue), imported only when a policy
  selects it.

Each has a fifth, ``adopt``: its objects on a running cluster read back as policy (a scheduler's queues, a
provisioner's pools), for `policyc import` only.

The pipeline (`policyc.compiler`) looks the selected backends up here and passes them to the stages that need them;
no emitter, no tenancy module and no proof looks a backend up by itself.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

SCHEDULERS = {
    "volcano": "policyc.backends.volcano",
    "kueue": "policyc.backends.kueue",
    "kai": "policyc.backends.kai",
    "yunikorn": "policyc.backends.yunikorn",
}
"""Scheduler backend name -> its package. The first is the default."""

PROVISIONERS = {
    "static": "policyc.provisioners.static",
    "karpenter": "policyc.provisioners.karpenter",
    "nfd": "policyc.provisioners.nfd",
    "clusterapi": "policyc.provisioners.clusterapi",
    "gke": "policyc.provisioners.gke",
    "eks": "policyc.provisioners.eks",
    "aks": "policyc.provisioners.aks",
}
"""Node provisioner (a pool's `provisioning`) -> its package. The first is the default of `spec.provisioning`."""

FAMILIES = {"scheduler": SCHEDULERS, "provisioner": PROVISIONERS}
"""Family of backends -> its table. A policy selects one scheduler; each of its pools one provisioner."""


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


def scheduler_adopt(name: str) -> ModuleType:
    """The scheduler backend's `adopt` face (`policyc.backends.interface.AdoptFace`)."""
    return face("scheduler", name, "adopt")


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


def provisioner(name: str) -> ModuleType:
    """The node provisioner's `backend` face (`policyc.backends.interface.Provisioner`)."""
    return face("provisioner", name, "backend")


def provisioner_adopt(name: str) -> ModuleType:
    """The node provisioner's `adopt` face (`policyc.backends.interface.ProvisionerAdoptFace`)."""
    return face("provisioner", name, "adopt")


def provisioner_rules(name: str) -> ModuleType:
    """The node provisioner's `rules` face (`policyc.backends.interface.RulesFace`)."""
    return face("provisioner", name, "rules")


def provisioner_settings(name: str) -> ModuleType:
    """The node provisioner's `settings` face (`policyc.backends.interface.ProvisionerSettingsFace`)."""
    return face("provisioner", name, "settings")


def every_provisioner_settings() -> list[ModuleType]:
    """Every registered node provisioner's `settings` face, in registry order."""
    return [provisioner_settings(name) for name in PROVISIONERS]

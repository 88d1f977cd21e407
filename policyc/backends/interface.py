"""What a backend is: the faces of a package registered in `policyc.registry`, each a module providing one of these
contracts. The shared backends (Kubernetes objects, nodes, templates), the checks, the proofs and the tenancy
modules are given the selected backend by the pipeline and know none by name.

The contracts are `runtime_checkable`, so that `isinstance(module, SchedulerBackend)` tells whether every member is
there; `tests/backends/test_registry.py` also holds each member to its declared type and signature, as the
Kubernetes scheduler framework asserts that a plugin implements its extension points.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol, runtime_checkable

from policyc.artifacts import Artifact
from policyc.backends.binding import Binding
from policyc.backends.workloads import Kind
from policyc.codes import Rule
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster, Workload
from policyc.k8s.dependencies import Reference
from policyc.language.model.base import SchedulerSettings

Check = Callable[[Cluster], Iterable[Diagnostic]]


@runtime_checkable
class SettingsFace(Protocol):
    """A scheduler backend's `settings`: what the language, the resolver and the checks know of it without importing
    the rest of it. Light: every process imports it."""

    Settings: type[SchedulerSettings]
    """Its settings model: its member of the union `spec.scheduler` is, tagged by `backend`."""
    TITLE: str
    """Its name in messages, capitalised as its project writes it."""
    WORKLOAD_KINDS: tuple[str, ...]
    """The workload kinds it runs, by their name in the policy language."""
    DEFAULT_KINDS: Mapping[str, str]
    """Workload type (training, inference) -> the kind a workload of that type gets when it names none."""
    GANG_KINDS: tuple[str, ...]
    """The kinds whose template carries a gang minimum (`minMember`)."""
    PODS_AFTER_ADMISSION: Mapping[str, str]
    """Kinds whose pods are created only once its queue admits the workload -> what the queue counts of it then
    ('gang' or 'all')."""
    NAMESPACES: tuple[str, ...]
    """Where its components run: no tenant may own them."""
    LABEL_DOMAINS: tuple[str, ...]
    """Label domains it owns: never the policy's own."""
    DEVICE_RESOURCES: tuple[str, ...]
    """Extended resources its device plugins advertise."""


@runtime_checkable
class CodesFace(Protocol):
    """A backend's `codes`: its diagnostic rules, which join the catalogue (`policyc.codes`)."""

    RULES: tuple[Rule, ...]
    """Its rules, in a range of codes of its own."""


@runtime_checkable
class RulesFace(Protocol):
    """A scheduler backend's `rules`: its checks of a policy, run only when a policy selects it."""

    CHECKS: tuple[Check, ...]


@runtime_checkable
class SchedulerBackend(Protocol):
    """A scheduler backend's `backend`: its objects and how workloads join its queues, imported only when a policy
    selects it."""

    NAME: str
    """The value of `spec.scheduler.backend` that selects it."""
    KINDS: Mapping[str, Kind]
    """The workload kinds it runs (its `settings.WORKLOAD_KINDS`): shared ones (`policyc.backends.workloads.KINDS`)
    and its own."""
    REFERENCES: tuple[Reference, ...]
    """The fields by which its objects name others that must be created first (a queue's parent), beside the shared
    ones of `policyc.k8s.dependencies`: the sync waves and the kustomization's order follow from them."""

    def emit(self, cluster: Cluster) -> list[Artifact]:
        """Its own objects and configuration files."""
        ...

    def binding(self, cluster: Cluster, workload: Workload) -> Binding:
        """How a workload's template joins its queue."""
        ...

    def queue_binding(self, cluster: Cluster, tenant: str) -> Binding:
        """What any pod or workload of `tenant` carries to join its queue (its scheduler, queue labels and
        annotations), which its admission policy holds it to."""
        ...

    def tolerations_added(self, cluster: Cluster, workload: Workload) -> tuple[tuple[dict, ...], ...]:
        """The tolerations the scheduler itself may add to a workload's pods, one set per way it can admit them: its
        tenant's admission policy must let each through (the tenancy proof holds it to)."""
        ...

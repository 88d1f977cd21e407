"""What a scheduler backend is: the module `backend` of a package registered in `policyc.backends.SCHEDULERS`
provides this contract (the package's `settings` and `codes` modules are described there). The shared backends
(Kubernetes objects, nodes, templates, Argo CD), checks and proofs call it and know no scheduler by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from policyc.artifacts import Artifact
from policyc.backends.binding import Binding
from policyc.backends.workloads import Kind
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster, Workload
from policyc.k8s.dependencies import Reference

Check = Callable[[Cluster], Iterable[Diagnostic]]


class SchedulerBackend(Protocol):
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

    def checks(self) -> tuple[Check, ...]:
        """The checks of what it accepts, run only when a policy compiles for it."""
        ...

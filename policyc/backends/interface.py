"""What a scheduler backend is: a package under `policyc.backends` that provides this module contract. The shared
backends (Kubernetes objects, nodes, templates, Argo CD) call it and know no scheduler by name; `SCHEDULERS` in
`policyc.backends` registers each package with one line, and a package is imported only when a policy selects it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from policyc.artifacts import Artifact
from policyc.backends.binding import Binding
from policyc.diagnostics import Diagnostic
from policyc.ir import Cluster, Workload

Check = Callable[[Cluster], Iterable[Diagnostic]]


class SchedulerBackend(Protocol):
    NAME: str
    """The value of `spec.scheduler.backend` that selects it."""
    KINDS: tuple[str, ...]
    """Workload kinds (`policyc.backends.workloads.KINDS`) it can run."""
    DEFAULT_KINDS: Mapping[str, str]
    """Workload type (training, inference) -> the kind a workload of that type gets when it names none."""

    def emit(self, cluster: Cluster) -> list[Artifact]:
        """Its own objects and configuration files."""
        ...

    def binding(self, cluster: Cluster, workload: Workload) -> Binding:
        """How a workload's template joins its queue."""
        ...

    def checks(self) -> tuple[Check, ...]:
        """The checks of what it accepts, run only when a policy compiles for it."""
        ...

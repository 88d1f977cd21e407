"""What a backend is: the faces of a package registered in `policyc.registry`, each a module providing one of these
contracts. The shared backends (Kubernetes objects, nodes, templates), the checks, the proofs and the tenancy
modules are given the selected backend by the pipeline and know none by name.

The contracts are `runtime_checkable`, so that `isinstance(module, SchedulerBackend)` tells whether every member is
there; `tests/backends/test_registry.py` also holds each member to its declared type and signature, as the
Kubernetes scheduler framework asserts that a plugin implements its extension points.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from policyc.artifacts import Artifact
from policyc.backends.binding import Binding
from policyc.backends.workloads import Kind
from policyc.codes import Rule
from policyc.diagnostics import Diagnostic
from policyc.ir import ChosenLabel, Cluster, LabelKeys, Pool, Workload
from policyc.k8s.dependencies import Reference
from policyc.language.model.base import Model, SchedulerSettings

if TYPE_CHECKING:  # what the adopt faces read: only `policyc import` imports it
    from policyc.cluster.reading import PoolsRead, QueuesRead
    from policyc.cluster.source import ClusterSource

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
class ProvisionerSettingsFace(Protocol):
    """A node provisioner's `settings`: what the language, the resolver and the checks know of it without importing
    the rest of it. Light: every process that validates a policy imports it."""

    Settings: type[Model]
    """Its cluster-wide settings: the block `spec.provisioning.<name>` (every field with a default)."""
    PoolSettings: type[Model] | None
    """Its settings of one pool: the block `nodePools[].<name>` (None: it has none)."""
    TITLE: str
    """Its name in messages, capitalised as its project writes it."""
    NAMED_NODES: bool
    """True: its pools list their nodes by name (`nodes`); False: by size (`count`, or `minNodes` and `maxNodes`)."""
    REGISTERS_TAINTED: bool
    """True: a node of its pools carries the pool's taints from the moment it registers (it puts them there); False:
    the node registers with policyc's registration taint (the kubelet setting of `nodes/kubelet-config.yaml`), which
    `nodes/release.sh` removes once the node carries its pool's taints."""
    NAMESPACES: tuple[str, ...]
    """Where its components run: no tenant may own them."""
    LABEL_DOMAINS: tuple[str, ...]
    """Label domains it owns: never the policy's own."""


@runtime_checkable
class CodesFace(Protocol):
    """A backend's `codes`: its diagnostic rules, which join the catalogue (`policyc.codes`)."""

    RULES: tuple[Rule, ...]
    """Its rules, in a range of codes of its own."""


@runtime_checkable
class RulesFace(Protocol):
    """A backend's `rules`: its checks of a policy, run only when a policy selects it (a provisioner's: when a pool
    does)."""

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


@runtime_checkable
class AdoptFace(Protocol):
    """A scheduler backend's `adopt`: its objects on a running cluster read back as the policy language writes them,
    for `policyc import`; imported only by that command."""

    def read_queues(self, source: ClusterSource, domain: str, gpu_resource: str) -> QueuesRead | None:
        """Its settings and a queue per tenant from the cluster's objects (`domain`: the policy's label domain, whose
        `<domain>/tenant` label names a queue's tenant; `gpu_resource`: the resource the policy calls `gpu`); None
        when the cluster holds none of its queues."""
        ...


@runtime_checkable
class Provisioner(Protocol):
    """A node provisioner's `backend`: the objects that make its pools' nodes and give them their labels and taints,
    imported only when a pool selects it."""

    NAME: str
    """The value of `nodePools[].provisioning` that selects it."""
    REFERENCES: tuple[Reference, ...]
    """The fields by which its objects name others that must be created first, beside the shared ones of
    `policyc.k8s.dependencies` (which already put every node-side object before what makes pods)."""

    def emit(self, cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
        """Its objects and files for `pools`, the cluster's pools that select it (at least one)."""
        ...

    def describe(self, cluster: Cluster, pool: Pool) -> str:
        """How the pool's nodes come to be and get its labels and taints, in a few words, for `explain` and
        `report` (e.g. 'nodes/apply.sh, NodeFeatureRule policyc-h100')."""
        ...

    def chosen_labels(self, pool: Pool) -> tuple[ChosenLabel, ...]:
        """The labels it sets on each node it makes for the pool beside the pool's own, each to a value it chooses
        for the pod the node is made for, among those its requirements allow (e.g. one value of each
        requirement, and its well-known labels); sorted by key, none for a provisioner that chooses no value. The
        resolver stores them in `Pool.chosen_labels`, which the placement proof evaluates the pool's node with."""
        ...


@runtime_checkable
class ProvisionerAdoptFace(Protocol):
    """A node provisioner's `adopt`: the pools its objects on a running cluster make, read back as the policy writes
    them, for `policyc import` (which reads pools of named nodes from the nodes themselves); imported only by that
    command."""

    UNSEEN: str
    """What of its pools the cluster does not show, in a few words: the import guesses it or says so (for one that
    reads nothing back, why)."""

    def read_pools(self, source: ClusterSource, keys: LabelKeys) -> PoolsRead:
        """Its pools from the cluster's objects (`keys`: the policy's label keys, whose pool label names a pool):
        nothing for a cluster without its objects, or for a provisioner whose pools the cluster does not show."""
        ...

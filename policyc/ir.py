"""The resolved cluster: the intermediate representation every check and backend reads.

Everything here is concrete: node ranges are expanded, references are objects, `gpu` is the GPU
resource name, defaults are filled in, and lists are sorted by name so that the order of items in the
policy file never changes the output. Each item keeps the document path it came from, for diagnostics
and provenance.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from policyc.diagnostics import Path
from policyc.gpu import dra, mig
from policyc.gpu.accelerators import VENDORS
from policyc.gpu.slurm import PoolSlurm, SlurmSettings
from policyc.k8s.quantity import Quantity
from policyc.k8s.scheduling import label_requirement_matches
from policyc.language.model.base import SchedulerSettings

T = TypeVar("T")

Resources = dict[str, Quantity]
"""Resource name (cpu, memory, nvidia.com/gpu, ...) to quantity, sorted by name."""


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def to_dict(self) -> dict[str, str]:
        out = {"key": self.key}
        if self.value:
            out["value"] = self.value
        out["effect"] = self.effect
        return out

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class ChosenLabel:
    """A label a provisioner sets on each node it makes for a pool, to one value of its choosing: one that meets every
    requirement of `requirements` and the pod the node is made for (so the placement proof asks whether such a value
    exists, not what the value is)."""

    key: str
    requirements: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(operator, values) as a node selector's expressions on `key` say them (In, NotIn, Gt, Lt); none: any value."""

    def __str__(self) -> str:
        said = [f"{op} [{', '.join(values)}]" for op, values in self.requirements]
        return f"{self.key} {' and '.join(said) or 'Exists'}"

    def allows(self, value: str) -> bool:
        """Whether the provisioner may choose `value`: it meets every one of `requirements`."""
        return all(label_requirement_matches(self.key, op, vs, {self.key: value}) for op, vs in self.requirements)


@dataclass(frozen=True, slots=True)
class LabelKeys:
    """The node label and taint keys policyc owns under the policy's domain."""

    domain: str

    @property
    def usage(self) -> str:
        return f"{self.domain}/node.usage"

    @property
    def tier(self) -> str:
        return f"{self.domain}/gpu.tier"

    @property
    def pool(self) -> str:
        return f"{self.domain}/node.pool"

    @property
    def control_plane(self) -> str:
        return f"{self.domain}/control-plane"

    @property
    def tenant(self) -> str:
        return f"{self.domain}/tenant"

    @property
    def slurm_only(self) -> str:
        """The taint of the nodes of Slurm-only pools (`slurm.shared: false`)."""
        return f"{self.domain}/slurm-only"

    @property
    def registration(self) -> str:
        """The taint a node of a pool registers with when nothing taints it as it joins (its kubelet's
        registerWithTaints), until `nodes/release.sh` finds it carrying its pool's taints."""
        return f"{self.domain}/node.registering"

    @property
    def workload_class(self) -> str:
        """The pod label naming the workload class whose placement admission injects."""
        return f"{self.domain}/workload-class"


RDMA_LABEL = "feature.node.kubernetes.io/rdma.capable"
MIG_CONFIG = "nvidia.com/mig.config"
"""The node label naming the MIG manager's layout (a key of its configuration) the node's cards get."""
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
"""The node label naming the device plugin configuration (a key of its ConfigMap) the node uses."""


@dataclass(frozen=True, slots=True)
class Tier:
    name: str
    products: tuple[str, ...]
    path: Path
    resource: str | None = None
    """The extended resource of its accelerators (None: the CPU tier, `policyc.gpu.accelerators.CPU_TIER`)."""
    product_key: str = ""
    """The node label and taint key naming its products (the tier label for the CPU tier)."""
    device_class: str | None = None
    """The DeviceClass its GPUs are claimed by (`policyc.gpu.dra`; None: requested as `resource`)."""


def node_range(fewest: int, most: int) -> str:
    """A number of nodes, or a range of them, as people read it: '16 nodes', '1 node', '0-16 nodes'."""
    return f"{most} node{'s' if most != 1 else ''}" if fewest == most else f"{fewest}-{most} nodes"


@dataclass(frozen=True, slots=True)
class Pool:
    name: str
    usage: str
    tier: str
    product: str
    """For a pool of CPU-only nodes: `accelerators.CPU_TIER`, its tier, which it is tainted with like a GPU pool with
    its product."""
    gpus_per_node: int
    gpu_memory: Quantity | None
    nodes: tuple[str, ...]
    """Its nodes' names, for a provisioner that lists them (`named`); empty for a pool by size."""
    provisioning: str
    """Its node provisioner (a key of `policyc.registry.PROVISIONERS`)."""
    named: bool
    """Whether its nodes are listed by name (its provisioner's `NAMED_NODES`), or it is a pool by size."""
    min_nodes: int
    """The fewest nodes it has (a named pool: all of them)."""
    max_nodes: int
    """The most nodes it may have (a named pool: all of them): what capacity and sizing count."""
    labels: dict[str, str]
    """Every label its provisioning gives each of its nodes (the node script, for named nodes), sorted by key."""
    taints: tuple[Taint, ...]
    """Every taint its provisioning gives each of its nodes, sorted by key."""
    registration_taints: tuple[Taint, ...]
    """What a node of the pool carries as it registers, before its labels: its taints, where its provisioner puts them
    there, else policyc's registration taint (`LabelKeys.registration`)."""
    allocatable: Resources
    gfd: bool
    path: Path
    rdma_resource: str | None = None
    """The extended resource its RDMA device plugin advertises (in `allocatable` too)."""
    sharing: tuple[str, int] | None = None
    """(strategy, replicas) when the device plugin shares each card; `gpus_per_node` then counts the shares."""
    mig: mig.Layout | None = None
    """How its cards are partitioned, if they are; `gpus_per_node` then counts MIG devices (single), or none, with
    each profile's devices in `allocatable` (mixed)."""
    interfaces: tuple[str, ...] = ()
    """Network interfaces NCCL uses on its nodes."""
    resource: str | None = None
    """The extended resource of its accelerators, or for a DRA tier's pool the quota key of its DeviceClass's devices
    (`policyc.gpu.dra`); None: CPU-only nodes."""
    product_key: str = ""
    """The node label and taint key naming its product (its vendor's, `policyc.gpu.accelerators`; the tier label for a
    CPU-only pool)."""
    vendor: str | None = None
    """Who makes its accelerators (a key of `accelerators.VENDORS`)."""
    slurm: PoolSlurm | None = None
    """The Slurm partition its nodes are in (`policyc.gpu.slurm`), if any."""
    provisioning_settings: Any = None
    """Its own block of its provisioner's settings (`nodePools[].<provisioning>`: its `settings.PoolSettings`), if
    the policy states one."""
    chosen_labels: tuple[ChosenLabel, ...] = ()
    """The labels its provisioner sets on each node beside `labels`, to values it chooses as it makes the node (its
    backend's `chosen_labels`), sorted by key."""

    def may_carry(self, key: str, value: str) -> bool:
        """Whether its nodes carry the label `key`=`value`, or its provisioner can make one that does
        (`chosen_labels`)."""
        if key in self.labels:
            return self.labels[key] == value
        return any(label.key == key and label.allows(value) for label in self.chosen_labels)

    @property
    def discovered_product(self) -> bool:
        """Whether the vendor's feature discovery, not policyc, labels its nodes with their product."""
        return self.gfd and self.vendor is not None and VENDORS[self.vendor].product_label is not None

    @property
    def gpus(self) -> int:
        """Its accelerator devices when it has its most nodes."""
        return self.gpus_per_node * self.max_nodes

    @property
    def size(self) -> str:
        """Its size as people read it: '16 nodes', '1 node', '0-16 nodes'."""
        return node_range(self.min_nodes, self.max_nodes)

    @property
    def device_class(self) -> str | None:
        """The DeviceClass its GPUs are claimed by (a pool of a DRA tier), else None."""
        return dra.device_class_of(self.resource) if self.resource and dra.is_devices_key(self.resource) else None


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool
    preemption_policy: str
    description: str | None
    path: Path


@dataclass(frozen=True, slots=True)
class Queue:
    weight: int
    guarantee: Resources
    deserved: Resources
    """The policy's deserved, completed with the guarantee for every guaranteed resource it omits."""
    deserved_given: Resources
    """Only what the policy wrote as deserved."""
    capability: Resources
    reclaimable: bool
    parent: str | None
    priority: int | None


@dataclass(frozen=True, slots=True)
class Quota:
    hard: dict[str, Quantity]
    """ResourceQuota `spec.hard`: requests.*, limits.* and object counts, sorted by key."""
    per_class: dict[str, dict[str, Quantity]] = field(default_factory=dict)
    """Priority class -> `spec.hard` (requests.*) of the ResourceQuota scoped to it, by class name."""


@dataclass(frozen=True, slots=True)
class LimitRange:
    default: Resources
    default_request: Resources
    max: Resources
    min: Resources


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    namespaces: tuple[str, ...]
    allowed_priority_classes: tuple[str, ...] | None
    """Priority classes the policy lets the tenant use (None: it names none, so every class of the policy)."""
    forbidden_priority_classes: tuple[str, ...]
    """Classes of the policy the tenant may not use (its pods naming any class but the allowed ones are refused
    by a zero-pods quota, system classes included)."""
    queue: Queue
    quota: Quota | None
    limit_range: LimitRange | None
    path: Path
    admission: str = "off"
    """What admission does with the tenant's pods that break its placement contract: off, audit, warn or deny."""


def queue_chain(tenant: Tenant, tenants: Mapping[str, Tenant]) -> list[Tenant]:
    """The tenant, then its queue's ancestors, nearest first (a cycle, which the checks report, ends the chain)."""
    chain, seen = [tenant], {tenant.name}
    while (parent := chain[-1].queue.parent) in tenants and parent not in seen:
        seen.add(parent)
        chain.append(tenants[parent])
    return chain


@dataclass(frozen=True, slots=True)
class Prometheus:
    """A KEDA Prometheus trigger: the query's value per pod to aim at."""

    server_address: str
    query: str
    threshold: float
    activation_threshold: float | None


@dataclass(frozen=True, slots=True)
class Autoscale:
    """How an inference Deployment scales (`policyc.backends.autoscaling`)."""

    min: int
    max: int
    cpu: int | None
    """Target average CPU use, percent of the request."""
    metric: tuple[str, Quantity] | None
    """(name, target average value) of a per-pod metric of the custom metrics API."""
    prometheus: Prometheus | None
    path: Path


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    type: str
    tenant: str
    namespace: str
    tier: Tier
    gpus: int
    replicas: int
    kind: str
    priority_class: str | None
    image: str
    cpu: Quantity | None
    """CPU request per pod as the policy states it (None: sized from the nodes, `policyc.pods`)."""
    memory: Quantity | None
    limits: Resources
    """cpu and memory limits per pod the policy states."""
    qos: str
    """Burstable or Guaranteed."""
    placement: str
    """strict: required affinity to its usage and tier; preferred: only a preference."""
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, str], ...]
    """Extra tolerations from the policy, in pod-spec form."""
    path: Path
    namespace_default: bool = False
    """Pods of its namespace that name no class get its placement injected."""
    rdma: int = 0
    """RDMA devices per pod (0: none)."""
    mig_profile: str | None = None
    """The MIG profile of each of its GPUs (None: whole cards)."""
    host_network: bool = False
    shm: Quantity | None = None
    one_per_node: bool = False
    same_zone: bool = False
    min_member: int | None = None
    """Pods placed together before any runs (None: every replica)."""
    elastic: tuple[int, int] | None = None
    """(min, max) workers of an elastic PyTorchJob."""
    autoscale: Autoscale | None = None
    """Its autoscaler, if it has one (its Deployment then leaves replicas to it)."""

    @property
    def gang(self) -> int:
        if self.elastic:
            return self.elastic[0]
        return self.min_member or self.replicas

    @property
    def most_pods(self) -> int:
        """The most pods it runs at once: its replicas, an elastic job's maximum or its autoscaler's."""
        if self.autoscale:
            return self.autoscale.max
        return self.elastic[1] if self.elastic else self.replicas


@dataclass(frozen=True, slots=True)
class NodeAgent:
    """A DaemonSet that must run on the nodes of `pools`."""

    name: str
    namespace: str
    pools: tuple[str, ...]
    tolerations: tuple[dict, ...] | None
    """What its pods carry; None when it is given the tolerations policyc emits."""
    path: Path


@dataclass(frozen=True, slots=True)
class AlertThresholds:
    """What one pool's GPU alerts fire on (None: no alert of that kind)."""

    gpu_temperature: int | None
    memory_temperature: int | None
    memory_used: float | None
    """Fraction of the card's framebuffer."""
    power: float | None
    """Fraction of the card's rated power."""
    low_utilisation: tuple[float, str] | None
    """(percent, window): the average over the window below the percentage."""
    xid_errors: bool
    ecc_or_remap: bool


@dataclass(frozen=True, slots=True)
class AlertRule:
    """A user's own alerting rule (`monitoring.extraRules`)."""

    alert: str
    expr: str
    for_: str | None
    keep_firing_for: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    path: Path


@dataclass(frozen=True, slots=True)
class Monitoring:
    """`spec.monitoring`: the GPU alerts (`policyc.backends.monitoring`)."""

    namespace: str
    labels: dict[str, str]
    for_: str
    node_label: str
    counters: str
    """The DCGM exporter's counter file (a key of `policyc.gpu.promql.COUNTER_SETS`)."""
    extra_counters: dict[str, str]
    """Fields the exporter's file adds -> their Prometheus type."""
    rated_power: dict[str, float]
    """GPU product -> rated power per card in W, as the policy states it (`policyc.backends.monitoring` has a table)."""
    thresholds: dict[str, AlertThresholds]
    """Pool name -> its thresholds (the policy's, with the pool's own over them), for every pool."""
    own_thresholds: tuple[str, ...]
    """The pools the policy gives thresholds of their own (`monitoring.pools`), sorted."""
    extra_rules: tuple[AlertRule, ...]
    path: Path


def once_per_build(compute: Callable[..., T]) -> Callable[..., T]:
    """`compute(cluster, ...)` computed once per build (kept in `Cluster.derived`): for what several stages read.
    Arguments after the cluster must follow from it (its scheduler backend, say): they are not part of the key. The
    result is shared: callers must not change it."""

    @functools.wraps(compute)
    def cached(cluster: Cluster, *args: Any) -> T:
        key = (compute.__module__, compute.__qualname__)
        if key not in cluster.derived:
            cluster.derived[key] = compute(cluster, *args)
        return cluster.derived[key]

    return cached


@dataclass(frozen=True)
class Cluster:
    name: str
    source: str
    """Base name of the policy file, for headers of generated files."""
    kubernetes_version: str
    keys: LabelKeys
    gpu_resource: str
    tiers: tuple[Tier, ...]
    pools: tuple[Pool, ...]
    control_plane_nodes: tuple[str, ...]
    priority_classes: tuple[PriorityClass, ...]
    scheduler: SchedulerSettings
    """`spec.scheduler`: the selected backend's settings model."""
    tenants: tuple[Tenant, ...]
    workloads: tuple[Workload, ...]
    node_agents: tuple[NodeAgent, ...] = ()
    complete: bool = True
    """False when parsing dropped invalid items: totals over the cluster are then not trustworthy."""
    mutating_admission_beta: bool = False
    """The cluster (1.34 or 1.35) serves MutatingAdmissionPolicy v1beta1 (feature gate and API turned on)."""
    keda: bool = False
    """KEDA is installed: autoscaled workloads get a ScaledObject instead of a HorizontalPodAutoscaler."""
    monitoring: Monitoring | None = None
    """The GPU alerts, when the policy asks for them."""
    slurm: SlurmSettings | None = None
    """How Slurm runs, when a pool names a partition (`policyc.gpu.slurm`)."""
    provisioning: Mapping[str, Any] = field(default_factory=dict)
    """Node provisioner -> its settings (`spec.provisioning.<name>`, defaults filled in), for every registered one."""
    derived: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    """What later stages derive from the cluster and several of them read, computed once per build (for
    example each workload's pod contract, `policyc.pods`), keyed by what derives it."""

    @functools.cached_property
    def accelerators(self) -> tuple[str, ...]:
        """The extended resources the pools' accelerators are requested as (the default GPU resource when no pool has
        one), MIG devices under the mixed strategy included, sorted; GPUs of DRA tiers, which pods claim, are not among
        them."""
        requested = {p.resource for p in self.pools if p.resource and not dra.is_devices_key(p.resource)}
        requested |= {r for p in self.pools if p.mig for r in p.mig.resources}
        return tuple(sorted(requested or {self.gpu_resource}))

    @functools.cached_property
    def kubernetes_pools(self) -> tuple[Pool, ...]:
        """The pools whose GPUs Kubernetes pods use: every pool but Slurm's own (`slurm.shared: false`) when slurmd
        runs on the hosts. (Under Slinky slurmd is a pod: its quotas count those GPUs.) Quotas against capacity,
        guarantees and the report's tiers count on these."""
        slinky = self.slurm is not None and self.slurm.operator == "slinky"
        return tuple(p for p in self.pools if p.slurm is None or p.slurm.shared or slinky)

    @functools.cached_property
    def mig_strategy(self) -> str | None:
        """How the device plugin advertises MIG devices, one way for the cluster: `single` (as the pool's GPU
        resource) or `mixed` (`nvidia.com/mig-<profile>`, among `accelerators`); None when no pool has MIG."""
        return next((p.mig.strategy for p in self.pools if p.mig), None)

    @functools.cached_property
    def claimed_devices(self) -> tuple[str, ...]:
        """The quota keys of the DRA tiers' devices (`policyc.gpu.dra`), which pods claim, sorted."""
        return tuple(sorted(t.resource for t in self.tiers if t.device_class and t.resource))

    def accelerator_sources(self) -> dict[str, Path]:
        """Each accelerator resource the policy names, and where: spec.gpuResource, then each pool's own (its MIG
        devices' under the mixed strategy)."""
        out: dict[str, Path] = {self.gpu_resource: ("spec", "gpuResource")}
        for p in self.pools:
            if p.resource and not dra.is_devices_key(p.resource):
                out.setdefault(p.resource, (*p.path, "gpu"))
            for resource in p.mig.resources if p.mig else ():
                out.setdefault(resource, (*p.path, "gpu", "mig"))
        return out

    def workloads_of(self, tenant: str) -> tuple[Workload, ...]:
        """The tenant's workloads, in the policy's order."""
        return self._workloads_by_tenant.get(tenant, ())

    @functools.cached_property
    def _workloads_by_tenant(self) -> dict[str, tuple[Workload, ...]]:
        by_tenant: dict[str, list[Workload]] = {}
        for w in self.workloads:
            by_tenant.setdefault(w.tenant, []).append(w)
        return {tenant: tuple(workloads) for tenant, workloads in by_tenant.items()}

    @functools.cached_property
    def tenants_by_name(self) -> dict[str, Tenant]:
        """Name -> tenant (names are unique: resolve leaves out a repeated one). Shared: callers must not change it."""
        return {t.name: t for t in self.tenants}

    def pool_capacity(self, pool: Pool, resource: str, *, fewest: bool = False) -> Quantity | None:
        """What `pool` has of `resource` in all its nodes (its most nodes; its fewest with `fewest`): its GPUs (none of
        another accelerator), or its allocatable times its nodes; None where the policy does not say."""
        nodes = pool.min_nodes if fewest else pool.max_nodes
        if resource == pool.resource:
            return Quantity.from_value(pool.gpus_per_node * nodes)
        per_node = pool.allocatable.get(resource)
        if per_node is None and (resource in self.accelerators or dra.is_devices_key(resource)):
            return Quantity.from_value(0)
        return None if per_node is None else per_node * nodes

    def capacity(self, pools: Sequence[Pool]) -> dict[str, Quantity]:
        """Resource -> total over `pools`, for the resources every one of them states (accelerators, requested or
        claimed, always)."""
        if not pools:
            return {}
        stated = set.intersection(*(set(p.allocatable) for p in pools)) | {*self.accelerators, *self.claimed_devices}
        return {r: sum((self.pool_capacity(p, r) for p in pools), Quantity.from_value(0)) for r in sorted(stated)}

    def policy_key(self, resource: str) -> str:
        """A resource as policies usually write it ('gpu' for the GPU resource, or a DRA tier's devices), to locate
        diagnostics."""
        usual = resource == self.gpu_resource or self.accelerators == (resource,) or dra.is_devices_key(resource)
        return "gpu" if usual else resource

    def tenant_key(self, tenant: str, resource: str) -> str:
        """How `tenant`'s quota and queue name `resource`: as `policy_key`, but never 'gpu' where that is ambiguous
        for the tenant (its workloads use tiers of several accelerators)."""
        used = {w.tier.resource for w in self.workloads_of(tenant) if w.tier.resource}
        key = self.policy_key(resource)
        return resource if key == "gpu" and len(used) > 1 else key

    @property
    def control_plane_taint(self) -> Taint:
        return Taint(self.keys.control_plane, "", "NoSchedule")

    @property
    def registration_taint(self) -> Taint:
        """The taint a node registers with where nothing taints it as it joins (`LabelKeys.registration`)."""
        return Taint(self.keys.registration, "", "NoSchedule")

    @functools.cached_property
    def named_pools(self) -> tuple[Pool, ...]:
        """The pools whose nodes are listed by name."""
        return tuple(p for p in self.pools if p.named)


@dataclass(frozen=True, eq=False)
class SlurmPartition:
    """A Slurm partition: the pools that name it (at least one), sorted by name; its settings are its first pool's
    (the checks report pools that disagree)."""

    name: str
    pools: tuple[Pool, ...]

    @property
    def settings(self) -> PoolSlurm:
        first = self.pools[0].slurm
        assert first is not None
        return first

    @property
    def nodes(self) -> list[str]:
        return [n for p in self.pools for n in p.nodes]


def slurm_partitions(cluster: Cluster) -> list[SlurmPartition]:
    """The policy's Slurm partitions, sorted by name."""
    by_name: dict[str, list[Pool]] = {}
    for p in cluster.pools:
        if p.slurm is not None:
            by_name.setdefault(p.slurm.partition, []).append(p)
    return [SlurmPartition(name, tuple(pools)) for name, pools in sorted(by_name.items())]

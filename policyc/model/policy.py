"""The policy language, `policyc.io/v1alpha1` `ClusterPolicy`, as strict pydantic models.

Strict means: unknown fields are errors, and values are never coerced between types (``gpus: "8"`` is a
string, not the number 8). Field descriptions become the JSON Schema's descriptions, which editors show
on hover.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, ConfigDict, Discriminator, Field, Tag, model_validator

from policyc.backends import SCHEDULERS, every_settings, settings
from policyc.model.base import Model, SchedulerSettings
from policyc.model.types import (
    GpuProduct,
    KubernetesVersion,
    LabelKey,
    LabelValue,
    Name,
    NodePattern,
    Quantity,
    ResourceMap,
    SubdomainName,
    policy_error,
    user_priority,
)

API_VERSION = "policyc.io/v1alpha1"
KIND = "ClusterPolicy"

Usage = Literal["training", "inference", "hybrid"]
WorkloadType = Literal["training", "inference"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _scheduler_settings() -> Any:
    """`spec.scheduler`: the union of every registered backend's settings, tagged by `backend` (the first backend
    when the field is left out), so that a backend's settings are validated by its own model."""
    names = list(SCHEDULERS)

    def tag(value: Any) -> str | None:
        if isinstance(value, dict):
            backend = value.get("backend", names[0])
            return backend if isinstance(backend, str) else None
        return value.backend if isinstance(value, SchedulerSettings) else names[0]

    members = tuple(Annotated[settings(name).Settings, Tag(name)] for name in names)
    return Annotated[Union[members], Discriminator(tag)]  # noqa: UP007  # a union built at run time


SchedulerField = _scheduler_settings()
WorkloadKind = Literal[tuple(dict.fromkeys(k for module in every_settings() for k in module.WORKLOAD_KINDS))]  # type: ignore[valid-type]
"""Every kind a registered backend runs; a kind the selected one does not run is refused by the checks."""


class Metadata(Model):
    name: Name = Field(description="Name of the policy; recorded in every generated file.")
    description: str | None = Field(None, description="Free text for humans.")


class ControlPlane(Model):
    nodes: list[NodePattern] = Field(
        min_length=1,
        description=(
            "Control-plane node names or ranges (e.g. cp-[1-3]). They get the taint "
            "<domain>/control-plane:NoSchedule so that no workload of the policy lands on them."
        ),
    )


class GpuTier(Model):
    name: Name = Field(description="Tier name, written to the <domain>/gpu.tier node label.")
    products: list[GpuProduct] = Field(
        min_length=1,
        description=(
            "GPU products in this tier, as GPU Feature Discovery names them in nvidia.com/gpu.product "
            "(e.g. NVIDIA-H100-80GB, NVIDIA-L4, Tesla-T4)."
        ),
    )
    description: str | None = Field(None, description="Free text for humans.")
    dra: bool = Field(
        False,
        description=(
            "Allocate the tier's GPUs with Dynamic Resource Allocation (NVIDIA's DRA driver, Kubernetes 1.34 or "
            "later): policyc emits a DeviceClass selecting the tier's products and a ResourceClaimTemplate per "
            "workload, pods claim their GPUs instead of requesting nvidia.com/gpu, and a tenant's quota counts the "
            "tier's GPUs apart from every other model (<tier>.<domain>.deviceclass.resource.k8s.io/devices)."
        ),
    )


class GpuSharing(Model):
    strategy: Literal["time-slicing", "mps"] = Field(
        description="How the device plugin shares a card: time-slicing (turns) or mps (NVIDIA's Multi-Process Service)."
    )
    replicas: int = Field(
        ge=2, le=48, description="Pods that share one card: each node advertises GPUs x replicas of the GPU resource."
    )


class GpuMigCards(Model):
    count: int = Field(ge=1, le=64, description="How many cards take this layout (the next ones by index).")
    devices: dict[str, int] = Field(
        min_length=1, description='MIG devices on each of these cards: profile -> count, e.g. {"3g.40gb": 2}.'
    )


class GpuMig(Model):
    strategy: Literal["single", "mixed"] = Field(
        "single",
        description=(
            "How the device plugin advertises MIG devices: single as the GPU resource (every card one profile), mixed "
            "as nvidia.com/mig-<profile>. One strategy for the cluster (the GPU Operator's mig.strategy)."
        ),
    )
    devices: dict[str, int] | None = Field(
        None,
        min_length=1,
        description='MIG devices on each card, every card alike: profile -> count, e.g. {"1g.10gb": 7}.',
    )
    cards: list[GpuMigCards] | None = Field(
        None,
        min_length=1,
        description=(
            "Instead of devices, a layout per group of cards, the groups taking the node's cards in the order of their "
            "indices; the counts add up to gpu.count."
        ),
    )

    @model_validator(mode="after")
    def _one_layout(self) -> GpuMig:
        if (self.devices is None) == (self.cards is None):
            raise policy_error(
                "invalid-value",
                "gpu.mig takes devices (every card alike) or cards (a layout per group of cards): exactly one",
                hint='write devices: {"1g.10gb": 7}, or cards: [{count: 4, devices: {...}}, {count: 4, ...}]',
            )
        return self


class Gpu(Model):
    vendor: Literal["nvidia", "amd", "intel-gaudi", "huawei-ascend"] = Field(
        "nvidia",
        description=(
            "Who makes the accelerator: decides its resource name, the product label its feature discovery writes "
            "(and policyc taints by), and which node labels the node script checks."
        ),
    )
    resource: LabelKey | None = Field(
        None,
        description=(
            "Extended resource the device plugin advertises for it. Default: spec.gpuResource for nvidia, amd.com/gpu, "
            "habana.ai/gaudi, huawei.com/Ascend910."
        ),
    )
    product: GpuProduct = Field(
        description="Product of every node of the pool, as its feature discovery names it (e.g. NVIDIA-H100-80GB)."
    )
    count: int = Field(ge=1, le=64, description="GPUs (accelerator cards) per node.")
    memory: Quantity | None = Field(None, description="Memory per GPU, e.g. 80Gi.")
    mig: GpuMig | None = Field(
        None,
        description=(
            "Partition every card with MIG: policyc emits the MIG manager's layout and the node label selecting it, "
            "and counts capacity in MIG devices."
        ),
    )
    sharing: GpuSharing | None = Field(
        None,
        description=(
            "Share each card among several pods (NVIDIA device plugin): policyc emits its configuration and the node "
            "label that selects it; capacity, queues and quotas count the shared devices."
        ),
    )


class PoolRdma(Model):
    resource: LabelKey = Field(
        description=(
            "The extended resource the RDMA device plugin advertises, as your site named it (e.g. "
            "rdma/hca_shared_devices_a, rdma/ib); pods of RDMA workloads request it."
        ),
    )
    per_node: int = Field(1, ge=1, le=100_000, description="How many of it a node offers (its allocatable).")
    interfaces: list[Name] = Field(
        default_factory=list,
        description="Network interfaces NCCL uses on these nodes (NCCL_SOCKET_IFNAME in the templates), e.g. [ib0].",
    )


def _rdma_tag(value: Any) -> str:
    return "devices" if isinstance(value, (dict, PoolRdma)) else "flag"


PoolRdmaField = Annotated[
    Union[Annotated[bool, Tag("flag")], Annotated[PoolRdma, Tag("devices")]],  # noqa: UP007  # tagged members
    Discriminator(_rdma_tag),
]
"""`rdma: true`, or the RDMA device plugin's resource: one member by the value's shape, so that a mistake gets
that member's error alone."""


class Elastic(Model):
    min_replicas: int = Field(ge=1, le=100_000, description="Fewest workers the job runs with (and its gang).")
    max_replicas: int = Field(ge=1, le=100_000, description="Most workers the job grows to.")


class Taint(Model):
    key: LabelKey = Field(description="Taint key.")
    value: LabelValue = Field("", description="Taint value (may be empty).")
    effect: TaintEffect = Field(description="NoSchedule, PreferNoSchedule or NoExecute.")


class Toleration(Model):
    """A toleration as in a pod spec (policyc writes the ones a workload needs; these are extra)."""

    key: LabelKey | None = Field(None, description="Taint key; empty with operator Exists tolerates every taint.")
    operator: Literal["Equal", "Exists"] = Field("Equal", description="Equal (key and value) or Exists (key only).")
    value: LabelValue | None = Field(None, description="Taint value, for operator Equal.")
    effect: TaintEffect | None = Field(None, description="Effect to tolerate; empty tolerates every effect.")

    @model_validator(mode="after")
    def _consistent(self) -> Toleration:
        if self.operator == "Exists" and self.value:
            raise policy_error(
                "invalid-value",
                "a toleration with operator Exists takes no value",
                hint="remove the value, or use operator Equal",
            )
        if not self.key and self.operator != "Exists":
            raise policy_error(
                "invalid-value",
                "a toleration without a key must use operator Exists",
                hint="add the taint key, or set operator: Exists to tolerate every taint",
            )
        return self


class NodePool(Model):
    name: Name = Field(description="Pool name, written to the <domain>/node.pool node label.")
    usage: Usage = Field(description=("training, inference, or hybrid (the overflow pool both kinds of work may use)."))
    nodes: list[NodePattern] = Field(
        min_length=1,
        description=("Node names, or ranges with zero-padded bounds such as gpu-node-[01-16] or l4-[001-040]."),
    )
    gpu: Gpu | None = Field(
        None, description="The GPUs (accelerators) every node of the pool has; omit for a pool of CPU-only nodes."
    )
    allocatable: ResourceMap = Field(
        default_factory=dict,
        description=("Allocatable resources per node (cpu, memory, ...), used for capacity checks."),
    )
    rdma: PoolRdmaField = Field(
        False,
        description=(
            "Nodes have RDMA: label feature.node.kubernetes.io/rdma.capable=true; with its device plugin's "
            "resource, RDMA workloads request it here."
        ),
    )
    gpu_feature_discovery: bool = Field(
        True,
        description=(
            "GPU Feature Discovery runs on these nodes and owns the nvidia.com/gpu.* labels: the node script "
            "checks them instead of setting them. Set false when the cluster has no GFD."
        ),
    )
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description=("Extra labels for every node of the pool (not under the policy's domain).")
    )
    taints: list[Taint] = Field(
        default_factory=list,
        description=(
            "Extra taints for every node of the pool (not under the policy's domain). Workloads do not "
            "tolerate them unless they say so."
        ),
    )
    description: str | None = Field(None, description="Free text for humans.")


class PriorityClass(Model):
    name: SubdomainName = Field(description="PriorityClass name (the 'system-' prefix is reserved).")
    value: Annotated[int, AfterValidator(user_priority)] = Field(
        ge=-2_147_483_648,
        description="Priority value; higher runs first. At most 1000000000 for user classes.",
    )
    global_default: bool = Field(
        False, description=("Pods without a priorityClassName get this class. At most one class may be the default.")
    )
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = Field(
        "PreemptLowerPriority", description="Never: pods of this class wait instead of preempting others."
    )
    description: str | None = Field(None, description="Shown by kubectl describe priorityclass.")


class Queue(Model):
    weight: int = Field(1, ge=1, le=65535, description="Share of idle capacity (proportion plugin).")
    guarantee: ResourceMap = Field(
        default_factory=dict, description=("Resources reserved for this queue that other queues can never use.")
    )
    deserved: ResourceMap | None = Field(
        None,
        description=(
            "Fair share (capacity plugin); defaults to the guarantee. Must be >= guarantee and <= capability."
        ),
    )
    capability: ResourceMap = Field(default_factory=dict, description="Hard cap on what the queue may use.")
    reclaimable: bool = Field(True, description="Whether other queues may reclaim what this queue borrowed.")
    parent: Name | None = Field(
        None, description=("Tenant whose queue is this queue's parent (hierarchical queues; capacity plugin only).")
    )
    priority: int | None = Field(
        None, ge=0, le=2_147_483_647, description=("Queue priority: higher queues are served first and reclaimed last.")
    )


class Quota(Model):
    requests: ResourceMap = Field(
        default_factory=dict,
        description=("Caps on the sum of requests per namespace (requests.<resource>); 'gpu' is the GPU resource."),
    )
    limits: ResourceMap = Field(
        default_factory=dict,
        description=(
            "Caps on the sum of limits per namespace (limits.<resource>); not allowed for GPUs and other "
            "extended resources, which Kubernetes quotas only by requests."
        ),
    )
    objects: dict[str, Quantity] = Field(
        default_factory=dict, description=("Object counts per namespace, e.g. pods: 200, count/jobs.batch: 50.")
    )
    per_priority_class: dict[str, ResourceMap] = Field(
        default_factory=dict,
        description=(
            "Caps on the sum of requests of the pods of one priority class, per namespace (a ResourceQuota scoped "
            "to that class), e.g. {slurm-high-priority: {gpu: 64}}; each within quota.requests where that is set."
        ),
    )


class LimitRange(Model):
    default: ResourceMap = Field(default_factory=dict, description="Default container limits.")
    default_request: ResourceMap = Field(default_factory=dict, description="Default container requests.")
    max: ResourceMap = Field(default_factory=dict, description="Largest container limits allowed.")
    min: ResourceMap = Field(default_factory=dict, description="Smallest container requests allowed.")


AdmissionMode = Literal["off", "audit", "warn", "deny"]
_MODE_HELP = (
    "What the API server does with a pod or workload that breaks the tenant's placement contract (ValidatingAdmission"
    "Policy): deny refuses it, warn admits it with a warning to the client, audit only records it in the audit "
    "log, off emits no policy."
)


class Admission(Model):
    mode: AdmissionMode = Field(
        "warn", description=_MODE_HELP + " Default warn (Kubernetes 1.30 and later; off before)."
    )
    mutating_admission_policy_beta: bool = Field(
        False,
        description=(
            "The cluster runs Kubernetes 1.34 or 1.35 with the MutatingAdmissionPolicy feature gate and the "
            "admissionregistration.k8s.io/v1beta1 API turned on: inject workload classes with v1beta1 (from 1.36 "
            "policyc injects with v1, on by default there)."
        ),
    )


class TenantAdmission(Model):
    mode: AdmissionMode = Field(description=_MODE_HELP + " Overrides spec.admission.mode for this tenant.")


class Tenant(Model):
    name: Name = Field(description="Tenant name; also the name of its scheduler queue.")
    namespaces: list[Name] = Field(min_length=1, description="Namespaces the tenant owns.")
    priority_classes: list[str] | None = Field(
        None,
        min_length=1,
        description=(
            "Priority classes the tenant may use; pods naming any other class (system-node-critical and "
            "system-cluster-critical included), or no class when no class is globalDefault, are refused by a "
            "zero-pods quota. Omit to allow every class of the policy (and pods naming none)."
        ),
    )
    queue: Queue = Field(default_factory=Queue, description="The tenant's scheduler queue.")
    quota: Quota | None = Field(None, description="ResourceQuota applied to each of the tenant's namespaces.")
    limit_range: LimitRange | None = Field(
        None, description=("LimitRange (container defaults and bounds) for each of the tenant's namespaces.")
    )
    admission: TenantAdmission | None = Field(None, description="This tenant's admission mode.")
    description: str | None = Field(None, description="Free text for humans.")


class PodLimits(Model):
    cpu: Quantity | None = Field(None, description="CPU limit per pod.")
    memory: Quantity | None = Field(None, description="Memory limit per pod.")


class Workload(Model):
    name: Name = Field(description="Workload class name; the template file is templates/<name>.yaml.")
    type: WorkloadType = Field(description="training or inference: decides which pools it may use.")
    tenant: str = Field(description="Tenant that runs it.")
    namespace: str | None = Field(None, description="One of the tenant's namespaces; defaults to the first.")
    gpu_tier: str | None = Field(
        None, description="GPU tier it must run on. Omit (with gpus) for CPU-only work, which runs on CPU pools."
    )
    gpus: int | None = Field(None, ge=1, le=64, description="GPUs per pod (of its tier's resource).")
    replicas: int = Field(1, ge=1, le=100_000, description="Pods (workers) per job or deployment.")
    kind: WorkloadKind | None = Field(
        None,
        description=(
            "Object to template: Job (batch/v1), Deployment, PyTorchJob (kubeflow.org/v1), or a kind of the "
            "scheduler backend. Defaults to the backend's kind for training and "
            "Deployment for inference."
        ),
    )
    priority_class: str | None = Field(None, description="Priority class of its pods.")
    image: str | None = Field(None, min_length=1, description="Container image for the template.")
    cpu: Quantity | None = Field(
        None,
        description=(
            "CPU request per pod. Default: the pod's share of a node by its GPUs (allocatable x gpus / GPUs per "
            "node) on the smallest pool it can use, less a tenth for node agents, rounded down to whole CPUs."
        ),
    )
    memory: Quantity | None = Field(
        None,
        description=(
            "Memory request per pod. Default: the pod's share of a node by its GPUs on the smallest pool it can "
            "use, less a tenth for node agents, rounded down to whole GiB."
        ),
    )
    limits: PodLimits = Field(
        default_factory=lambda: PodLimits(),
        description=(
            "CPU and memory limits per pod. Default: equal to the requests with qos Guaranteed; otherwise memory "
            "equal to its request and cpu the pod's whole share of a node (at least the request)."
        ),
    )
    qos: Literal["Burstable", "Guaranteed"] = Field(
        "Burstable",
        description=(
            "Guaranteed: limits equal requests (Kubernetes' Guaranteed QoS class: exclusive CPUs under the static "
            "CPU manager, evicted last). Burstable: the pod may use idle CPU of its node up to its limit."
        ),
    )
    placement: Literal["strict", "preferred"] = Field(
        "strict",
        description=(
            "strict: the pods require a pool of their usage (or hybrid) and tier. preferred: they only prefer "
            "one, and taints alone keep them off other pools. policyc proves either way that they cannot land "
            "on a pool of the other usage or another tier."
        ),
    )
    node_selector: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description="Extra node labels the pods require (e.g. a zone)."
    )
    tolerations: list[Toleration] = Field(
        default_factory=list, description="Extra tolerations, e.g. for a pool's own taints."
    )
    mig_profile: str | None = Field(
        None,
        pattern=r"^[0-9]+g\.[0-9]+gb$",
        description=(
            "Each GPU of the pod is a MIG device of this profile (e.g. 1g.10gb): the pods land only on pools whose "
            "cards have it (MIG strategy single), and workloads without one never on MIG pools."
        ),
    )
    rdma: int | None = Field(
        None,
        ge=1,
        le=64,
        description=(
            "RDMA devices per pod: the pods require nodes with RDMA and request the pools' RDMA resource (and the "
            "IPC_LOCK capability); NCCL_SOCKET_IFNAME names the pools' interfaces."
        ),
    )
    host_network: bool = Field(False, description="Pods use the node's network (and ClusterFirstWithHostNet DNS).")
    shm: Quantity | None = Field(
        None,
        description=(
            "Size of a memory-backed /dev/shm for each pod (NCCL and data loaders need more than the 64Mi default); "
            "it counts against the pod's memory limit."
        ),
    )
    one_per_node: bool = Field(
        False, description="At most one pod of the workload per node (required pod anti-affinity on the hostname)."
    )
    same_zone: bool = Field(
        False,
        description="All pods of the workload in one zone (required pod affinity on topology.kubernetes.io/zone).",
    )
    min_member: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="Pods the gang scheduler must place together before any runs; default: replicas.",
    )
    elastic: Elastic | None = Field(
        None,
        description=(
            "An elastic PyTorchJob: workers only (c10d rendezvous), between minReplicas and maxReplicas; replicas "
            "is how many it starts with. Its pools and queue must hold maxReplicas pods."
        ),
    )
    namespace_default: bool = Field(
        False,
        description=(
            "Pods in the workload's namespace that name no workload class get this class's placement injected "
            "(where the API server has MutatingAdmissionPolicy). At most one class per namespace."
        ),
    )


class NodeAgent(Model):
    """A DaemonSet that must run on the GPU nodes (device plugin, feature discovery, exporters ...)."""

    name: SubdomainName = Field(description="The DaemonSet's name.")
    namespace: Name = Field(description="The DaemonSet's namespace.")
    pools: list[Name] | None = Field(
        None, min_length=1, description="Pools whose nodes it must run on. Default: every pool."
    )
    tolerations: list[Toleration] | None = Field(
        None,
        description=(
            "The tolerations its pods carry today; policyc proves they tolerate every taint of those nodes. Omit "
            "when the agent is given the tolerations policyc emits (nodes/agent-tolerations.yaml; the GPU "
            "Operator's through nodes/gpu-operator-values.yaml)."
        ),
    )


class Spec(Model):
    kubernetes_version: KubernetesVersion = Field(
        description='Kubernetes minor version (e.g. "1.33") whose API schemas verify the output.'
    )
    domain: SubdomainName = Field(
        description=("DNS prefix of the node labels and taints policyc owns, e.g. ai.example.com.")
    )
    gpu_resource: LabelKey = Field(
        "nvidia.com/gpu", description=("Extended resource name of a GPU; 'gpu' in resource maps stands for it.")
    )
    control_plane: ControlPlane | None = Field(None, description="Control-plane nodes to keep workloads off.")
    # "At least one" is checked when resolving (not here), so that a policy whose only pool is invalid
    # still gets every other diagnostic; the schema still says minItems for editors.
    gpu_tiers: list[GpuTier] = Field(
        json_schema_extra={"minItems": 1}, description="GPU tiers, each a set of GPU products."
    )
    node_pools: list[NodePool] = Field(
        json_schema_extra={"minItems": 1}, description="Node pools: nodes of one GPU product and usage."
    )
    priority_classes: list[PriorityClass] = Field(default_factory=list, description="PriorityClasses to create.")
    scheduler: SchedulerField = Field(
        default_factory=lambda: settings(next(iter(SCHEDULERS))).Settings(),
        description="The batch scheduler the policy compiles for (backend) and its settings.",
    )
    admission: Admission | None = Field(
        None,
        description=(
            "Enforce each tenant's placement contract at admission: which pools its pods may tolerate, no "
            "wildcard toleration, no spec.nodeName, its priority classes, scheduler and queue."
        ),
    )
    tenants: list[Tenant] = Field(default_factory=list, description="Teams sharing the cluster.")
    workloads: list[Workload] = Field(
        default_factory=list,
        description=("Workload classes; each becomes a template carrying the right affinity and tolerations."),
    )
    node_agents: list[NodeAgent] | None = Field(
        None,
        description=(
            "DaemonSets that must run on the GPU nodes despite policyc's taints. Default: the GPU Operator's (driver, "
            "container toolkit, device plugin, GPU Feature Discovery, DCGM exporter, MIG manager, validator) and "
            "node-feature-discovery's worker, all given the tolerations policyc emits."
        ),
    )


class ClusterPolicy(Model):
    """A policyc cluster policy: pools, tiers, tenants, priorities and workload classes of one GPU cluster."""

    model_config = ConfigDict(title="ClusterPolicy")

    api_version: Literal["policyc.io/v1alpha1"] = Field(description="Always policyc.io/v1alpha1.")
    kind: Literal["ClusterPolicy"] = Field(description="Always ClusterPolicy.")
    metadata: Metadata
    spec: Spec

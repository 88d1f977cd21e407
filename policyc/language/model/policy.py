"""The policy language, `policyc.io/v1alpha1` `ClusterPolicy`, as strict pydantic models.

Strict means: unknown fields are errors, and values are never coerced between types (``gpus: "8"`` is a
string, not the number 8). Field descriptions become the JSON Schema's descriptions, which editors show
on hover.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    Tag,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)

from policyc.diagnostics import describe_value
from policyc.language.model.base import Model, SchedulerSettings
from policyc.language.model.types import (
    GpuProduct,
    KubernetesVersion,
    LabelKey,
    LabelValue,
    Name,
    NodePattern,
    Quantity,
    ResourceMap,
    SubdomainName,
    Why,
    policy_error,
    user_priority,
)
from policyc.registry import PROVISIONERS, SCHEDULERS, every_settings, provisioner_settings, settings

API_VERSION = "policyc.io/v1alpha1"
KIND = "ClusterPolicy"

Usage = Literal["training", "inference", "hybrid"]
WorkloadType = Literal["training", "inference"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

MAX_PODS = ("policyc checks workloads of at most 100,000 pods", "write 100000 or less")
"""The `Why` of a number of pods above policyc's bound."""
MIG_DEVICES = ("a MIG layout has at least one device", 'write profile: count, e.g. {"1g.10gb": 7}')


def _as_mig_profile(value: str) -> str | None:
    """A MIG profile written otherwise: '1g-10gb', '1G.10GB', '1g.10 gb' -> '1g.10gb'."""
    match = re.fullmatch(r"\s*([0-9]+)\s*g\W*([0-9]+)\s*gb\s*", value, re.IGNORECASE)
    return f"{match[1]}g.{match[2]}gb" if match else None


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


def _with_types(model: type[Model], **types: Any) -> Any:
    """A subclass of `model` whose fields `types` names have these types, each of its own fields keeping its
    description, default and constraints; a (type, field) pair is a new field."""
    fields = {name: tp if isinstance(tp, tuple) else (tp, model.model_fields[name]) for name, tp in types.items()}
    return create_model(model.__name__, __base__=model, __doc__=model.__doc__, **fields)


def _provisioning_settings(names: Any) -> Any:
    """`spec.provisioning`: the default provisioner (one of `names`), and a block of settings per registered
    provisioner (its `settings.Settings`), each optional."""
    blocks: dict[str, Any] = {
        name: (
            provisioner_settings(name).Settings | None,
            Field(None, description=provisioner_settings(name).Settings.__doc__),
        )
        for name in PROVISIONERS
    }
    return _with_types(Provisioning, default=names, **blocks)


def _node_pool(names: Any) -> Any:
    """`nodePools[]`: a pool, its provisioning one of `names`, with a block of its own settings for each registered
    provisioner that has some (its `settings.PoolSettings`), under the provisioner's name."""
    blocks: dict[str, Any] = {
        name: (
            module.PoolSettings | None,
            Field(None, description=f"{module.PoolSettings.__doc__} (a pool whose provisioning is {name})."),
        )
        for name in PROVISIONERS
        if (module := provisioner_settings(name)).PoolSettings is not None
    }
    return _with_types(NodePool, provisioning=names | None, **blocks)


def _workload_kinds() -> Any:
    """`workloads[].kind`: every kind a registered backend runs; one the selected backend does not run is refused by
    the checks."""
    return Literal[tuple(dict.fromkeys(k for module in every_settings() for k in module.WORKLOAD_KINDS))]


class Metadata(Model):
    name: Name = Field(description="Name of the policy; recorded in every generated file.")
    description: str | None = Field(None, description="Free text for humans.")


class ControlPlane(Model):
    nodes: Annotated[
        list[NodePattern],
        Why(
            low=(
                "a control plane has at least one node",
                "list its nodes, e.g. [cp-1, cp-2, cp-3], or remove controlPlane",
            )
        ),
    ] = Field(
        min_length=1,
        description=(
            "Control-plane node names or ranges (e.g. cp-[1-3]). They get the taint "
            "<domain>/control-plane:NoSchedule so that no workload of the policy lands on them."
        ),
    )


class GpuTier(Model):
    name: Name = Field(description="Tier name, written to the <domain>/gpu.tier node label.")
    products: Annotated[
        list[GpuProduct],
        Why(
            low=(
                "a tier groups at least one GPU product",
                "list its products as GPU Feature Discovery names them, e.g. [NVIDIA-H100-80GB]",
            )
        ),
    ] = Field(
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
    replicas: Annotated[
        int,
        Why(
            low=(
                "replicas is how many pods share one card, and one pod alone is not sharing",
                "write 2 or more, or remove sharing to give pods whole cards",
            ),
            high=("at most 48 pods share a card (NVIDIA's MPS serves 48 clients a card)", "write 48 or less"),
        ),
    ] = Field(
        ge=2, le=48, description="Pods that share one card: each node advertises GPUs x replicas of the GPU resource."
    )


class GpuMigCards(Model):
    count: Annotated[
        int,
        Why(
            low=("a layout is for at least one card", "write how many cards take it, or remove this group"),
            high=("a node holds at most 64 cards (as gpu.count)", "write 64 or less"),
        ),
    ] = Field(ge=1, le=64, description="How many cards take this layout (the next ones by index).")
    devices: Annotated[dict[str, int], Why(low=MIG_DEVICES)] = Field(
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
    devices: Annotated[dict[str, int] | None, Why(low=MIG_DEVICES)] = Field(
        None,
        min_length=1,
        description='MIG devices on each card, every card alike: profile -> count, e.g. {"1g.10gb": 7}.',
    )
    cards: Annotated[
        list[GpuMigCards] | None,
        Why(
            low=(
                "cards lists at least one group of cards",
                "write cards: [{count: 8, devices: {...}}], or use devices for every card alike",
            )
        ),
    ] = Field(
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
    count: Annotated[
        int,
        Why(
            low=(
                "a pool with GPUs has at least one on each node",
                "write the GPUs of one node, or remove gpu for a pool of CPU-only nodes",
            ),
            high=("no node holds more than 64 GPUs", "write the GPUs of one node, 64 or less"),
        ),
    ] = Field(ge=1, le=64, description="GPUs (accelerator cards) per node.")
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
    per_node: Annotated[
        int,
        Why(
            low=(
                "a node with RDMA offers at least one device",
                "write how many its device plugin advertises, or remove rdma",
            ),
            high=("no RDMA device plugin offers more than 100,000 a node", "write the node's allocatable of it"),
        ),
    ] = Field(1, ge=1, le=100_000, description="How many of it a node offers (its allocatable).")
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
    min_replicas: Annotated[
        int, Why(low=("an elastic job runs with at least one worker", "write 1 or more"), high=MAX_PODS)
    ] = Field(ge=1, le=100_000, description="Fewest workers the job runs with (and its gang).")
    max_replicas: Annotated[
        int, Why(low=("an elastic job grows to at least one worker", "write 1 or more"), high=MAX_PODS)
    ] = Field(ge=1, le=100_000, description="Most workers the job grows to.")


_METRIC_NAME = r"^[A-Za-z_:][A-Za-z0-9_:.-]*$"
_SERVER_ADDRESS = r"^https?://[^\s/?#]+(/[^\s?#]*)?$"


def _matching(pattern: str, what: str, example: str) -> Any:
    """A validator of a string against `pattern` (also the field's JSON Schema pattern), with a plain message."""

    def validate(value: str) -> str:
        if not re.fullmatch(pattern, value):
            raise policy_error("invalid-value", f"'{value}' is not {what}", hint=f"e.g. {example}")
        return value

    return AfterValidator(validate)


class AutoscaleMetric(Model):
    name: Annotated[
        str,
        _matching(_METRIC_NAME, "a metric name", "vllm_num_requests_waiting"),
        Why(
            high=(
                "a metric's name is at most 253 characters here",
                "write the name the custom metrics API serves it by",
            )
        ),
    ] = Field(
        max_length=253,
        json_schema_extra={"pattern": _METRIC_NAME},
        description="A per-pod metric of the custom metrics API (e.g. served by prometheus-adapter), by its name.",
    )
    average_value: Quantity = Field(
        description="Its target average over the pods (a quantity above zero): the autoscaler adds pods above it."
    )

    @field_validator("average_value")
    @classmethod
    def _positive(cls, value: Any) -> Any:
        if value.is_zero():
            raise policy_error("invalid-value", "averageValue must be above zero", hint="e.g. averageValue: 5")
        return value


class AutoscalePrometheus(Model):
    server_address: Annotated[
        str,
        _matching(_SERVER_ADDRESS, "an http(s) URL", "http://prometheus.monitoring:9090"),
        Why(
            high=(
                "a server's address is at most 2048 characters",
                "write its base URL, e.g. http://prometheus.monitoring:9090",
            )
        ),
    ] = Field(
        max_length=2048,
        json_schema_extra={"pattern": _SERVER_ADDRESS},
        description="The Prometheus (or Thanos) server KEDA queries, e.g. http://prometheus.monitoring:9090.",
    )
    query: Annotated[
        str,
        Why(
            low=(
                "an empty query gives the autoscaler no value to scale on",
                "write a PromQL query returning one number, e.g. sum(vllm:num_requests_waiting)",
            ),
            high=(
                "a query is at most 16,384 characters",
                "move its logic into a recording rule, and query the rule's series",
            ),
        ),
    ] = Field(
        min_length=1,
        max_length=16384,
        description="A PromQL query returning one value for the whole workload, e.g. its waiting requests.",
    )
    threshold: Annotated[
        float,
        Why(
            low=(
                "KEDA divides the query's value by the threshold to count pods, so it is above 0",
                "write the value one pod handles, e.g. 10",
            )
        ),
    ] = Field(
        gt=0,
        allow_inf_nan=False,
        description="The query's value per pod the autoscaler aims at (KEDA's AverageValue target): pods = value / "
        "threshold, rounded up.",
    )
    activation_threshold: float | None = Field(
        None,
        allow_inf_nan=False,
        description="With min 0: KEDA scales from zero when the query's value is above it (default 0).",
    )


class Autoscale(Model):
    min: Annotated[
        int,
        Why(low=("a workload has 0 pods at the fewest", "write 0 (scale to zero, with KEDA) or more"), high=MAX_PODS),
    ] = Field(
        ge=0,
        le=100_000,
        description="Fewest pods. 0 (scale to zero when idle) needs KEDA and a prometheus trigger: the "
        "HorizontalPodAutoscaler's own scale to zero is behind an alpha feature gate.",
    )
    max: Annotated[
        int,
        Why(
            low=("an autoscaler needs room for at least one pod", "write 1 or more, at least autoscale.min"),
            high=MAX_PODS,
        ),
    ] = Field(
        ge=1,
        le=100_000,
        description="Most pods: policyc checks that this many fit the tenant's quota, its queue and the pools.",
    )
    cpu: Annotated[
        int | None,
        Why(
            low=(
                "the CPU target is a percentage of the pods' cpu request, above 0",
                "write the use to aim at, e.g. 70",
            ),
            high=(
                "the HorizontalPodAutoscaler's averageUtilization is a 32-bit integer",
                "write a percentage, e.g. 70",
            ),
        ),
    ] = Field(
        None,
        ge=1,
        le=2_147_483_647,
        description="Target average CPU use, in percent of the pods' cpu request (e.g. 70); at most the limit's "
        "share of the request, which is all a pod can use.",
    )
    metric: AutoscaleMetric | None = Field(
        None, description="A per-pod metric of the custom metrics API (HorizontalPodAutoscaler only)."
    )
    prometheus: AutoscalePrometheus | None = Field(
        None, description="A Prometheus query (KEDA only: spec.autoscaling.keda)."
    )


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


def _slurm_time(value: str) -> str:
    from policyc.gpu import slurm

    try:
        slurm.minutes(value)
    except slurm.TimeError as e:
        raise policy_error("invalid-value", str(e), hint='e.g. maxTime: "7-00:00:00" (7 days), "12:00:00" or '
                           "UNLIMITED") from None  # fmt: skip
    return value


class PoolSlurm(Model):
    """The pool's nodes in a Slurm partition: slurm.conf lines, or a Slinky NodeSet (spec.slurm.operator)."""

    partition: Name = Field(
        description="The Slurm partition the nodes are in; pools naming one partition share it (its Nodes are theirs)."
    )
    default: bool = Field(False, description="Jobs that name no partition run in this one (Default=YES); one at most.")
    max_time: Annotated[str, AfterValidator(_slurm_time)] = Field(
        "UNLIMITED",
        description=(
            "Longest run time of a job (MaxTime): minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
            'days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED; e.g. "7-00:00:00".'
        ),
    )
    priority_class: str | None = Field(
        None,
        description=(
            "A priority class of the policy: the partition's PriorityTier is its value (clamped to 0..65533), and "
            "Slinky's slurmd pods carry it; a tenant's quota.perPriorityClass for it must fit the partition's GPUs."
        ),
    )
    shared: bool = Field(
        False,
        description=(
            "true: Kubernetes workloads of the pool's usage may use the nodes too. false (Slurm-only): the nodes are "
            "tainted <domain>/slurm-only:NoSchedule, which no workload template tolerates."
        ),
    )
    gres_type: Annotated[
        str | None,
        Why(
            shape=(
                "a GRES type (Gres=gpu:<type>:<count>) is lower-case letters, digits, '.' and '_', not first . or _",
                "write e.g. h100, or remove gresType for the product's model word",
            ),
            high=("a GRES type is at most 63 characters", "write the card's short name, e.g. h100"),
            suggest=lambda value: re.sub(r"[^a-z0-9._]", "", value.lower()).lstrip("._") or None,
        ),
    ] = Field(
        None,
        pattern=r"^[a-z0-9][a-z0-9._]*$",
        max_length=63,
        description=(
            "The GRES type of the pool's GPUs (Gres=gpu:<type>:<count>). Default: the product's model word in lower "
            "case (NVIDIA-H100-80GB -> h100), a substring of the name Slurm's GPU autodetection gives the card."
        ),
    )

    @model_validator(mode="after")
    def _not_default(self) -> PoolSlurm:
        if self.partition == "default":
            raise policy_error(
                "invalid-value",
                "Slurm reads a partition named 'default' as the defaults of the partitions that follow, not as one",
                hint="name the partition otherwise, and set default: true to make it the default partition",
            )
        return self


class SlurmSettings(Model):
    operator: Literal["none", "slinky"] = Field(
        "none",
        description=(
            "none: slurmd runs on the nodes, and policyc writes slurm/slurm.conf (a fragment to include) and "
            "slurm/gres.conf. slinky: Slinky's slurm-operator runs slurmd in pods, and policyc writes a NodeSet "
            "(slinky.slurm.net/v1beta1) per partition."
        ),
    )
    namespace: Name = Field(
        "slurm",
        description="Namespace of Slinky's Controller (and of the NodeSets); its slurm chart creates it.",
    )
    controller: Name = Field("slurm", description="Name of Slinky's Controller (the slurm chart's release name).")


class NodePool(Model):
    """A pool of nodes of one GPU product and usage: how they come to be (provisioning), how many, what they have."""

    name: Name = Field(description="Pool name, written to the <domain>/node.pool node label.")
    usage: Usage = Field(description=("training, inference, or hybrid (the overflow pool both kinds of work may use)."))
    provisioning: ProvisionerName | None = Field(  # noqa: F821  # the type policy_model() gives it
        None,
        description=(
            "How the pool's nodes come to be and get its labels and taints: static (nodes listed by name, labelled "
            "by nodes/apply.sh and NodeFeatureRules), or another registered provisioner (pools by size). Default: "
            "spec.provisioning.default."
        ),
    )
    nodes: Annotated[
        list[NodePattern] | None,
        Why(
            low=(
                "a pool has at least one node",
                "list its nodes or ranges, e.g. [gpu-node-[01-16]], or remove the pool",
            )
        ),
    ] = Field(
        None,
        min_length=1,
        description=(
            "Node names, or ranges with zero-padded bounds such as gpu-node-[01-16] or l4-[001-040]: the nodes of a "
            "static pool (other pools state their size instead)."
        ),
    )
    count: Annotated[int | None, Why(low=("a pool has at least one node", "write 1 or more"))] = Field(
        None, ge=1, description="How many nodes a pool by size has, always (instead of minNodes and maxNodes)."
    )
    min_nodes: Annotated[
        int | None, Why(low=("a pool cannot have fewer than 0 nodes", "write 0 to let it scale to none"))
    ] = Field(None, ge=0, description="The fewest nodes a pool by size has (default 0): what guarantees can count on.")
    max_nodes: Annotated[int | None, Why(low=("a pool has at least one node", "write 1 or more"))] = Field(
        None, ge=1, description="The most nodes a pool by size may have: what capacity and sizing count."
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
    slurm: PoolSlurm | None = Field(None, description="Put the pool's nodes in a Slurm partition (spec.slurm).")
    description: str | None = Field(None, description="Free text for humans.")


class PriorityClass(Model):
    name: SubdomainName = Field(description="PriorityClass name (the 'system-' prefix is reserved).")
    value: Annotated[
        int,
        AfterValidator(user_priority),
        Why(
            low=(
                "a PriorityClass's value is a 32-bit integer, -2,147,483,648 at the least",
                "write -2147483648 or more",
            )
        ),
    ] = Field(
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
    weight: Annotated[
        int,
        Why(
            low=(
                "a queue's weight is its share of idle capacity, 1 at the least",
                "write 1 or more (1 is the default)",
            ),
            high=("a queue's weight is at most 65535, as the schedulers' queues take it", "write 65535 or less"),
        ),
    ] = Field(1, ge=1, le=65535, description="Share of idle capacity (proportion plugin).")
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
    priority: Annotated[
        int | None,
        Why(
            low=("a queue's priority is 0 or more (the lowest is served last)", "write 0 or more"),
            high=("a queue's priority is a 32-bit integer", "write 2147483647 or less"),
        ),
    ] = Field(
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
    mode: AdmissionMode | None = Field(
        None,
        description=_MODE_HELP + " Default: warn from Kubernetes 1.30 (ValidatingAdmissionPolicy v1), off before.",
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
    namespaces: Annotated[
        list[Name],
        Why(low=("a tenant owns at least one namespace, where its pods and quotas live", "list them, e.g. [ml]")),
    ] = Field(min_length=1, description="Namespaces the tenant owns.")
    priority_classes: Annotated[
        list[str] | None,
        Why(
            low=(
                "an empty list would refuse every pod of the tenant",
                "list the classes it may use, or remove priorityClasses to allow every class",
            )
        ),
    ] = Field(
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
    gpus: Annotated[
        int | None,
        Why(
            low=(
                "a pod of a GPU workload takes at least one GPU",
                "write 1 or more, or remove gpus and gpuTier for CPU-only work",
            ),
            high=(
                "no node holds more than 64 GPUs, so no pod gets more",
                "write the GPUs of one pod, 64 or less; replicas spreads a job over nodes",
            ),
        ),
    ] = Field(None, ge=1, le=64, description="GPUs per pod (of its tier's resource).")
    replicas: Annotated[
        int, Why(low=("a workload runs at least one pod", "write 1 or more, or remove the workload"), high=MAX_PODS)
    ] = Field(1, ge=1, le=100_000, description="Pods (workers) per job or deployment.")
    kind: WorkloadKind | None = Field(  # noqa: F821  # the type policy_model() gives it
        None,
        description=(
            "Object to template: Job (batch/v1), Deployment, PyTorchJob (kubeflow.org/v1), or a kind of the "
            "scheduler backend. Defaults to the backend's kind for training and "
            "Deployment for inference."
        ),
    )
    priority_class: str | None = Field(None, description="Priority class of its pods.")
    image: Annotated[
        str | None,
        Why(
            low=(
                "an empty image names no container image",
                "write the image, e.g. nvcr.io/nvidia/pytorch:24.05-py3, or remove image",
            )
        ),
    ] = Field(None, min_length=1, description="Container image for the template.")
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
    mig_profile: Annotated[
        str | None,
        Why(
            shape=(
                "a MIG profile is <compute slices>g.<memory>gb, as nvidia-smi mig -lgip names it",
                "write e.g. 1g.10gb or 3g.40gb",
            ),
            suggest=_as_mig_profile,
        ),
    ] = Field(
        None,
        pattern=r"^[0-9]+g\.[0-9]+gb$",
        description=(
            "Each GPU of the pod is a MIG device of this profile (e.g. 1g.10gb): the pods land only on pools whose "
            "cards have it (MIG strategy single), and workloads without one never on MIG pools."
        ),
    )
    rdma: Annotated[
        int | None,
        Why(
            low=("a pod of an RDMA workload takes at least one RDMA device", "write 1 or more, or remove rdma"),
            high=("a pod takes at most 64 RDMA devices here", "write the devices one pod needs, 64 or less"),
        ),
    ] = Field(
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
    min_member: Annotated[
        int | None,
        Why(
            low=("a gang has at least one pod", "write 1 or more, or remove minMember (its default is replicas)"),
            high=MAX_PODS,
        ),
    ] = Field(
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
    autoscale: Autoscale | None = Field(
        None,
        description=(
            "Scale an inference Deployment between min and max pods on CPU use, a custom metric or a Prometheus "
            "query: a HorizontalPodAutoscaler (autoscaling/v2), or a KEDA ScaledObject with spec.autoscaling.keda, "
            "beside the Deployment in its template (which then leaves replicas to it). Its quota, queue and pools "
            "must hold max pods."
        ),
    )
    namespace_default: bool = Field(
        False,
        description=(
            "Pods in the workload's namespace that name no workload class get this class's placement injected "
            "(where the API server has MutatingAdmissionPolicy). At most one class per namespace."
        ),
    )


class Autoscaling(Model):
    keda: bool = Field(
        False,
        description=(
            "KEDA (keda.sh/v1alpha1) is installed: autoscaled workloads get a ScaledObject, which drives their "
            "HorizontalPodAutoscaler, instead of a HorizontalPodAutoscaler; it adds Prometheus triggers and scaling "
            "to zero."
        ),
    )


class NodeAgent(Model):
    """A DaemonSet that must run on the GPU nodes (device plugin, feature discovery, exporters ...)."""

    name: SubdomainName = Field(description="The DaemonSet's name.")
    namespace: Name = Field(description="The DaemonSet's namespace.")
    pools: Annotated[
        list[Name] | None,
        Why(low=("an empty list would put the agent on no pool", "list its pools, or remove pools to mean every pool")),
    ] = Field(None, min_length=1, description="Pools whose nodes it must run on. Default: every pool.")
    tolerations: list[Toleration] | None = Field(
        None,
        description=(
            "The tolerations its pods carry today; policyc proves they tolerate every taint of those nodes. Omit "
            "when the agent is given the tolerations policyc emits (nodes/agent-tolerations.yaml; the GPU "
            "Operator's through nodes/gpu-operator-values.yaml)."
        ),
    )


# --- GPU alerts (spec.monitoring): policyc.backends.monitoring emits them, policyc.checks.monitoring lints them ---


def _threshold(what: str, low: float, high: float, *, integer: bool = False, open_low: bool = True) -> Any:
    """A number from `low` (excluded when `open_low`) to `high`, or false for no alert of this kind."""
    kind = "a whole number" if integer else "a number"
    bounds = f"{'above' if open_low else 'from'} {low:g} {'up to' if open_low else 'to'} {high:g}"

    def validate(value: Any) -> Any:
        if value is False:
            return value
        numeric = isinstance(value, int) if integer else isinstance(value, int | float)
        if isinstance(value, bool) or not numeric:
            raise policy_error(
                "wrong-type",
                f"must be {what} ({kind} {bounds}) or false for no alert, not {describe_value(value)}",
                hint="write a bare number" if isinstance(value, str) else None,
            )
        if value > high or value < low or (open_low and value == low):
            raise policy_error("invalid-value", f"{value:g} is out of range: {what} is {kind} {bounds}")
        return value

    number = {"type": "integer" if integer else "number", "maximum": high}
    number["exclusiveMinimum" if open_low else "minimum"] = low
    return Annotated[Any, PlainValidator(validate), WithJsonSchema({"anyOf": [number, {"const": False}]})]


def _duration(non_zero: bool) -> Any:
    """A Prometheus duration (5m, 1h30m), as a string; `non_zero` for a window."""
    from policyc.gpu.promql import DURATION, duration_hint, duration_ms

    def validate(value: Any) -> str:
        if not isinstance(value, str):
            raise policy_error(
                "wrong-type",
                f"must be a Prometheus duration such as 5m or 1h30m, not {describe_value(value)}",
                hint=f"add a unit, e.g. '{value}m'" if isinstance(value, int) and not isinstance(value, bool) else None,
            )
        ms = duration_ms(value)
        if ms is None:
            raise policy_error(
                "invalid-value",
                f"'{value}' is not a Prometheus duration (units y w d h m s ms, largest first, each once)",
                duration_hint(value),
            )
        if non_zero and ms == 0:
            raise policy_error("invalid-value", "a window of 0 holds no sample", "give it a length, e.g. 1h")
        return value

    return Annotated[str, PlainValidator(validate), WithJsonSchema({"type": "string", "pattern": DURATION})]


PROMETHEUS_LABEL = r"^[a-zA-Z_][a-zA-Z0-9_]*$"
PROMETHEUS_METRIC = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"


def _prometheus_label(name: str) -> str:
    if not re.fullmatch(PROMETHEUS_LABEL, name):
        fixed = re.sub(r"[^a-zA-Z0-9_]", "_", name)
        raise policy_error(
            "invalid-value",
            f"'{name}' is not a Prometheus label name (letters, digits and _, not first a digit)",
            f"did you mean '{fixed}'?" if re.fullmatch(PROMETHEUS_LABEL, fixed) else None,
        )
    if name.startswith("__"):
        raise policy_error("invalid-value", f"label '{name}' is reserved: Prometheus owns names starting with __")
    return name


PrometheusLabel = Annotated[
    str, AfterValidator(_prometheus_label), WithJsonSchema({"type": "string", "pattern": PROMETHEUS_LABEL})
]
"""A Prometheus label name (not Kubernetes': no dots, dashes or slashes)."""
Duration = _duration(non_zero=False)
Window = _duration(non_zero=True)
Temperature = _threshold("a temperature in °C", 1, 150, integer=True, open_low=False)
Fraction = _threshold("a fraction of the card's memory", 0, 1)
PowerFraction = _threshold("a fraction of the card's rated power", 0, 2)


class LowUtilisation(Model):
    below: Annotated[
        float,
        Why(
            low=(
                "a GPU's utilisation is never below 0%, so the alert would never fire",
                "write a percentage above 0, e.g. 10",
            ),
            high=("utilisation is a percentage, at most 100", "write 100 or less, e.g. 10"),
        ),
    ] = Field(gt=0, le=100, description="Alert when a GPU's utilisation (DCGM_FI_DEV_GPU_UTIL, %) averages below this.")
    for_: Window = Field(alias="for", description="The window the average is taken over (avg_over_time), e.g. 1h.")

    @field_validator("below", mode="before")
    @classmethod
    def _whole_numbers_too(cls, value: Any) -> Any:
        """10 is a percentage as much as 10.0 (strict mode would refuse the integer)."""
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _low_utilisation_default() -> LowUtilisation:
    return LowUtilisation.model_validate({"below": 10, "for": "1h"})


LowUtilisationField = Annotated[
    Union[Annotated[LowUtilisation, Tag("window")], Annotated[Literal[False], Tag("off")]],  # noqa: UP007  # tagged
    Discriminator(lambda value: "off" if value is False else "window"),
]
"""`{below, for}`, or false for no alert: one member by the value, so that a mistake gets that member's error."""


_THRESHOLD_HELP = {
    "gpu_temperature": "Alert when a GPU is hotter than this, in °C (DCGM_FI_DEV_GPU_TEMP); false: no alert.",
    "memory_temperature": (
        "Alert when a GPU's memory is hotter than this, in °C (DCGM_FI_DEV_MEMORY_TEMP; HBM cards report it); false: "
        "no alert."
    ),
    "memory_used": (
        "Alert when a GPU uses more than this fraction of its framebuffer (DCGM_FI_DEV_FB_USED over USED + FREE); "
        "false: no alert."
    ),
    "power": (
        "Alert when a GPU draws more than this fraction of its card's rated power (DCGM_FI_DEV_POWER_USAGE; the rated "
        "power from policyc's product table or monitoring.ratedPower); false: no alert."
    ),
    "low_utilisation": "Alert on GPUs idle over a window: {below: percent, for: window}; false: no alert.",
    "xid_errors": (
        "Alert on XID errors: DCGM_FI_DEV_XID_ERRORS != 0 (a gauge holding the last XID code until the exporter "
        "restarts), or DCGM_EXP_XID_ERRORS_COUNT > 0 when extraCounters enables that windowed count."
    ),
    "ecc_or_remap": (
        "Alert on memory errors: a failed row remap (DCGM_FI_DEV_ROW_REMAP_FAILURE), rows remapped for uncorrectable "
        "errors, and double-bit ECC errors and retired pages where the exporter's counters include them."
    ),
}


class AlertThresholds(Model):
    """What the GPU alerts fire on; the defaults follow common practice (see policyc.backends.monitoring)."""

    gpu_temperature: Temperature = Field(85, description=_THRESHOLD_HELP["gpu_temperature"])
    memory_temperature: Temperature = Field(False, description=_THRESHOLD_HELP["memory_temperature"])
    memory_used: Fraction = Field(0.95, description=_THRESHOLD_HELP["memory_used"])
    power: PowerFraction = Field(1.0, description=_THRESHOLD_HELP["power"])
    low_utilisation: LowUtilisationField = Field(
        default_factory=_low_utilisation_default, description=_THRESHOLD_HELP["low_utilisation"]
    )
    xid_errors: bool = Field(True, description=_THRESHOLD_HELP["xid_errors"])
    ecc_or_remap: bool = Field(True, description=_THRESHOLD_HELP["ecc_or_remap"])


class PoolAlertThresholds(Model):
    """A pool's own thresholds: each field given replaces monitoring.thresholds' for the pool's GPUs."""

    gpu_temperature: Temperature | None = Field(None, description=_THRESHOLD_HELP["gpu_temperature"])
    memory_temperature: Temperature | None = Field(None, description=_THRESHOLD_HELP["memory_temperature"])
    memory_used: Fraction | None = Field(None, description=_THRESHOLD_HELP["memory_used"])
    power: PowerFraction | None = Field(None, description=_THRESHOLD_HELP["power"])
    low_utilisation: LowUtilisationField | None = Field(None, description=_THRESHOLD_HELP["low_utilisation"])
    xid_errors: bool | None = Field(None, description=_THRESHOLD_HELP["xid_errors"])
    ecc_or_remap: bool | None = Field(None, description=_THRESHOLD_HELP["ecc_or_remap"])


class AlertRule(Model):
    """An alerting rule of your own, as in a Prometheus rule file; policyc lints its expression."""

    alert: Annotated[
        str,
        Why(
            shape=(
                "an alert's name is a Prometheus metric name: letters, digits, '_' and ':', not first a digit",
                "write e.g. GpuMemoryHigh",
            ),
            suggest=lambda value: re.sub(r"[^a-zA-Z0-9_:]", "_", value) if not value[:1].isdigit() else None,
        ),
    ] = Field(pattern=PROMETHEUS_METRIC, description="The alert's name (a Prometheus metric name).")
    expr: Annotated[
        str, Why(low=("an empty expression fires nothing", "write a PromQL expression, or remove the rule"))
    ] = Field(min_length=1, description="The PromQL expression; every result fires the alert.")
    for_: Duration | None = Field(None, alias="for", description="How long the result must hold before it fires.")
    keep_firing_for: Duration | None = Field(None, description="How long it keeps firing once the result is gone.")
    labels: dict[PrometheusLabel, str] = Field(
        default_factory=dict, description="Labels of the alert (severity ...); policyc adds policyc: <policy>."
    )
    annotations: dict[PrometheusLabel, str] = Field(
        default_factory=dict, description="Annotations of the alert (summary, description ...), templates allowed."
    )


class Monitoring(Model):
    namespace: Name = Field(
        "monitoring",
        description=(
            "Namespace of the PrometheusRule: one the Prometheus Operator's ruleNamespaceSelector selects, which "
            "exists (policyc does not create it; the monitoring stack's installation does)."
        ),
    )
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict,
        description=(
            "Labels of the PrometheusRule that your Prometheus's ruleSelector matches: kube-prometheus-stack selects "
            "release: <its Helm release> unless ruleSelectorNilUsesHelmValues is false."
        ),
    )
    for_: Duration = Field("5m", alias="for", description="How long a condition must hold before its alert fires.")
    node_label: PrometheusLabel = Field(
        "Hostname",
        description=(
            "The exporter's label that names the node: Hostname (the DCGM exporter's, its NODE_NAME), or one your "
            "scrape configuration relabels it to. Pools are selected by their node names in it."
        ),
    )
    counters: Literal["default", "dcp-metrics-included"] = Field(
        "default",
        description=(
            "The counter file the DCGM exporter reads: default (etc/default-counters.csv) or dcp-metrics-included "
            "(etc/dcp-metrics-included.csv, the profiling set). policyc alerts only on what it exports."
        ),
    )
    extra_counters: dict[
        Annotated[
            str,
            Field(pattern=r"^DCGM_(FI|EXP)_[A-Z0-9_]+$"),
            Why(
                shape=(
                    "a DCGM exporter field is named DCGM_FI_... or DCGM_EXP_..., in capitals",
                    "write it as the exporter's counter file does, e.g. DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                ),
                suggest=lambda value: (
                    value.upper() if re.fullmatch(r"DCGM_(FI|EXP)_[A-Z0-9_]+", value.upper()) else None
                ),
            ),
        ],
        Literal["gauge", "counter"],
    ] = Field(
        default_factory=dict,
        description=(
            "Rows your exporter's counter file adds to that set: field -> Prometheus type, e.g. "
            "{DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: counter, DCGM_EXP_XID_ERRORS_COUNT: gauge}."
        ),
    )
    rated_power: dict[
        GpuProduct,
        Annotated[
            float,
            Field(gt=0, le=5000),
            Why(
                low=("a card's rated power is above 0 W", "write the watts of its datasheet, e.g. 700"),
                high=("no GPU card is rated above 5,000 W", "write watts (not milliwatts), e.g. 700"),
            ),
        ],
    ] = Field(
        default_factory=dict,
        description=(
            "Rated power per card in W, by GPU product, for products policyc's table lacks (or to override it): "
            "{NVIDIA-H20: 400}. A pool whose card has none gets no power alert (a warning says so)."
        ),
    )
    thresholds: AlertThresholds = Field(
        default_factory=lambda: AlertThresholds(), description="What the alerts fire on, for every pool."
    )
    pools: dict[Name, PoolAlertThresholds] = Field(
        default_factory=dict, description="Thresholds of one pool, by pool name, over monitoring.thresholds."
    )
    extra_rules: list[AlertRule] = Field(
        default_factory=list,
        description=(
            "Your own alerting rules, in the same PrometheusRule; policyc lints them against the exporter's counters "
            "(a metric it does not export, rate() or increase() on a gauge)."
        ),
    )

    @field_validator("rated_power", mode="before")
    @classmethod
    def _whole_watts_too(cls, value: Any) -> Any:
        """700 is as many watts as 700.0 (strict mode would refuse the integer)."""
        if isinstance(value, dict):
            return {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in value.items()}
        return value


class Provisioning(Model):
    """How node pools come to be: the provisioner of pools that name none, and each provisioner's settings."""

    default: ProvisionerName = Field(  # noqa: F821  # the type policy_model() gives it
        next(iter(PROVISIONERS)), description="The provisioning of pools that state none (nodePools[].provisioning)."
    )


class TeamGrant(Model):
    """What a team may ask for in its own file of a policy directory (a document of kind Tenant)."""

    priority_classes: list[str] | None = Field(
        None,
        description=(
            "Priority classes a team's tenants may list and its workloads use; a team's tenant must then list its "
            "own. Omit to let teams use every class."
        ),
    )
    gpu_tiers: list[str] | None = Field(
        None, description="GPU tiers a team's workloads may run on. Omit to let teams use every tier."
    )
    max_quota: ResourceMap = Field(
        default_factory=dict,
        description=(
            "The most a team may take, all its tenants together, of each resource named: the sum of their "
            "quota.requests, each of which must then state it."
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
    provisioning: ProvisioningField | None = Field(  # noqa: F821  # the type policy_model() gives it
        None, description="How node pools come to be: the default provisioner, and each provisioner's settings."
    )
    node_pools: list[NodePoolField] = Field(  # noqa: F821  # the type policy_model() gives it
        json_schema_extra={"minItems": 1}, description="Node pools: nodes of one GPU product and usage."
    )
    priority_classes: list[PriorityClass] = Field(default_factory=list, description="PriorityClasses to create.")
    scheduler: SchedulerField = Field(  # noqa: F821  # the type policy_model() gives it
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
    autoscaling: Autoscaling | None = Field(
        None, description="How the cluster scales inference workloads (workloads[].autoscale)."
    )
    monitoring: Monitoring | None = Field(
        None,
        description=(
            "GPU alerts for the DCGM exporter's metrics: one PrometheusRule (monitoring/gpu-alerts.yaml), a group per "
            "pool of NVIDIA GPUs with the thresholds of its card, and your own rules, linted."
        ),
    )
    teams: TeamGrant | None = Field(
        None,
        description=(
            "In a policy directory, what the teams' own files (kind Tenant: their tenants and workloads) may ask "
            "for; each file beyond it is an error in that file. Omit to grant teams what the policy has."
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
    slurm: SlurmSettings | None = Field(
        None, description="How Slurm runs on the pools that name a partition (nodePools[].slurm)."
    )


class ClusterPolicy(Model):
    """A policyc cluster policy: pools, tiers, tenants, priorities and workload classes of one GPU cluster."""

    model_config = ConfigDict(title="ClusterPolicy")

    api_version: Literal["policyc.io/v1alpha1"] = Field(description="Always policyc.io/v1alpha1.")
    kind: Literal["ClusterPolicy"] = Field(description="Always ClusterPolicy.")
    metadata: Metadata
    spec: Spec


class TeamSpec(Model):
    tenants: list[Tenant] = Field(default_factory=list, description="The team's own tenants.")
    workloads: list[Workload] = Field(
        default_factory=list, description="The team's workload classes, each running as one of its tenants."
    )


class TeamDocument(Model):
    """A team's document of a policy directory: its tenants and workloads, within the platform's spec.teams."""

    model_config = ConfigDict(title="Tenant")

    api_version: Literal["policyc.io/v1alpha1"] = Field(description="The platform document's apiVersion.")
    kind: Literal["Tenant"] = Field(description="Always Tenant.")
    metadata: Metadata
    spec: TeamSpec


class ClusterDestination(Model):
    server: str | None = Field(None, description="The cluster's API server URL, as Argo CD knows it.")
    name: str | None = Field(None, description="The cluster's name in Argo CD (instead of server).")


class TenantOverride(Model):
    name: Name = Field(description="The tenant: the platform's, or one of a team this cluster hosts.")
    queue: Queue | None = Field(None, description="Its scheduler queue in this cluster, instead of the shared one.")
    quota: Quota | None = Field(None, description="Its ResourceQuota in this cluster, instead of the shared one.")


class ClusterSpec(Model):
    destination: ClusterDestination = Field(
        description="Where Argo CD deploys the cluster's directory (the fleet's ApplicationSet): server or name."
    )
    kubernetes_version: KubernetesVersion | None = Field(None, description="The cluster's, instead of the shared one.")
    provisioning: ProvisioningField | None = Field(  # noqa: F821  # the type cluster_model() gives it
        None, description="The cluster's provisioning settings, instead of the shared ones (replaced as a whole)."
    )
    scheduler: SchedulerField | None = Field(  # noqa: F821  # the type cluster_model() gives it
        None, description="The cluster's scheduler backend and settings, instead of the shared ones."
    )
    node_pools: list[NodePoolField] = Field(  # noqa: F821  # the type cluster_model() gives it
        default_factory=list, description="Pools that replace the shared pool of their name in this cluster."
    )
    add_node_pools: list[NodePoolField] = Field(  # noqa: F821  # the type cluster_model() gives it
        default_factory=list, description="Pools this cluster has beside the shared ones."
    )
    hosted_teams: list[Name] | None = Field(
        None, description="The teams (their documents' metadata.name) this cluster hosts; every team when left out."
    )
    quota_scale: Annotated[float, Why(low=("a scale is above 0", "write a number such as 0.5"))] | None = Field(
        None,
        gt=0,
        description="A factor applied to each hosted tenant's quota (requests, limits) and queue (guarantee, deserved, "
        "capability); GPUs are rounded down.",
    )
    tenant_overrides: list[TenantOverride] = Field(
        default_factory=list,
        description="Tenants whose queue or quota differ in this cluster: each replaces the shared block as a whole, "
        "taken as written (quotaScale does not apply to it).",
    )


class ClusterDocument(Model):
    """A cluster of a fleet: what differs there from the shared policy of its policy directory."""

    model_config = ConfigDict(title="Cluster")

    api_version: Literal["policyc.io/v1alpha1"] = Field(description="The platform document's apiVersion.")
    kind: Literal["Cluster"] = Field(description="Always Cluster.")
    metadata: Metadata
    spec: ClusterSpec


@cache
def cluster_model() -> type[ClusterDocument]:
    """`ClusterDocument`, complete (its pools, provisioning and scheduler typed as `policy_model` types them); for its
    JSON Schema: a cluster's overrides are checked grafted into the shared policy."""
    spec = policy_model().model_fields["spec"].annotation
    fields = spec.model_fields  # type: ignore[union-attr]
    pool = fields["node_pools"].annotation
    provisioning, scheduler = fields["provisioning"].annotation, fields["scheduler"].annotation
    cluster_spec = _with_types(ClusterSpec, provisioning=provisioning, scheduler=scheduler | None, node_pools=pool,
                               add_node_pools=pool)  # fmt: skip
    return _with_types(ClusterDocument, spec=cluster_spec)


@cache
def team_model() -> type[TeamDocument]:
    """`TeamDocument`, complete (a workload's kinds follow from the registered backends, as in `policy_model`); for
    its JSON Schema: a policy directory checks a team's document merged into the platform's policy."""
    workload = _with_types(Workload, kind=_workload_kinds() | None)
    return _with_types(TeamDocument, spec=_with_types(TeamSpec, workloads=list[workload]))


@cache
def policy_model() -> type[ClusterPolicy]:
    """`ClusterPolicy`, complete. The types `spec.scheduler` (`SchedulerField`), `workloads[].kind`
    (`WorkloadKind`), a provisioner's name (`ProvisionerName`), `spec.provisioning` (`ProvisioningField`) and a pool
    (`NodePoolField`, with each provisioner's block) follow from the registered backends, whose settings are read here
    on first use rather than at import: the models that hold them are subclasses made here, each time anew (a test
    that registers a provisioner clears the cache)."""
    names = Literal[tuple(PROVISIONERS)]  # type: ignore[valid-type]
    workload = _with_types(Workload, kind=_workload_kinds() | None)
    pool = _node_pool(names)
    provisioning = _provisioning_settings(names)
    spec = _with_types(Spec, scheduler=_scheduler_settings(), provisioning=provisioning | None, node_pools=list[pool],
                       workloads=list[workload])  # fmt: skip
    return _with_types(ClusterPolicy, spec=spec)

"""What a scheduler backend reads back of a running cluster for `policyc import`: its queues as the policy language
writes them, and which objects it expressed. The backend's `adopt` face returns it; `policyc.adopt` joins it with
what every cluster shows (nodes, namespaces, quotas, priority classes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from policyc.cluster.source import Kind
from policyc.gpu.accelerators import VENDORS


@dataclass(frozen=True, slots=True, order=True)
class ObjectRef:
    """One object of the cluster, for the list of what an import expressed or could not."""

    kind: Kind
    namespace: str | None
    name: str

    @classmethod
    def of(cls, obj: dict) -> ObjectRef:
        metadata = obj.get("metadata") or {}
        return cls(Kind.of(obj), metadata.get("namespace"), str(metadata.get("name", "")))

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass(slots=True)
class QueueRead:
    """One scheduler queue, as a tenant's `queue` block."""

    name: str
    settings: dict
    """The block `tenants[].queue`, in the policy's camelCase; `gpu` names the cluster's GPU resource."""
    tenant: str | None = None
    """The tenant the queue's `<domain>/tenant` label names, where it has one."""
    namespaces: tuple[str, ...] = ()
    """Namespaces the scheduler itself ties to the queue (where its objects name them), in order."""
    guesses: dict[str, str] = field(default_factory=dict)
    """Field of `settings` -> from what its value was guessed."""


@dataclass(slots=True)
class QueuesRead:
    """A scheduler backend's reading of a cluster: its settings, its queues, and every object it looked at."""

    scheduler: dict
    """The block `spec.scheduler`, `backend` first."""
    queues: list[QueueRead] = field(default_factory=list)
    expressed: set[ObjectRef] = field(default_factory=set)
    """Objects the reading carries over whole (the policy builds them again)."""
    unexpressed: dict[ObjectRef, str] = field(default_factory=dict)
    """Objects of the backend the policy cannot express -> why."""
    guesses: dict[str, str] = field(default_factory=dict)
    """Field of `scheduler` -> from what its value was guessed."""
    policy_name: str | None = None
    """The policy's name, where the scheduler's objects show it (a root queue or cohort named after the policy)."""
    workload_kinds: dict[str, str] = field(default_factory=dict)
    """Workload kinds the scheduler's configuration shows some class runs -> the type of class that runs it (the
    policy's kind names): the import gives the kind to a class whose kind the cluster does not show."""


def number(quantity: object) -> object:
    """A quantity as the policy writes it: an integer where it is one ("8" -> 8), else the text as it is."""
    text = str(quantity)
    return int(text) if text.isdigit() else text


def resources(hard: dict, gpu_resource: str) -> dict:
    """Resource name -> quantity with the GPU resource written `gpu`, sorted (cpu, memory, gpu first): devices as
    integers (`gpu: 8`), cpu and memory as quantity strings (`cpu: "512"`), as policies write them."""
    order = {"cpu": 0, "memory": 1, "gpu": 2}
    named = {("gpu" if name == gpu_resource else name): value for name, value in hard.items()}
    named = {name: number(value) if name == "gpu" or "/" in name else str(value) for name, value in named.items()}
    return dict(sorted(named.items(), key=lambda item: (order.get(item[0], 3), item[0])))


def bytes_text(amount: Fraction) -> str:
    """A number of bytes as the policy writes memory: in Gi or Mi where whole, else in bytes."""
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20)):
        if amount and (amount / size).denominator == 1:
            return f"{amount // size}{suffix}"
    return str(round(amount))


def cpu_text(millicores: Fraction) -> object:
    """Millicores as the policy writes CPU: whole CPUs as a string ("512"), else millicores ("500m")."""
    if (millicores / 1000).denominator == 1:
        return str(millicores // 1000)
    return f"{round(millicores)}m"


@dataclass(slots=True)
class SizedPoolRead:
    """One pool of a provisioner that makes its nodes, read back from its objects (its nodes are not on the cluster
    until made)."""

    node: dict
    """A Node as the provisioner makes it, as far as its objects say: the pool's labels (its name under policyc's
    pool label) and taints, the GPU product its product taint names, the accelerators per node where shown."""
    size: dict
    """The pool's size as the policy writes it (`count`, `minNodes`, `maxNodes`)."""
    settings: dict
    """The pool's block `nodePools[].<provisioner>` (what differs from its defaults)."""
    guesses: dict[str, str] = field(default_factory=dict)
    """Field of the pool (`count`, `gpu` ...) -> from what it was guessed."""


@dataclass(slots=True)
class PoolsRead:
    """A node provisioner's reading of a cluster: its pools and its cluster-wide settings."""

    pools: list[SizedPoolRead] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    """The block `spec.provisioning.<provisioner>` (what differs from its defaults)."""
    expressed: set[ObjectRef] = field(default_factory=set)
    """Objects the reading carries over (the policy builds them again)."""


def template_node(name: str, labels: dict, taints: list[dict], capacity: dict[str, str]) -> dict:
    """A Node with `labels`, `taints` and `capacity`; the product label of the GPU vendor whose product taint it has
    (as the vendor's discovery labels the node, where the taint names the product)."""
    products = {v.product_label: v for v in VENDORS.values() if v.product_label}
    shown = {t["key"]: t.get("value", "") for t in taints if t.get("key") in products}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**shown, **labels}},
        "spec": {"taints": taints},
        "status": {"capacity": capacity, "allocatable": capacity},
    }

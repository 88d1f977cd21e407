"""Fields that have no effect where they stand (PC493). Each is declared once, in `REGISTRY`: where it stands, when
it does nothing, what to write instead, and the condition, asked of each item the field is written in. `check` is
the one place that asks them, and only where the policy writes the field: a default that does nothing is no
mistake. The table of docs/language.md lists the registry, and a test holds the two to each other.

A field whose value merely equals its default is not here: it still says what happens. Neither are the fields a
backend has no equivalent for, which its own rules report with their own codes (queue fields, a PyTorchJob's gang
under a backend that admits it whole), nor settings of another backend (an error, PC702).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from policyc.backends.monitoring import monitored_pools
from policyc.checks.written import Written
from policyc.diagnostics import Diagnostic, Path, diag, listing, where
from policyc.gpu.accelerators import VENDORS
from policyc.ir import Cluster, Pool, Workload
from policyc.k8s import versions
from policyc.pods import ZONE, reachable_pools
from policyc.registry import every_settings, settings


@dataclass(frozen=True, slots=True, eq=False)
class Idle:
    """Why a field does nothing for one item, and what to do instead (the diagnostic's hint)."""

    reason: str
    hint: str


@dataclass(frozen=True, slots=True, eq=False)
class NoEffect:
    field: str
    """Where it stands, as docs/language.md names it: `workloads[].minMember` (in each item of a list of spec) or
    `admission.mutatingAdmissionPolicyBeta` (under spec)."""
    when: str
    """When it does nothing (the words of docs/language.md)."""
    instead: str
    """What to do instead (the words of docs/language.md)."""
    idle: Callable[[Cluster, Any, Written], Idle | None]
    """Why it does nothing for one item (a workload, pool or tenant; the cluster for a field under spec), or None
    where it has an effect."""

    @property
    def collection(self) -> str | None:
        """The list of spec whose items hold the field (None: a field under spec itself)."""
        head, list_item, _ = self.field.partition("[].")
        return head if list_item else None

    @property
    def relative(self) -> Path:
        """The field's path in each item (under spec for a field of spec)."""
        return tuple(self.field.partition("[].")[2].split(".") if self.collection else self.field.split("."))


def _items(cluster: Cluster, collection: str | None) -> Iterator[tuple[Any, Path]]:
    if collection is None:
        yield cluster, ("spec",)
        return
    items = {"workloads": cluster.workloads, "nodePools": cluster.pools}[collection]
    for item in items:
        yield item, item.path


def check(cluster: Cluster, written: Written) -> Iterator[Diagnostic]:
    for entry in REGISTRY:
        for item, base in _items(cluster, entry.collection):
            path = (*base, *entry.relative)
            if path in written and (idle := entry.idle(cluster, item, written)) is not None:
                yield diag("no-effect", f"{where(path)} has no effect: {idle.reason}", path, hint=idle.hint)


# --- the conditions --------------------------------------------------------------------------------------------


def _gang(cluster: Cluster, w: Workload, _: Written) -> Idle | None:
    backend = settings(cluster.scheduler.backend)
    if w.kind in backend.GANG_KINDS:
        return None
    instead = f", or use kind {' or '.join(backend.GANG_KINDS)} to run it as a gang" if w.type == "training" else ""
    return Idle(
        f"workload '{w.name}' is a {w.kind}, whose template for {backend.TITLE} carries no gang minimum: its pods "
        "start as each is placed",
        f"remove minMember{instead}",
    )


def _zones_of(pool: Pool) -> set[str] | None:
    """The zones the pool's nodes may be in: its label's, or those its provisioner chooses one of (empty: a zone it
    chooses, which the policy does not name); None: its nodes carry no zone the policy knows of."""
    if ZONE in pool.labels:
        return {pool.labels[ZONE]}
    label = next((label for label in pool.chosen_labels if label.key == ZONE), None)
    if label is None:
        return None
    return {v for op, values in label.requirements if op == "In" for v in values if label.allows(v)}


def _zone(cluster: Cluster, w: Workload, _: Written) -> Idle | None:
    pools = reachable_pools(cluster, w)
    each = [_zones_of(p) for p in pools]
    zones = set().union(*(z for z in each if z))
    if len(zones) == 1 and all(each):
        return Idle(
            f"every pool workload '{w.name}' can use is in zone '{zones.pop()}' ({ZONE}): its pods are in one zone "
            "anyway",
            "remove sameZone",
        )
    if any(z is not None for z in each) or not pools:
        return None
    return Idle(
        f"no pool workload '{w.name}' can use states its zone ({ZONE} in its labels), so policyc cannot keep the pods "
        "in one; on nodes without that label a required pod affinity places no pod at all",
        f"remove sameZone, or, where its pools span several zones, state each pool's zone (labels: {{{ZONE}: <zone>}})",
    )


def _namespace_default(cluster: Cluster, w: Workload, _: Written) -> Idle | None:
    version, api = cluster.kubernetes_version, versions.MUTATING_ADMISSION_POLICY
    if versions.mutating_admission_api(version, cluster.mutating_admission_beta) is None:
        gated = versions.can_turn_on_beta(version, api)
        beta = f"; 1.{api.beta_since} and 1.{api.since - 1} have {api.beta} where the API server turns it on"
        return Idle(
            f"Kubernetes {version} has no {api.kind} to inject it with ({api.group_version} from "
            f"1.{api.since}{beta if gated else ''})",
            "remove namespaceDefault (pods then take the class's placement from its template)"
            + (
                ", or set spec.admission.mutatingAdmissionPolicyBeta: true where the API server serves it"
                if gated
                else ""
            ),
        )
    tenant = next(t for t in cluster.tenants if t.name == w.tenant)
    if tenant.admission == "off":
        return Idle(
            f"tenant '{tenant.name}' has admission mode off: policyc writes no admission policy for it, and injects "
            "nothing",
            f"remove namespaceDefault, or set tenant '{tenant.name}' admission.mode to audit, warn or deny",
        )
    return None


def _injecting(cluster: Cluster) -> bool:
    """Whether some tenant with admission on has a workload class to inject."""
    on = {t.name for t in cluster.tenants if t.admission != "off"}
    return any(w.tenant in on for w in cluster.workloads)


def _beta(cluster: Cluster, _: Cluster, written: Written) -> Idle | None:
    version, api = cluster.kubernetes_version, versions.MUTATING_ADMISSION_POLICY
    if versions.serves(version, api):
        return Idle(
            f"Kubernetes {version} serves {api.kind} {api.group_version}, on by default, which injection uses",
            "remove mutatingAdmissionPolicyBeta",
        )
    if versions.can_turn_on_beta(version, api) and not _injecting(cluster):
        return Idle(
            "no tenant whose admission mode is not off has a workload class to inject",
            "remove mutatingAdmissionPolicyBeta",
        )
    return None  # before the beta: an error (PC437)


def _admission_mode(cluster: Cluster, _: Cluster, written: Written) -> Idle | None:
    if not cluster.tenants:
        return Idle("the policy has no tenants", "remove admission.mode")
    if all((*t.path, "admission", "mode") in written for t in cluster.tenants):
        return Idle("every tenant states its own admission.mode", "remove admission.mode")
    return None


def _keda(cluster: Cluster, _: Cluster, written: Written) -> Idle | None:
    if any(w.autoscale for w in cluster.workloads):
        return None
    return Idle(
        "no workload autoscales (workloads[].autoscale)",
        "remove spec.autoscaling, or give an inference Deployment autoscale: {min, max, cpu}",
    )


def _activation(cluster: Cluster, w: Workload, _: Written) -> Idle | None:
    a = w.autoscale
    if a is None or a.prometheus is None or a.min == 0:
        return None
    return Idle(
        f"workload '{w.name}' scales from min {a.min}: KEDA reads the activation threshold only to scale from and to "
        "zero",
        "remove activationThreshold, or set autoscale.min: 0 to scale to zero",
    )


def _feature_discovery(cluster: Cluster, p: Pool, _: Written) -> Idle | None:
    if p.vendor is None:
        return Idle(f"pool '{p.name}' has no GPUs to discover", "remove gpuFeatureDiscovery")
    if VENDORS[p.vendor].discovery is None:
        return Idle(
            f"no feature discovery labels {p.vendor}'s nodes: policyc labels the product of pool '{p.name}' itself",
            "remove gpuFeatureDiscovery",
        )
    return None


def _gpu_memory(cluster: Cluster, p: Pool, _: Written) -> Idle | None:
    vendor = VENDORS[p.vendor] if p.vendor else None
    if vendor is None or (vendor.memory_label and not p.gfd):
        return None  # the node script writes it as the vendor's memory label
    alerts = cluster.monitoring
    alerted = alerts is not None and alerts.thresholds[p.name].memory_used is not None
    if alerted and p.name in {q.name for q in monitored_pools(cluster)}:
        return None  # the memory-use alert states it
    label = (
        f"{vendor.discovery} labels it ({vendor.memory_label})"
        if vendor.memory_label
        else f"policyc writes no memory label for {vendor.name} cards"
    )
    return Idle(
        f"{label}, and no GPU memory-use alert of pool '{p.name}' states it (spec.monitoring)", "remove gpu.memory"
    )


def _interfaces(cluster: Cluster, p: Pool, _: Written) -> Idle | None:
    if any(w.rdma and p in reachable_pools(cluster, w) for w in cluster.workloads):
        return None
    return Idle(
        f"no workload with rdma can use pool '{p.name}', and NCCL_SOCKET_IFNAME is written only into theirs",
        "remove rdma.interfaces, or give a workload that uses the pool rdma: <devices per pod>",
    )


def _slurm(cluster: Cluster, _: Cluster, written: Written) -> Idle | None:
    if any(p.slurm for p in cluster.pools):
        return None
    return Idle(
        "no pool names a Slurm partition (nodePools[].slurm)",
        "remove spec.slurm, or put a pool in a partition: slurm: {partition: <name>}",
    )


def _slinky_only(field: str, what: str) -> Callable[[Cluster, Cluster, Written], Idle | None]:
    def idle(cluster: Cluster, _: Cluster, written: Written) -> Idle | None:
        if cluster.slurm is None or cluster.slurm.operator == "slinky" or not any(p.slurm for p in cluster.pools):
            return None  # without partitions spec.slurm as a whole does nothing, and says so
        return Idle(
            f"slurm.operator is {cluster.slurm.operator}: it names {what}, and policyc writes no Slinky object",
            f"remove slurm.{field}, or set slurm.operator: slinky",
        )

    return idle


def _gres_type(cluster: Cluster, p: Pool, _: Written) -> Idle | None:
    if p.slurm is None or p.slurm.cards:
        return None
    return Idle(f"pool '{p.name}' has no GPUs: its nodes get no Gres", "remove slurm.gresType")


def _default_provisioning(cluster: Cluster, _: Cluster, written: Written) -> Idle | None:
    if any(written.get((*p.path, "provisioning")) is None for p in cluster.pools):  # `provisioning:` null states none
        return None
    return Idle("every pool states its own provisioning", "remove provisioning.default")


def _provisioner_unused(name: str) -> Callable[[Cluster, Cluster, Written], Idle | None]:
    def idle(cluster: Cluster, _: Cluster, written: Written) -> Idle | None:
        if any(p.provisioning == name for p in cluster.pools):
            return None
        return Idle(
            f"no pool's provisioning is {name}", f"remove provisioning.{name}, or give a pool provisioning: {name}"
        )

    return idle


def _gang_kinds() -> str:
    return "; ".join(f"{m.TITLE}: {listing(list(m.GANG_KINDS))}" for m in every_settings())


_MUTATING = versions.MUTATING_ADMISSION_POLICY

REGISTRY: tuple[NoEffect, ...] = (
    NoEffect(
        "admission.mode",
        "every tenant states its own `admission.mode`, or there are no tenants",
        "remove it",
        _admission_mode,
    ),
    NoEffect(
        "admission.mutatingAdmissionPolicyBeta",
        f"Kubernetes 1.{_MUTATING.since} or later (v1 is on by default), or no tenant with admission on has a "
        f"workload class to inject (before 1.{_MUTATING.beta_since} it is an error, PC437)",
        "remove it",
        _beta,
    ),
    NoEffect("autoscaling", "no workload has `autoscale`", "remove it", _keda),
    NoEffect(
        "nodePools[].gpu.memory",
        "feature discovery labels the cards' memory (`gpuFeatureDiscovery: true`) or policyc writes no memory label "
        "for the vendor, and no GPU memory-use alert (`spec.monitoring`) quotes it",
        "remove it",
        _gpu_memory,
    ),
    NoEffect(
        "nodePools[].gpuFeatureDiscovery",
        "a pool without `gpu`, or of a vendor whose nodes no feature discovery labels ("
        + ", ".join(f"`{v.name}`" for v in VENDORS.values() if v.discovery is None)
        + ")",
        "remove it",
        _feature_discovery,
    ),
    NoEffect(
        "nodePools[].rdma.interfaces",
        "no workload with `rdma` can use the pool (`NCCL_SOCKET_IFNAME` goes only into their pods)",
        "remove it, or give a workload that uses the pool `rdma`",
        _interfaces,
    ),
    NoEffect("nodePools[].slurm.gresType", "a pool without GPUs", "remove it", _gres_type),
    NoEffect(
        "provisioning.default",
        "every pool states its own `provisioning`",
        "remove it",
        _default_provisioning,
    ),
    NoEffect("slurm", "no pool names a Slurm partition", "remove it, or give a pool `slurm: {partition}`", _slurm),
    NoEffect(
        "slurm.controller",
        "`slurm.operator` is `none` (it names Slinky's Controller)",
        "remove it, or set `operator: slinky`",
        _slinky_only("controller", "Slinky's Controller"),
    ),
    NoEffect(
        "slurm.namespace",
        "`slurm.operator` is `none` (it is the NodeSets' namespace)",
        "remove it, or set `operator: slinky`",
        _slinky_only("namespace", "the namespace of Slinky's Controller and NodeSets"),
    ),
    NoEffect(
        "workloads[].autoscale.prometheus.activationThreshold",
        "`autoscale.min` is above 0 (KEDA reads it only to scale from and to zero)",
        "remove it, or set `autoscale.min: 0`",
        _activation,
    ),
    NoEffect(
        "workloads[].minMember",
        f"the workload's kind has no gang with the policy's scheduler backend (the kinds with one: {_gang_kinds()})",
        "remove it, or use a kind that runs as a gang",
        _gang,
    ),
    NoEffect(
        "workloads[].namespaceDefault",
        "no MutatingAdmissionPolicy on the Kubernetes version (see [Kubernetes versions](#kubernetes-versions)), or "
        "the tenant's admission mode is off",
        "remove it; or turn on `admission.mutatingAdmissionPolicyBeta` "
        f"(1.{_MUTATING.beta_since}, 1.{_MUTATING.since - 1}) or the tenant's admission",
        _namespace_default,
    ),
    NoEffect(
        "workloads[].sameZone",
        f"no pool the workload can use states a zone (`{ZONE}`, in its `labels`, or one its provisioner sets on each "
        "node it makes): policyc cannot keep its pods in one, and on nodes without the label they are never placed; "
        "or all of them state the same zone",
        "remove it, or state the pools' zones in their `labels`",
        _zone,
    ),
)
"""Every field that can have no effect where it stands, in the order of the table in docs/language.md (by field)."""

"""Resolve a parsed policy into the `Cluster` IR: expand node ranges, resolve references, apply defaults.

Every broken reference, duplicate name and unexpandable node range is reported here, with a hint. An
item whose references do not resolve is left out of the IR; the caller stops after this stage if any
error was reported, so backends never see a half-resolved cluster.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path as FsPath

from policyc import ir
from policyc.codes import Severity
from policyc.diagnostics import Diagnostic, Path, diag, did_you_mean, where
from policyc.gpu import accelerators, dra, mig, slurm
from policyc.gpu.accelerators import CPU_TIER, GPU_OPERATOR_NAMESPACE, VENDORS
from policyc.ir import DEVICE_PLUGIN_CONFIG, MIG_CONFIG, RDMA_LABEL
from policyc.k8s import versions
from policyc.k8s.objects import QUOTA_OBJECT_COUNTS
from policyc.k8s.quantity import Quantity
from policyc.language.model import policy as m
from policyc.language.model.types import GPU
from policyc.language.noderanges import MAX_NODES, check, expand
from policyc.language.parse import Parsed
from policyc.registry import every_settings, settings

OWNED_DOMAINS = {
    "kubernetes.io": "Kubernetes (node-feature-discovery's feature.node.kubernetes.io among them)",
    "k8s.io": "Kubernetes",
    "x-k8s.io": "Kubernetes SIG projects (Cluster API, JobSet, LeaderWorkerSet ...)",
    "nvidia.com": "NVIDIA's GPU Operator, device plugin and GPU Feature Discovery",
    "amd.com": "AMD's GPU operator and device plugin",
    "intel.com": "Intel's device plugins",
    "habana.ai": "Intel Gaudi's device plugin",
    "huawei.com": "Huawei Ascend's device plugin",
    "kubeflow.org": "Kubeflow",
    "argoproj.io": "Argo CD",
    "karpenter.sh": "Karpenter",
}
"""Label domains other systems own, with who owns them: labels and taints policyc managed under them would be
mistaken for theirs, and theirs for policyc's (subdomains included). The scheduler backends' own domains
(their `settings.LABEL_DOMAINS`) count too."""
GPU_OPERATOR_AGENTS = (
    "nvidia-driver-daemonset",
    "nvidia-container-toolkit-daemonset",
    "nvidia-device-plugin-daemonset",
    "gpu-feature-discovery",
    "nvidia-dcgm-exporter",
    "nvidia-mig-manager",
    "nvidia-operator-validator",
    "gpu-operator-node-feature-discovery-worker",
)
"""The GPU Operator's DaemonSets on GPU nodes (its operands, and the node-feature-discovery worker of its chart,
named after a Helm release called gpu-operator): the node agents of a policy that names none."""


def supported_kubernetes_versions() -> list[str]:
    """Minor versions with strict schemas in kubernetes-validate (found without importing it: it is slow)."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = FsPath(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    versions = {d.name[1:].rsplit(".", 1)[0] for d in root.glob("v*-local-strict")} if root.is_dir() else set()
    return sorted(versions, key=lambda v: tuple(int(x) for x in v.split(".")))


def resolve(parsed: Parsed, file: str) -> tuple[ir.Cluster | None, list[Diagnostic]]:
    """Build the cluster IR from a parsed policy; returns it (None if unusable) and the diagnostics."""
    assert parsed.policy is not None
    return _Resolver(parsed, file).run()


@dataclass(frozen=True, slots=True)
class _Ambiguous:
    """'gpu' for a tenant whose work uses accelerators of several resources."""

    resources: tuple[str, ...]
    why: str | None
    """None when the workloads or tiers that would tell were left out for errors already reported: not reported."""


class _Resolver:
    def __init__(self, parsed: Parsed, file: str):
        self.parsed = parsed
        self.policy = parsed.policy
        self.spec = parsed.policy.spec
        self.file = file
        self.out: list[Diagnostic] = []
        self.keys = ir.LabelKeys(self.spec.domain)
        self.node_owner: dict[str, str] = {}
        self.tier_resources: dict[str, str] = {}
        """GPU tier -> the accelerator resource of its pools."""
        self.pool_resources: set[str] = set()
        self.dra_tiers: dict[str, int] = {}
        """GPU tiers allocated with DRA, and their index in gpuTiers."""
        """The accelerator resources of the pools."""

    def report(self, d: Diagnostic) -> None:
        self.out.append(d)

    def path(self, list_name: str, index: int, *rest: str | int) -> Path:
        return (*self.parsed.source_path(list_name, index), *rest)

    def known(self, list_name: str, name: str, defined: Iterable[str]) -> bool:
        """Is `name` defined, or was its item dropped for errors already reported?"""
        return name in defined or self.parsed.was_dropped(list_name, name)

    def run(self) -> tuple[ir.Cluster | None, list[Diagnostic]]:
        spec = self.spec
        if not self.within_node_limit():
            return None, self.out
        self.check_version()
        self.check_domain()
        for list_name, items, what in (
            ("gpuTiers", spec.gpu_tiers, "GPU tier"),
            ("nodePools", spec.node_pools, "node pool"),
        ):
            if not items and not self.parsed.dropped.get(list_name):
                self.report(
                    diag(
                        "invalid-value",
                        f"the policy defines no {what}",
                        ("spec", list_name),
                        hint=f"define at least one {what}",
                    )
                )
        tiers = self.tiers()
        product_tier = {p: t.name for t in tiers for p in t.products}
        pools = self.pools(product_tier)
        tiers = self.tiers_with_accelerators(tiers, pools)
        control_plane = self.control_plane(pools)
        classes = self.priority_classes()
        tenants = self.tenants({c.name for c in classes})
        workloads = self.workloads({t.name: t for t in tiers}, tenants, classes, pools)
        agents = self.node_agents(pools)
        cluster = ir.Cluster(
            name=self.policy.metadata.name,
            source=os.path.basename(self.file),
            kubernetes_version=spec.kubernetes_version,
            keys=self.keys,
            gpu_resource=spec.gpu_resource,
            tiers=tuple(sorted(tiers, key=lambda t: t.name)),
            pools=tuple(sorted(pools, key=lambda p: p.name)),
            control_plane_nodes=tuple(sorted(control_plane)),
            priority_classes=tuple(sorted(classes, key=lambda c: c.name)),
            scheduler=spec.scheduler,
            tenants=tuple(sorted(tenants.values(), key=lambda t: t.name)),
            workloads=tuple(sorted(workloads, key=lambda w: w.name)),
            node_agents=tuple(sorted(agents, key=lambda a: (a.namespace, a.name))),
            mutating_admission_beta=self.mutating_admission_beta(),
            keda=self.spec.autoscaling is not None and self.spec.autoscaling.keda,
            monitoring=self.monitoring(pools),
            slurm=self.slurm_settings(pools, {c.name for c in classes}),
            # Totals over the cluster are only trustworthy when no item was left out for an error.
            complete=self.parsed.complete and not any(d.severity is Severity.ERROR for d in self.out),
        )
        return cluster, self.out

    # --- spec-level settings -------------------------------------------------------------------------

    def within_node_limit(self) -> bool:
        """Count the nodes of every pattern before expanding any: a few bytes of ranges could stand for
        millions of nodes."""
        patterns = [(self.path("nodePools", i, "nodes", j), p) for i, pool in enumerate(self.spec.node_pools)
                    for j, p in enumerate(pool.nodes)]  # fmt: skip
        if self.spec.control_plane:
            patterns += [(("spec", "controlPlane", "nodes", j), p) for j, p in enumerate(self.spec.control_plane.nodes)]
        total = 0
        for path, pattern in patterns:
            total += check(pattern)
            if total > MAX_NODES:
                self.report(
                    diag(
                        "invalid-node-pattern",
                        f"with '{pattern}' the policy holds more than {MAX_NODES:,} nodes",
                        path,
                        hint="policyc compiles clusters of up to 100,000 nodes; is a range longer than meant?",
                    )
                )
                return False
        return True

    def admission_mode(self, stated: m.Admission | m.TenantAdmission | None, path: Path) -> str | None:
        """The mode stated at `path` (None when nothing is stated there); off, with an error, where the API server
        has no ValidatingAdmissionPolicy v1 (`policyc.k8s.versions`)."""
        if stated is None or stated.mode is None:
            return None
        version, api = self.spec.kubernetes_version, versions.VALIDATING_ADMISSION_POLICY
        if stated.mode != "off" and not versions.serves(version, api):
            self.report(
                diag(
                    "admission-needs-newer-kubernetes",
                    f"admission mode {stated.mode} needs {api.kind} {api.version}, which Kubernetes {version} "
                    f"does not serve (1.{api.since} and later do)",
                    path,
                    hint=f"set mode: off, or raise kubernetesVersion to 1.{api.since} or later",
                )
            )
            return "off"
        return stated.mode

    def mutating_admission_beta(self) -> bool:
        stated = self.spec.admission is not None and self.spec.admission.mutating_admission_policy_beta
        version, api = self.spec.kubernetes_version, versions.MUTATING_ADMISSION_POLICY
        if stated and not versions.can_turn_on_beta(version, api):
            self.report(
                diag(
                    "mutating-admission-needs-newer-kubernetes",
                    f"Kubernetes {version} has no {api.kind} {api.beta_version} (1.{api.beta_since} and later have it, "
                    "behind a feature gate)",
                    ("spec", "admission", "mutatingAdmissionPolicyBeta"),
                    hint=f"remove mutatingAdmissionPolicyBeta, or raise kubernetesVersion to 1.{api.beta_since} or "
                    "later",
                )
            )
        return stated

    def check_version(self) -> None:
        supported = supported_kubernetes_versions()
        version = self.spec.kubernetes_version
        if supported and version not in supported:
            self.report(
                diag(
                    "unsupported-version",
                    f"kubernetesVersion {version} has no API schemas to verify the output against",
                    ("spec", "kubernetesVersion"),
                    hint=f"supported versions are {supported[0]} to {supported[-1]}",
                )
            )

    def check_domain(self) -> None:
        domain = self.spec.domain
        backends = {d: m.TITLE for m in every_settings() for d in m.LABEL_DOMAINS}
        for owned, owner in {**backends, **OWNED_DOMAINS}.items():
            if domain == owned or domain.endswith("." + owned):
                self.report(
                    diag(
                        "reserved-domain",
                        f"domain '{domain}' belongs to {owner}: policyc's node labels and taints under it would "
                        "be mixed up with theirs",
                        ("spec", "domain"),
                        hint="use a DNS name your organisation owns, e.g. ai.example.com",
                    )
                )
                return

    def unique(self, list_name: str, items: Sequence, what: str) -> list[tuple[int, object]]:
        """Items with a name not seen before (duplicates are reported and skipped)."""
        seen: dict[str, int] = {}
        out = []
        for i, item in enumerate(items):
            if item.name in seen:
                first = self.path(list_name, seen[item.name], "name")
                self.report(
                    diag(
                        "duplicate-name",
                        f"{what} '{item.name}' is already defined",
                        self.path(list_name, i, "name"),
                        hint="it is first defined on line {line}; names must be unique: rename one of them, or remove "
                        "the copy",
                        related=first,
                    )
                )
                continue
            seen[item.name] = i
            out.append((i, item))
        return out

    # --- tiers and pools ---------------------------------------------------------------------------------

    def tiers(self) -> list[ir.Tier]:
        owner: dict[str, str] = {}
        tiers = []
        for i, tier in self.unique("gpuTiers", self.spec.gpu_tiers, "GPU tier"):
            if tier.name == CPU_TIER:
                self.report(
                    diag(
                        "invalid-value",
                        f"tier name '{CPU_TIER}' is the tier of pools without GPUs",
                        self.path("gpuTiers", i, "name"),
                        hint="give the GPU tier another name; pools without gpu are the cpu tier",
                    )
                )
                continue
            for j, product in enumerate(tier.products):
                if product in owner and owner[product] != tier.name:
                    self.report(
                        diag(
                            "product-in-two-tiers",
                            f"GPU product '{product}' is in tiers '{owner[product]}' and '{tier.name}'",
                            self.path("gpuTiers", i, "products", j),
                            hint="a product belongs to exactly one tier: remove it here, or from tier "
                            f"'{owner[product]}'",
                        )
                    )
                owner.setdefault(product, tier.name)
            if tier.dra and self.dra_available(tier, i):
                self.dra_tiers[tier.name] = i
            tiers.append(ir.Tier(tier.name, tuple(sorted(set(tier.products))), self.path("gpuTiers", i)))
        return tiers

    def dra_available(self, tier: m.GpuTier, i: int) -> bool:
        """Whether the cluster serves DRA and the tier's DeviceClass selector is within the API server's limit."""
        version, api = self.spec.kubernetes_version, versions.DYNAMIC_RESOURCE_ALLOCATION
        if not versions.serves(version, api):
            hint = f"set kubernetesVersion to 1.{api.since} or later, or remove dra"
            self.report(diag("dra-unsupported", f"tier '{tier.name}' uses DRA, which Kubernetes {version} does not "
                             f"serve ({api.group_version})", self.path("gpuTiers", i, "dra"), hint=hint))  # fmt: skip
            return False
        length = len(dra.selector(tier.products))
        if length > dra.SELECTOR_MAX_LENGTH:
            self.report(
                diag(
                    "dra-unsupported",
                    f"the DeviceClass selector of tier '{tier.name}' would be {length} characters, above the API "
                    f"server's {dra.SELECTOR_MAX_LENGTH} (each '-' of a product may be a space in the driver's name)",
                    self.path("gpuTiers", i, "products"),
                    hint="split the tier's products into several tiers",
                )
            )
            return False
        return True

    def claim_nodes(self, patterns: Sequence[str], claimant: str, base: Path) -> list[str]:
        """Expand `patterns` and record `claimant` as their owner, reporting nodes someone already owns:
        one diagnostic per pattern and previous owner, at the pattern."""
        nodes = []
        for j, pattern in enumerate(patterns):
            clashes: dict[str, list[str]] = {}
            expanded = expand(pattern)
            for node in expanded:
                if node in self.node_owner:
                    clashes.setdefault(self.node_owner[node], []).append(node)
                else:
                    self.node_owner[node] = claimant
                    nodes.append(node)
            for other, clashing in clashes.items():
                listed = (
                    f"node {clashing[0]}"
                    if len(clashing) == 1
                    else (f"{len(clashing)} nodes ({clashing[0]} … {clashing[-1]})")
                )
                is_are, them = ("is", "it") if len(clashing) == 1 else ("are", "them")
                if other == claimant:
                    what = f"{is_are} listed twice in {other}"
                    leave_out = (
                        f"remove '{pattern}'" if len(clashing) == len(expanded) else f"leave {them} out of '{pattern}'"
                    )
                    hint = f"list each node once: {leave_out}"
                else:
                    what = f"of {claimant} {is_are} also in {other}"
                    hint = (
                        "a node belongs to exactly one pool, and control-plane nodes to none: "
                        f"leave {them} out of '{pattern}' here, or out of the nodes of {other}"
                    )
                self.report(diag("node-in-two-pools", f"{listed} {what}", (*base, j), hint=hint))
        return nodes

    def pools(self, product_tier: dict[str, str]) -> list[ir.Pool]:
        pools = []
        tiers_complete = not self.parsed.dropped.get("gpuTiers")
        for i, pool in self.unique("nodePools", self.spec.node_pools, "node pool"):
            nodes = self.claim_nodes(pool.nodes, f"pool '{pool.name}'", self.path("nodePools", i, "nodes"))
            if pool.gpu is None:
                self.check_extra_keys(pool, i)
                pools.append(self.pool(pool, i, CPU_TIER, nodes))
                continue
            tier = product_tier.get(pool.gpu.product)
            if tier is None and not tiers_complete:  # its tier may be one that failed to parse
                self.parsed.leave_out("nodePools", pool.name)
                continue
            if tier is None:
                self.report(
                    diag(
                        "product-without-tier",
                        f"GPU product '{pool.gpu.product}' of pool '{pool.name}' is in no GPU tier",
                        self.path("nodePools", i, "gpu", "product"),
                        hint=did_you_mean(pool.gpu.product, product_tier)
                        or "add the product to the products of a gpuTier",
                    )
                )
                continue
            self.check_extra_keys(pool, i)
            pools.append(self.pool(pool, i, tier, nodes))
        return pools

    def tiers_with_accelerators(self, tiers: list[ir.Tier], pools: list[ir.Pool]) -> list[ir.Tier]:
        """Each GPU tier with the resource and product key of its pools, which must agree (one vendor and resource
        per tier); a tier without pools has NVIDIA's, with the policy's gpuResource."""
        first: dict[str, ir.Pool] = {}
        for p in pools:
            if p.tier == CPU_TIER:
                continue
            seen = first.setdefault(p.tier, p)
            if (seen.resource, seen.product_key) != (p.resource, p.product_key):
                self.report(
                    diag(
                        "tier-mixes-vendors",
                        f"pool '{p.name}' gives tier '{p.tier}' {p.resource} (labelled by {p.product_key}), but pool "
                        f"'{seen.name}' gives it {seen.resource} (labelled by {seen.product_key})",
                        (*p.path, "gpu"),
                        hint="a tier groups products of one vendor with one resource name: put the products in "
                        "separate tiers",
                    )
                )
        nvidia = accelerators.product_key(accelerators.NVIDIA, self.keys.domain)
        self.pool_resources = {p.resource for p in pools if p.resource}
        out = []
        for t in tiers:
            pool = first.get(t.name)
            resource, key = (pool.resource, pool.product_key) if pool else (self.spec.gpu_resource, nvidia)
            device_class = dra.class_name(t.name, self.keys.domain) if t.name in self.dra_tiers else None
            if device_class:
                resource = dra.devices_key(device_class)
            self.tier_resources[t.name] = resource
            out.append(ir.Tier(t.name, t.products, t.path, resource, key, device_class))
        return out

    def check_extra_keys(self, pool: m.NodePool, i: int) -> None:
        vendor = VENDORS[pool.gpu.vendor] if pool.gpu else None
        setting = "gpuFeatureDiscovery is false" if vendor and vendor.discovery else "always"
        owners = {
            key: f"{vendor.discovery or 'policyc'}'s (policyc sets it from {field} when {setting})"
            for key, field in (accelerators.owned_labels(vendor).items() if vendor else ())
        }
        if vendor and not vendor.product_label:
            owners[accelerators.product_key(vendor, self.keys.domain)] = "set by policyc from gpu.product"
        owners |= {
            RDMA_LABEL: "set by policyc from 'rdma: true'",
            DEVICE_PLUGIN_CONFIG: "set by policyc from gpu.sharing",
            MIG_CONFIG: "set by policyc from gpu.mig",
        }
        for key in pool.labels:
            under_domain = key.startswith(self.keys.domain + "/")
            owner = "set by policyc" if under_domain else owners.get(key)
            if owner:
                self.report(
                    diag(
                        "reserved-key",
                        f"label '{key}' is {owner}",
                        self.path("nodePools", i, "labels", key),
                        at_key=True,
                        hint=f"remove it, or use a key outside '{self.keys.domain}/' for a label of your own"
                        if under_domain
                        else "remove it",
                    )
                )
        product_keys = sorted({v.product_label for v in VENDORS.values() if v.product_label})
        for j, taint in enumerate(pool.taints):
            if taint.key.startswith(self.keys.domain + "/") or taint.key in product_keys:
                self.report(
                    diag(
                        "reserved-key",
                        f"taint '{taint.key}' is set by policyc",
                        self.path("nodePools", i, "taints", j, "key"),
                        hint=f"keys under '{self.keys.domain}/' and the product labels ({', '.join(product_keys)}) "
                        "are policyc's; use a key of your own, here and in the tolerations of the workloads that "
                        "run on the pool",
                    )
                )

    def pool(self, pool: m.NodePool, i: int, tier: str, nodes: list[str]) -> ir.Pool:
        keys, gpu = self.keys, pool.gpu
        labels = {keys.usage: pool.usage, keys.tier: tier, keys.pool: pool.name, **pool.labels}
        taints = [ir.Taint(keys.usage, pool.usage, "NoSchedule")]
        taints += (ir.Taint(t.key, t.value, t.effect) for t in pool.taints)
        if pool.slurm is not None and not pool.slurm.shared:  # Slurm-only: no workload template tolerates it
            taints.append(ir.Taint(keys.slurm_only, "", "NoSchedule"))
        if pool.rdma:
            labels[RDMA_LABEL] = "true"
        common = dict(
            name=pool.name,
            usage=pool.usage,
            tier=tier,
            nodes=tuple(nodes),
            gfd=pool.gpu_feature_discovery,
            path=self.path("nodePools", i),
            rdma_resource=pool.rdma.resource if isinstance(pool.rdma, m.PoolRdma) else None,
            interfaces=tuple(pool.rdma.interfaces) if isinstance(pool.rdma, m.PoolRdma) else (),
            slurm=_pool_slurm(pool, self.path("nodePools", i, "slurm")),
        )
        if gpu is None:  # tainted by its tier, which only CPU-only workloads tolerate
            taints.append(ir.Taint(keys.tier, CPU_TIER, "NoSchedule"))
            return ir.Pool(
                product=CPU_TIER,
                product_key=keys.tier,
                gpus_per_node=0,
                gpu_memory=None,
                labels=dict(sorted(labels.items())),
                taints=tuple(sorted(taints, key=lambda t: (t.key, t.effect))),
                allocatable=self.pool_allocatable(pool, i, self.spec.gpu_resource),
                **common,
            )
        vendor = self.vendor(gpu, i)
        resource = gpu.resource or (self.spec.gpu_resource if vendor is accelerators.NVIDIA else vendor.resource)
        sharing, partitions = self.nvidia_only(gpu, vendor, i)
        if tier in self.dra_tiers:
            resource = dra.devices_key(dra.class_name(tier, keys.domain))
            sharing, partitions = self.whole_nvidia_cards(pool, i, tier, vendor)
        if sharing is not None:
            labels[DEVICE_PLUGIN_CONFIG] = f"{sharing.strategy}-{sharing.replicas}"
        gpus_per_node = gpu.count * (sharing.replicas if sharing else 1)
        allocatable = self.pool_allocatable(pool, i, resource)
        layout = self.mig_layout(gpu, i) if partitions is not None else None
        if layout is not None:
            labels[MIG_CONFIG] = layout.name
            if layout.strategy == "single":
                gpus_per_node = sum(layout.per_node.values())
            else:
                gpus_per_node = 0
                for device, count in layout.resources.items():
                    allocatable.setdefault(device, Quantity.from_value(count))
                allocatable = dict(sorted(allocatable.items()))
        product_key = accelerators.product_key(vendor, keys.domain)
        if vendor.product_label is None:  # nothing else names the product: policyc does
            labels[product_key] = gpu.product
        elif not pool.gpu_feature_discovery:
            values = {"gpu.product": gpu.product, "gpu.count": str(gpu.count)}
            if gpu.memory is not None:
                values["gpu.memory"] = str(gpu.memory.value // (1024 * 1024))  # discovery writes MiB
            labels |= {k: values[f] for k, f in accelerators.owned_labels(vendor).items() if f in values}
        taints.append(ir.Taint(product_key, gpu.product, "NoSchedule"))
        return ir.Pool(
            product=gpu.product,
            gpus_per_node=gpus_per_node,
            gpu_memory=gpu.memory,
            labels=dict(sorted(labels.items())),
            taints=tuple(sorted(taints, key=lambda t: (t.key, t.effect))),
            allocatable=allocatable,
            sharing=(sharing.strategy, sharing.replicas) if sharing else None,
            mig=layout,
            resource=resource,
            product_key=product_key,
            vendor=vendor.name,
            **common,
        )

    def vendor(self, gpu: m.Gpu, i: int) -> accelerators.Vendor:
        """The pool's vendor as stated (nvidia when omitted); a product known to be another vendor's is reported."""
        vendor, maker = VENDORS[gpu.vendor], accelerators.maker(gpu.product)
        if maker is None or maker is vendor:
            return vendor
        at = self.path("nodePools", i, "gpu")
        if "vendor" in gpu.model_fields_set:
            message = f"gpu.vendor is {vendor.name}, but GPU product '{gpu.product}' is {maker.name}'s"
            self.report(
                diag("vendor-contradicts-product", message, (*at, "vendor"), hint=f"write vendor: {maker.name}")
            )
        else:
            message = (
                f"GPU product '{gpu.product}' is {maker.name}'s, and gpu.vendor is nvidia when omitted: the cards "
                f"would be taken for NVIDIA's ({gpu.resource or self.spec.gpu_resource}, NVIDIA's product label and "
                "taint), and pods would not run on them"
            )
            written = f"gpu: {{vendor: {maker.name}, product: {gpu.product}, ...}}"
            hint = f"add vendor: {maker.name} to the pool's gpu ({written})"
            self.report(diag("vendor-contradicts-product", message, (*at, "product"), hint=hint))
        return vendor

    @functools.cached_property
    def mig_layouts(self) -> list[tuple[str, m.GpuMig]]:
        """(pool, its MIG layout as written) for the NVIDIA pools that partition their cards."""
        return [(p.name, p.gpu.mig) for p in self.spec.node_pools if p.gpu and p.gpu.mig and p.gpu.vendor == "nvidia"]

    @functools.cached_property
    def mig_strategy(self) -> str | None:
        """The cluster's one MIG strategy (the GPU Operator's mig.strategy): the pools' own where they agree, else
        single if every MIG pool's cards take one profile, else mixed (the pools with the other are reported)."""
        strategies = {layout.strategy for _, layout in self.mig_layouts}
        if len(strategies) < 2:
            return next(iter(strategies), None)
        return "mixed" if any(len(_mig_profiles(layout)) > 1 for _, layout in self.mig_layouts) else "single"

    def mig_layout(self, gpu: m.Gpu, i: int) -> mig.Layout:
        """The pool's MIG layout under the cluster's strategy; a pool of another strategy, and card groups that do
        not take every card of a node, are reported."""
        partitions = gpu.mig
        assert partitions is not None
        strategy = self.mig_strategy or partitions.strategy
        if partitions.strategy != strategy:
            self.report_mig_strategy(i, partitions.strategy, strategy)
        if partitions.cards is None:
            return mig.Layout(strategy, ((gpu.count, dict(sorted(partitions.devices.items()))),))  # type: ignore[union-attr]
        counted = sum(group.count for group in partitions.cards)
        if counted != gpu.count:
            self.report(
                diag(
                    "mig-layout-invalid",
                    f"gpu.mig.cards lays out {counted} cards, but the pool's nodes have {gpu.count} (gpu.count)",
                    self.path("nodePools", i, "gpu", "mig", "cards"),
                    hint=f"make the groups' counts add up to {gpu.count}",
                )
            )
        groups = tuple((group.count, dict(sorted(group.devices.items()))) for group in partitions.cards)
        return mig.Layout(strategy, groups, per_card=True)

    def report_mig_strategy(self, i: int, stated: str, strategy: str) -> None:
        example = next(name for name, layout in self.mig_layouts if layout.strategy == strategy)
        several = next((name for name, layout in self.mig_layouts if len(_mig_profiles(layout)) > 1), None)
        why = f"pool '{several}' has several profiles" if several else "every MIG pool's cards take one profile"
        self.report(
            diag(
                "mig-strategies-differ",
                f"pool '{self.spec.node_pools[i].name}' uses the MIG strategy {stated} and pool '{example}' "
                f"{strategy}: the GPU Operator has one mig.strategy for the cluster",
                self.path("nodePools", i, "gpu", "mig", "strategy"),
                hint=f"use strategy: {strategy} ({why})",
            )
        )

    def nvidia_only(
        self, gpu: m.Gpu, vendor: accelerators.Vendor, i: int
    ) -> tuple[m.GpuSharing | None, m.GpuMig | None]:
        """The pool's sharing and MIG layout, which only NVIDIA's device plugin and MIG manager provide."""
        if vendor is accelerators.NVIDIA:
            return gpu.sharing, gpu.mig
        for field, value in (("sharing", gpu.sharing), ("mig", gpu.mig)):
            if value is not None:
                self.report(
                    diag(
                        "accelerator-feature-unsupported",
                        f"gpu.{field} is NVIDIA's (its device plugin and MIG manager); this pool's vendor is "
                        f"{vendor.name}",
                        self.path("nodePools", i, "gpu", field),
                        hint=f"remove gpu.{field}, or set gpu.vendor: nvidia if the cards are NVIDIA's",
                    )
                )
        return None, None

    def whole_nvidia_cards(self, pool: m.NodePool, i: int, tier: str, vendor: accelerators.Vendor) -> tuple[None, None]:
        """A pool of a DRA tier: NVIDIA's DRA driver serves it whole cards, which it claims instead of requesting a
        device plugin's resource; MIG, sharing, another vendor or a resource name of its own are refused."""
        assert pool.gpu is not None
        given = (
            ("vendor", vendor is not accelerators.NVIDIA, f"is {vendor.name}, and the DRA driver is NVIDIA's"),
            ("resource", pool.gpu.resource is not None, "names a resource, and its GPUs are claimed, not requested"),
            ("mig", pool.gpu.mig is not None, "partitions its cards with MIG, and the tier claims whole cards"),
            ("sharing", pool.gpu.sharing is not None, "shares its cards, and the tier claims whole cards"),
        )
        elsewhere = f"put the pool's product in a tier without dra (or remove dra from tier '{tier}')"
        for field, wrong, why in given:
            if wrong:
                self.report(
                    diag(
                        "dra-unsupported",
                        f"pool '{pool.name}' of DRA tier '{tier}' {why}",
                        self.path("nodePools", i, "gpu", field),
                        # the vendor is the hardware's: only the tier can change
                        hint=elsewhere if field == "vendor" else f"remove gpu.{field}, or {elsewhere}",
                    )
                )
        return None, None

    def pool_allocatable(self, pool: m.NodePool, i: int, gpu: str) -> dict[str, Quantity]:
        """The pool's allocatable per node ('gpu': its accelerator resource), with its RDMA resource (what its device
        plugin offers) unless stated."""
        out = self.resources(pool.allocatable, self.path("nodePools", i, "allocatable"), gpu)
        if isinstance(pool.rdma, m.PoolRdma):
            out.setdefault(pool.rdma.resource, Quantity.from_value(pool.rdma.per_node))
        return dict(sorted(out.items()))

    def control_plane(self, pools: list[ir.Pool]) -> list[str]:
        if self.spec.control_plane is None:
            return []
        return self.claim_nodes(self.spec.control_plane.nodes, "the control plane", ("spec", "controlPlane", "nodes"))

    # --- priorities and tenants ------------------------------------------------------------------------

    def priority_classes(self) -> list[ir.PriorityClass]:
        return [
            ir.PriorityClass(
                c.name, c.value, c.global_default, c.preemption_policy, c.description, self.path("priorityClasses", i)
            )
            for i, c in self.unique("priorityClasses", self.spec.priority_classes, "priority class")
        ]

    def resources(self, given: dict[str, Quantity], base: Path, gpu: str | _Ambiguous) -> dict[str, Quantity]:
        """Resolve 'gpu' to the accelerator resource `gpu`; report a GPU given under both names, and 'gpu' where it
        could mean several resources (`gpu` a tuple of them: the tenant's workloads use several vendors')."""
        if isinstance(gpu, _Ambiguous):
            if GPU in given and gpu.why is not None:
                self.report(
                    diag(
                        "ambiguous-gpu-resource",
                        f"'{GPU}' could mean {' or '.join(gpu.resources)}: {gpu.why}",
                        (*base, GPU),
                        at_key=True,
                        hint=f"give the amount of each resource instead of '{GPU}' ("
                        + ", ".join(f"{r}: <count>" for r in gpu.resources)
                        + ")",
                    )
                )
            return dict(sorted((n, q) for n, q in given.items() if n != GPU))
        if GPU in given and gpu in given:
            self.report(
                diag(
                    "duplicate-resource",
                    f"'{GPU}' and '{gpu}' name the same resource",
                    (*base, gpu),
                    at_key=True,
                    hint=f"keep only '{GPU}'",
                )
            )
        out = {(gpu if name == GPU else name): q for name, q in given.items()}
        return dict(sorted(out.items()))

    def tenant_gpu(self, tenant: str) -> str | _Ambiguous:
        """What 'gpu' means for `tenant`: the accelerator resource of the tiers its workloads use (of every pool when
        it declares none), unless they are several."""
        tiers = sorted({w.gpu_tier for w in self.spec.workloads
                        if w.tenant == tenant and w.gpu_tier in self.tier_resources})  # fmt: skip
        used = {self.tier_resources[t] for t in tiers} or self.pool_resources
        found = sorted(used or {self.spec.gpu_resource})
        if len(found) == 1:
            return found[0]
        if any(self.parsed.dropped.get(name) for name in ("gpuTiers", "nodePools", "workloads")):
            return _Ambiguous(tuple(found), None)  # a workload, tier or pool left out may be the one that tells
        if tiers:
            why = "the tenant's workloads use tiers " + ", ".join(f"{t} ({self.tier_resources[t]})" for t in tiers)
        elif any(w.tenant == tenant for w in self.spec.workloads):
            why = "the tenant's workloads use no GPU, and the pools have several accelerators"
        else:
            why = "the tenant names no workload, and the pools have several accelerators"
        return _Ambiguous(tuple(found), why)

    def tenants(self, class_names: set[str]) -> dict[str, ir.Tenant]:
        unique = self.unique("tenants", self.spec.tenants, "tenant")
        default_admission = self.admission_mode(
            self.spec.admission, ("spec", "admission", "mode")
        ) or versions.default_admission_mode(self.spec.kubernetes_version)
        names = {t.name for _, t in unique}
        ns_owner: dict[str, str] = {}
        out = {}
        for i, tenant in unique:
            gpu = self.tenant_gpu(tenant.name)
            for j, ns in enumerate(tenant.namespaces):
                if ns in ns_owner:
                    other = ns_owner[ns]
                    what = (
                        f"listed twice in tenant '{other}'"
                        if other == tenant.name
                        else f"also claimed by tenant '{other}'"
                    )
                    self.report(
                        diag(
                            "namespace-in-two-tenants",
                            f"namespace '{ns}' is {what}",
                            self.path("tenants", i, "namespaces", j),
                            hint="a namespace belongs to exactly one tenant: remove it here"
                            + ("" if other == tenant.name else f", or from tenant '{other}'"),
                        )
                    )
                ns_owner.setdefault(ns, tenant.name)
            allowed = tenant.priority_classes
            if allowed is not None:
                for j, name in enumerate(allowed):
                    if not self.known("priorityClasses", name, class_names):
                        self.report(
                            diag(
                                "unknown-priority-class",
                                f"tenant '{tenant.name}' allows unknown priority class '{name}'",
                                self.path("tenants", i, "priorityClasses", j),
                                hint=did_you_mean(name, class_names),
                            )
                        )
            forbidden = () if allowed is None else tuple(sorted(class_names - set(allowed)))
            parent = tenant.queue.parent
            if parent is not None and (parent == tenant.name or parent not in names):
                parent = None  # left out of the IR: the queue tree checks see no broken edge
            if tenant.queue.parent != parent and not self.parsed.was_dropped("tenants", tenant.queue.parent):
                self.report(
                    diag(
                        "unknown-parent-queue",
                        f"queue parent '{tenant.queue.parent}' of tenant '{tenant.name}' is "
                        + ("the tenant itself" if tenant.queue.parent == tenant.name else "not a tenant"),
                        self.path("tenants", i, "queue", "parent"),
                        hint=did_you_mean(tenant.queue.parent, names - {tenant.name})
                        or "remove parent (a queue without one is a child of the root queue)"
                        + ("" if tenant.queue.parent == tenant.name else f", or define tenant '{tenant.queue.parent}'"),
                    )
                )
            out[tenant.name] = ir.Tenant(
                name=tenant.name,
                namespaces=tuple(tenant.namespaces),
                allowed_priority_classes=None if allowed is None else tuple(sorted(set(allowed) & class_names)),
                forbidden_priority_classes=forbidden,
                queue=self.queue(tenant.queue, parent, self.path("tenants", i, "queue"), gpu),
                quota=self.quota(
                    tenant.quota,
                    self.path("tenants", i, "quota"),
                    class_names if allowed is None else set(allowed) & class_names,
                    class_names,
                    gpu,
                ),
                limit_range=self.limit_range(tenant.limit_range, self.path("tenants", i, "limitRange"), gpu),
                path=self.path("tenants", i),
                admission=self.admission_mode(tenant.admission, self.path("tenants", i, "admission", "mode"))
                or default_admission,
            )
        return out

    def container_resources(
        self, given: dict[str, Quantity], base: Path, gpu: str | _Ambiguous, counter: str
    ) -> dict[str, Quantity]:
        """`resources` where only container requests count (`counter`: what counts them): GPUs of a DRA tier, which
        pods claim, are reported and left out."""
        out = self.resources(given, base, gpu)
        for name in [n for n in out if dra.is_devices_key(n)]:
            key = GPU if GPU in given and name == gpu else name
            self.report(
                diag(
                    "dra-gpu-uncounted",
                    f"'{key}' here is {name}, the GPUs of a DRA tier, which pods claim; {counter} counts only what "
                    "containers request",
                    (*base, key),
                    at_key=True,
                    hint="bound the tier's GPUs in the tenant's quota.requests (a ResourceQuota counts claimed "
                    "devices), and remove them here",
                )
            )
            del out[name]
        return out

    def queue(self, q: m.Queue, parent: str | None, base: Path, gpu: str | _Ambiguous) -> ir.Queue:
        counter = "the scheduler's queue"
        guarantee = self.container_resources(q.guarantee, (*base, "guarantee"), gpu, counter)
        capability = self.container_resources(q.capability, (*base, "capability"), gpu, counter)
        deserved = self.container_resources(q.deserved or {}, (*base, "deserved"), gpu, counter)
        # deserved defaults to the guarantee, resource by resource (the language's rule).
        completed = dict(sorted({**guarantee, **deserved}.items()))
        return ir.Queue(q.weight, guarantee, completed, deserved, capability, q.reclaimable, parent, q.priority)

    def quota(
        self, q: m.Quota | None, base: Path, usable: set[str], class_names: set[str], gpu: str | _Ambiguous
    ) -> ir.Quota | None:
        """The tenant's quota; `usable`: the classes its pods may name, of the policy's `class_names`; `gpu`: what
        'gpu' stands for."""
        if q is None:
            return None
        hard: dict[str, Quantity] = {}
        for name, amount in self.resources(q.requests, (*base, "requests"), gpu).items():
            hard[dra.quota_key(name)] = amount
        for name, amount in self.resources(q.limits, (*base, "limits"), gpu).items():
            key = GPU if name == gpu and GPU in q.limits else name
            if "/" in name or name == "storage":
                self.report(
                    diag(
                        "quota-extended-resource-limit",
                        f"quota limits.{key} is not allowed: Kubernetes quotas "
                        + ("storage" if name == "storage" else "extended resources such as GPUs")
                        + " only by requests",
                        (*base, "limits", key),
                        at_key=True,
                        hint=f"move it to quota.requests.{key}",
                    )
                )
                continue
            hard[f"limits.{name}"] = amount
        for name, amount in q.objects.items():
            if name not in QUOTA_OBJECT_COUNTS and not name.startswith("count/"):
                self.report(
                    diag(
                        "invalid-resource-name",
                        f"{where((*base, 'objects', name))}: '{name}' is not an object count a quota can limit",
                        (*base, "objects", name),
                        at_key=True,
                        hint=did_you_mean(name, QUOTA_OBJECT_COUNTS)
                        or "use pods, services, ... or count/<resource>.<group>",
                    )
                )
                continue
            hard[name] = amount
        per_class = {}
        for cls, resources in sorted(q.per_priority_class.items()):
            at = (*base, "perPriorityClass", cls)
            if cls not in class_names:
                if not self.known("priorityClasses", cls, class_names):
                    self.report(diag("unknown-priority-class", f"quota for unknown priority class '{cls}'", at,
                                     at_key=True, hint=did_you_mean(cls, class_names)))  # fmt: skip
            elif cls not in usable:
                hint = f"add '{cls}' to the tenant's priorityClasses, or remove this quota"
                self.report(diag("priority-class-not-allowed", f"quota for priority class '{cls}', which the tenant "
                                 "may not use", at, at_key=True, hint=hint))  # fmt: skip
            else:
                counter = "a quota scoped to a priority class"
                given = self.container_resources(resources, at, gpu, counter)
                per_class[cls] = {f"requests.{r}": a for r, a in given.items()}
        return ir.Quota(dict(sorted(hard.items())), per_class)

    def limit_range(self, lr: m.LimitRange | None, base: Path, gpu: str | _Ambiguous) -> ir.LimitRange | None:
        if lr is None:
            return None
        counter = "a LimitRange"
        return ir.LimitRange(
            self.container_resources(lr.default, (*base, "default"), gpu, counter),
            self.container_resources(lr.default_request, (*base, "defaultRequest"), gpu, counter),
            self.container_resources(lr.max, (*base, "max"), gpu, counter),
            self.container_resources(lr.min, (*base, "min"), gpu, counter),
        )

    # --- Slurm -------------------------------------------------------------------------------------------

    def slurm_settings(self, pools: list[ir.Pool], class_names: set[str]) -> slurm.SlurmSettings | None:
        """`spec.slurm` (its defaults when only pools name partitions); the priority classes the pools name must
        exist."""
        for p in pools:
            cls = p.slurm.priority_class if p.slurm else None
            if cls is not None and not self.known("priorityClasses", cls, class_names):
                self.report(diag("unknown-priority-class", f"Slurm partition '{p.slurm.partition}' of pool '{p.name}' "
                                 f"names unknown priority class '{cls}'", (*p.slurm.path, "priorityClass"),
                                 hint=did_you_mean(cls, class_names) or "add it to priorityClasses"))  # fmt: skip
        given = self.spec.slurm
        if given is None and not any(p.slurm for p in pools):
            return None
        path = ("spec", "slurm") if given else None
        given = given or m.SlurmSettings()
        return slurm.SlurmSettings(given.operator, given.namespace, given.controller, path)

    # --- GPU alerts --------------------------------------------------------------------------------------

    def monitoring(self, pools: list[ir.Pool]) -> ir.Monitoring | None:
        """`spec.monitoring` with each pool's thresholds resolved; a pool's own thresholds for a pool the policy does
        not define are reported."""
        given = self.spec.monitoring
        if given is None:
            return None
        base = ("spec", "monitoring")
        for name in given.pools:
            if not self.known("nodePools", name, (p.name for p in pools)):
                self.report(diag("unknown-pool", f"{where((*base, 'pools'))} names pool '{name}', which the policy "
                                 "does not define", (*base, "pools", name), at_key=True,
                                 hint=did_you_mean(name, (p.name for p in pools))))  # fmt: skip
        rules = [
            ir.AlertRule(r.alert, r.expr, r.for_, r.keep_firing_for, dict(sorted(r.labels.items())),
                         dict(sorted(r.annotations.items())), (*base, "extraRules", i))
            for i, r in enumerate(given.extra_rules)
        ]  # fmt: skip
        return ir.Monitoring(
            namespace=given.namespace,
            labels=dict(sorted(given.labels.items())),
            for_=given.for_,
            node_label=given.node_label,
            counters=given.counters,
            extra_counters=dict(sorted(given.extra_counters.items())),
            rated_power=dict(sorted(given.rated_power.items())),
            thresholds={p.name: _alert_thresholds(given.thresholds, given.pools.get(p.name)) for p in pools},
            own_thresholds=tuple(sorted(name for name in given.pools if name in {p.name for p in pools})),
            extra_rules=tuple(rules),
            path=base,
        )

    # --- workloads -------------------------------------------------------------------------------------

    def node_agents(self, pools: list[ir.Pool]) -> list[ir.NodeAgent]:
        every = tuple(sorted(p.name for p in pools))
        if self.spec.node_agents is None:
            return [ir.NodeAgent(n, GPU_OPERATOR_NAMESPACE, every, None, ("spec",)) for n in GPU_OPERATOR_AGENTS]
        out, seen = [], set()
        for i, a in enumerate(self.spec.node_agents):
            path = ("spec", "nodeAgents", i)
            if (a.namespace, a.name) in seen:
                self.report(
                    diag(
                        "duplicate-name",
                        f"node agent '{a.namespace}/{a.name}' is listed twice",
                        (*path, "name"),
                        hint="remove one of them",
                    )
                )
                continue
            seen.add((a.namespace, a.name))
            for j, name in enumerate(a.pools or ()):
                if not self.known("nodePools", name, every):
                    self.report(
                        diag(
                            "unknown-pool",
                            f"node agent '{a.name}' names unknown pool '{name}'",
                            (*path, "pools", j),
                            hint=did_you_mean(name, every),
                        )
                    )
            tolerations = (
                None if a.tolerations is None else tuple(t.model_dump(exclude_none=True) for t in a.tolerations)
            )
            mine = tuple(sorted(set(a.pools) & set(every))) if a.pools else every
            out.append(ir.NodeAgent(a.name, a.namespace, mine, tolerations, path))
        return out

    def workloads(
        self,
        tiers: dict[str, ir.Tier],
        tenants: dict[str, ir.Tenant],
        classes: list[ir.PriorityClass],
        pools: list[ir.Pool],
    ) -> list[ir.Workload]:
        default_kinds = settings(self.spec.scheduler.backend).DEFAULT_KINDS
        class_names = {c.name for c in classes}
        default_class = next((c.name for c in classes if c.global_default), None)
        out = []
        defaults: dict[str, str] = {}  # namespace -> its default class
        for i, w in self.unique("workloads", self.spec.workloads, "workload"):
            ok = True
            tenant = tenants.get(w.tenant)
            if tenant is None:
                ok = False
                if not self.known("tenants", w.tenant, tenants):
                    self.report(
                        diag(
                            "unknown-tenant",
                            f"workload '{w.name}' names unknown tenant '{w.tenant}'",
                            self.path("workloads", i, "tenant"),
                            hint=did_you_mean(w.tenant, tenants),
                        )
                    )
            tier = tiers.get(w.gpu_tier) if w.gpu_tier is not None else self.cpu_tier(w, i, pools)
            if w.gpu_tier is not None and w.gpus is None:
                ok = False
                self.report(
                    diag(
                        "cpu-workload-incomplete",
                        f"workload '{w.name}' names GPU tier '{w.gpu_tier}' but not how many GPUs per pod",
                        self.path("workloads", i, "gpuTier"),
                        hint="add gpus: <GPUs per pod>, or remove gpuTier for CPU-only work",
                    )
                )
            if tier is None:
                ok = False
                if w.gpu_tier is not None and not self.known("gpuTiers", w.gpu_tier, tiers):
                    self.report(
                        diag(
                            "unknown-gpu-tier",
                            f"workload '{w.name}' names unknown GPU tier '{w.gpu_tier}'",
                            self.path("workloads", i, "gpuTier"),
                            hint=did_you_mean(w.gpu_tier, tiers),
                        )
                    )
            pc = w.priority_class
            if pc is not None and not self.known("priorityClasses", pc, class_names):
                ok = False
                self.report(
                    diag(
                        "unknown-priority-class",
                        f"workload '{w.name}' names unknown priority class '{pc}'",
                        self.path("workloads", i, "priorityClass"),
                        hint=did_you_mean(pc, class_names),
                    )
                )
            if tenant is None:
                continue
            namespace = w.namespace or tenant.namespaces[0]
            if namespace not in tenant.namespaces:
                ok = False
                self.report(
                    diag(
                        "unknown-namespace",
                        f"workload '{w.name}' runs in '{namespace}', which tenant '{tenant.name}' does not own",
                        self.path("workloads", i, "namespace"),
                        hint=did_you_mean(namespace, tenant.namespaces),
                    )
                )
            effective = pc if pc is not None else default_class
            if effective is not None and effective in tenant.forbidden_priority_classes:
                ok = False
                allowed = sorted(class_names - set(tenant.forbidden_priority_classes))
                what = f"priority class '{pc}'" if pc else f"the default priority class '{effective}'"
                self.report(
                    diag(
                        "priority-class-not-allowed",
                        f"workload '{w.name}' would run with {what}, which tenant '{tenant.name}' may not use",
                        self.path("workloads", i, "priorityClass" if pc else "tenant"),
                        hint=f"set priorityClass to one of {', '.join(repr(c) for c in allowed)}" if allowed else None,
                    )
                )
            if not ok or tier is None:
                continue
            out.append(
                ir.Workload(
                    name=w.name,
                    type=w.type,
                    tenant=tenant.name,
                    namespace=namespace,
                    tier=tier,
                    gpus=w.gpus or 0,
                    replicas=w.replicas,
                    kind=w.kind or default_kinds[w.type],
                    priority_class=effective,
                    image=w.image or f"registry.example.com/{tenant.name}/{w.name}:latest",
                    cpu=w.cpu,
                    memory=w.memory,
                    limits={r: q for r, q in (("cpu", w.limits.cpu), ("memory", w.limits.memory)) if q is not None},
                    qos=w.qos,
                    placement=w.placement,
                    node_selector=dict(sorted(w.node_selector.items())),
                    tolerations=tuple(t.model_dump(exclude_none=True) for t in w.tolerations),
                    path=self.path("workloads", i),
                    namespace_default=w.namespace_default and self.first_default(w.name, namespace, defaults, i),
                    rdma=w.rdma or 0,
                    mig_profile=w.mig_profile,
                    host_network=w.host_network,
                    shm=w.shm,
                    one_per_node=w.one_per_node,
                    same_zone=w.same_zone,
                    min_member=self.min_member(w, i),
                    elastic=self.elastic(w, i, kind=w.kind or default_kinds[w.type]),
                    autoscale=self.autoscale(w, i),
                )
            )
        return out

    def autoscale(self, w: m.Workload, i: int) -> ir.Autoscale | None:
        """Its autoscaler; `replicas` beside it is refused (the Deployment leaves replicas to the autoscaler)."""
        a = w.autoscale
        if a is None:
            return None
        if "replicas" in w.model_fields_set:
            self.report(
                diag(
                    "autoscale-with-replicas",
                    f"workload '{w.name}' states replicas: {w.replicas} and autoscale: its autoscaler sets the "
                    "replicas, from autoscale.min to autoscale.max",
                    self.path("workloads", i, "replicas"),
                    hint="remove replicas: the autoscaler keeps the Deployment between autoscale.min and max",
                )
            )
        prometheus = a.prometheus and ir.Prometheus(
            a.prometheus.server_address, a.prometheus.query, a.prometheus.threshold, a.prometheus.activation_threshold
        )
        metric = (a.metric.name, a.metric.average_value) if a.metric else None
        return ir.Autoscale(a.min, a.max, a.cpu, metric, prometheus, self.path("workloads", i, "autoscale"))

    def cpu_tier(self, w: m.Workload, i: int, pools: list[ir.Pool]) -> ir.Tier | None:
        """The CPU tier for a workload that names no GPU tier, if it is complete without one."""
        at = self.path("workloads", i)
        missing = [r for r in ("cpu", "memory") if getattr(w, r) is None]
        problem = (
            (f"asks for {w.gpus} GPUs per pod but names no gpuTier", (*at, "gpus"),
             "add gpuTier: <a tier of the policy>, or remove gpus for CPU-only work") if w.gpus is not None
            else (f"asks for MIG devices ({w.mig_profile}) but names no gpuTier", (*at, "migProfile"),
                  "add gpus and gpuTier, or remove migProfile") if w.mig_profile is not None
            else (f"asks for no GPU and does not state its {' and '.join(missing)} per pod (sized from GPU shares "
                  "otherwise)", (*at, "name"), "state cpu and memory (e.g. cpu: \"4\", memory: 16Gi), or add gpuTier "
                  "and gpus") if missing
            else None
        )  # fmt: skip
        if problem:
            message, path, hint = problem
            self.report(diag("cpu-workload-incomplete", f"workload '{w.name}' {message}", path, hint=hint))
            return None
        paths = [p.path for p in pools if p.tier == CPU_TIER]
        return ir.Tier(CPU_TIER, (CPU_TIER,), paths[0] if paths else ("spec", "nodePools"), None, self.keys.tier)

    def elastic(self, w: m.Workload, i: int, kind: str) -> tuple[int, int] | None:
        if w.elastic is None:
            return None
        e, at = w.elastic, self.path("workloads", i, "elastic")
        problem = (
            f"elastic needs kind PyTorchJob, not {kind}" if kind != "PyTorchJob"
            else f"elastic needs minReplicas <= replicas <= maxReplicas, not {e.min_replicas} <= {w.replicas} <= "
            f"{e.max_replicas}" if not e.min_replicas <= w.replicas <= e.max_replicas
            else "elastic and minMember both set the gang: keep minReplicas" if w.min_member is not None
            else None
        )  # fmt: skip
        if problem:
            self.report(diag("invalid-value", f"workload '{w.name}': {problem}", at, hint="see the README's "
                             "'Distributed training'"))  # fmt: skip
            return None
        return e.min_replicas, e.max_replicas

    def min_member(self, w: m.Workload, i: int) -> int | None:
        if w.min_member is not None and w.min_member > w.replicas:
            self.report(
                diag(
                    "invalid-value",
                    f"workload '{w.name}' needs {w.min_member} pods together but runs {w.replicas}",
                    self.path("workloads", i, "minMember"),
                    hint=f"minMember is at most replicas ({w.replicas})",
                )
            )
            return None
        return w.min_member

    def first_default(self, workload: str, namespace: str, defaults: dict[str, str], i: int) -> bool:
        """Whether `workload` is the first class the policy makes its namespace's default (a second is an error)."""
        if namespace in defaults:
            self.report(
                diag(
                    "namespace-default-class-twice",
                    f"workload '{workload}' is the default class of namespace '{namespace}', and so is "
                    f"'{defaults[namespace]}'",
                    self.path("workloads", i, "namespaceDefault"),
                    hint="a namespace has at most one default class: remove namespaceDefault from one of them",
                )
            )
            return False
        defaults[namespace] = workload
        return True


def _pool_slurm(pool: m.NodePool, path: Path) -> slurm.PoolSlurm | None:
    given = pool.slurm
    if given is None:
        return None
    gpu = pool.gpu
    return slurm.PoolSlurm(
        partition=given.partition,
        default=given.default,
        max_time=slurm.minutes(given.max_time),
        priority_class=given.priority_class,
        shared=given.shared,
        gres_type=given.gres_type or (slurm.gres_type(gpu.product) if gpu else ""),
        cards=gpu.count if gpu else 0,
        path=path,
    )


def _alert_thresholds(policy: m.AlertThresholds, pool: m.PoolAlertThresholds | None) -> ir.AlertThresholds:
    """The policy's thresholds with a pool's own over them; false (no alert) becomes None."""
    merged = {
        name: value if pool is None or getattr(pool, name) is None else getattr(pool, name) for name, value in policy
    }
    low = merged["low_utilisation"]
    return ir.AlertThresholds(
        gpu_temperature=merged["gpu_temperature"] or None,
        memory_temperature=merged["memory_temperature"] or None,
        memory_used=merged["memory_used"] or None,
        power=merged["power"] or None,
        low_utilisation=(low.below, low.for_) if low else None,
        xid_errors=merged["xid_errors"],
        ecc_or_remap=merged["ecc_or_remap"],
    )


def _mig_profiles(layout: m.GpuMig) -> set[str]:
    """The MIG profiles a pool's layout cuts its cards into."""
    groups = [layout.devices] if layout.cards is None else [group.devices for group in layout.cards]
    return {profile for devices in groups if devices for profile in devices}

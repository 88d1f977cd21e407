"""`spec.gpuTiers`, `spec.nodePools` and `spec.controlPlane`: node ranges expanded (each node owned once), tiers with
the accelerator resource of their pools, each pool with its provisioning and size and the labels, taints and
allocatable policyc gives its nodes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from policyc import ir
from policyc.diagnostics import Diagnostic, Path, diag
from policyc.gpu import accelerators, dra
from policyc.gpu.accelerators import CPU_TIER
from policyc.ir import DEVICE_PLUGIN_CONFIG, MIG_CONFIG, RDMA_LABEL
from policyc.k8s import versions
from policyc.k8s.quantity import Quantity
from policyc.language.model import policy as m
from policyc.language.noderanges import MAX_NODES, check, expand
from policyc.registry import PROVISIONERS, provisioner, provisioner_settings
from policyc.resolve import operations, pool_gpus
from policyc.resolve.context import Context
from policyc.resolve.resource_maps import resources


def provisioning(ctx: Context, pool: m.NodePool) -> str:
    """The pool's node provisioner: its own, else the policy's default."""
    default = ctx.spec.provisioning.default if ctx.spec.provisioning else None
    return pool.provisioning or default or m.Provisioning.model_fields["default"].default


def provisioning_settings(ctx: Context) -> dict[str, Any]:
    """Every registered provisioner's settings: the policy's block, or its defaults (constructed, not validated: the
    model of a block left out is never built)."""
    written = ctx.spec.provisioning
    return {name: getattr(written, name, None) or provisioner_settings(name).Settings.model_construct()
            for name in PROVISIONERS}  # fmt: skip


def within_node_limit(ctx: Context) -> bool:
    """Count the nodes of every pattern before expanding any: a few bytes of ranges could stand for millions of
    nodes. Only named nodes count: a pool by size expands nothing, and has no cap."""
    patterns = [(ctx.path("nodePools", i, "nodes", j), p) for i, pool in enumerate(ctx.spec.node_pools)
                if provisioner_settings(provisioning(ctx, pool)).NAMED_NODES
                for j, p in enumerate(pool.nodes or ())]  # fmt: skip
    if ctx.spec.control_plane:
        patterns += [(("spec", "controlPlane", "nodes", j), p) for j, p in enumerate(ctx.spec.control_plane.nodes)]
    total = 0
    for path, pattern in patterns:
        total += check(pattern)
        if total > MAX_NODES:
            ctx.report(
                diag(
                    "invalid-node-pattern",
                    f"with '{pattern}' the policy holds more than {MAX_NODES:,} nodes",
                    path,
                    hint="policyc compiles clusters of up to 100,000 nodes; is a range longer than meant?",
                )
            )
            return False
    return True


def report_empty(ctx: Context) -> None:
    """A policy needs a GPU tier and a node pool (unless those it has were dropped for errors already reported)."""
    for list_name, items, what in (
        ("gpuTiers", ctx.spec.gpu_tiers, "GPU tier"),
        ("nodePools", ctx.spec.node_pools, "node pool"),
    ):
        if not items and not ctx.parsed.dropped.get(list_name):
            ctx.report(
                diag(
                    "invalid-value",
                    f"the policy defines no {what}",
                    ("spec", list_name),
                    hint=f"define at least one {what}",
                )
            )


def tiers(ctx: Context) -> tuple[list[ir.Tier], set[str]]:
    """The GPU tiers (their accelerators come with the pools, `with_accelerators`), and those allocated with DRA."""
    owner: dict[str, str] = {}
    out, dra_tiers = [], set()
    for i, tier in ctx.unique("gpuTiers", ctx.spec.gpu_tiers, "GPU tier"):
        if tier.name == CPU_TIER:
            ctx.report(
                diag(
                    "invalid-value",
                    f"tier name '{CPU_TIER}' is the tier of pools without GPUs",
                    ctx.path("gpuTiers", i, "name"),
                    hint="give the GPU tier another name; pools without gpu are the cpu tier",
                )
            )
            continue
        for j, product in enumerate(tier.products):
            if product in owner and owner[product] != tier.name:
                ctx.report(
                    diag(
                        "product-in-two-tiers",
                        f"GPU product '{product}' is in tiers '{owner[product]}' and '{tier.name}'",
                        ctx.path("gpuTiers", i, "products", j),
                        hint=f"a product belongs to exactly one tier: remove it here, or from tier '{owner[product]}'",
                    )
                )
            owner.setdefault(product, tier.name)
        if tier.dra and _dra_available(ctx, tier, i):
            dra_tiers.add(tier.name)
        out.append(ir.Tier(tier.name, tuple(sorted(set(tier.products))), ctx.path("gpuTiers", i)))
    return out, dra_tiers


def _dra_available(ctx: Context, tier: m.GpuTier, i: int) -> bool:
    """Whether the cluster serves DRA and the tier's DeviceClass selector is within the API server's limit."""
    version, api = ctx.spec.kubernetes_version, versions.DYNAMIC_RESOURCE_ALLOCATION
    if not versions.serves(version, api):
        hint = f"set kubernetesVersion to 1.{api.since} or later, or remove dra"
        ctx.report(diag("dra-unsupported", f"tier '{tier.name}' uses DRA, which Kubernetes {version} does not serve "
                        f"({api.group_version})", ctx.path("gpuTiers", i, "dra"), hint=hint))  # fmt: skip
        return False
    length = len(dra.selector(tier.products))
    if length > dra.SELECTOR_MAX_LENGTH:
        ctx.report(
            diag(
                "dra-unsupported",
                f"the DeviceClass selector of tier '{tier.name}' would be {length} characters, above the API "
                f"server's {dra.SELECTOR_MAX_LENGTH} (each '-' of a product may be a space in the driver's name)",
                ctx.path("gpuTiers", i, "products"),
                hint="split the tier's products into several tiers",
            )
        )
        return False
    return True


class NodeClaims:
    """Which pool (or the control plane) each node belongs to: a node belongs to one."""

    def __init__(self) -> None:
        self.owner: dict[str, str] = {}

    def claim(self, ctx: Context, patterns: Sequence[str], claimant: str, base: Path) -> list[str]:
        """Expand `patterns` and record `claimant` as their owner, reporting nodes someone already owns: one diagnostic
        per pattern and previous owner, at the pattern."""
        nodes = []
        for j, pattern in enumerate(patterns):
            clashes: dict[str, list[str]] = {}
            expanded = expand(pattern)
            for node in expanded:
                if node in self.owner:
                    clashes.setdefault(self.owner[node], []).append(node)
                else:
                    self.owner[node] = claimant
                    nodes.append(node)
            for other, clashing in clashes.items():
                _report_clash(ctx, pattern, len(expanded), claimant, other, clashing, (*base, j))
        return nodes


def _report_clash(
    ctx: Context, pattern: str, expanded: int, claimant: str, other: str, clashing: list[str], at: Path
) -> None:
    """Nodes of `pattern` (`expanded` nodes) that `other` claimed before `claimant`."""
    listed = f"node {clashing[0]}" if len(clashing) == 1 else f"{len(clashing)} nodes ({clashing[0]} … {clashing[-1]})"
    is_are, them = ("is", "it") if len(clashing) == 1 else ("are", "them")
    if other == claimant:
        what = f"{is_are} listed twice in {other}"
        leave_out = f"remove '{pattern}'" if len(clashing) == expanded else f"leave {them} out of '{pattern}'"
        hint = f"list each node once: {leave_out}"
    else:
        what = f"of {claimant} {is_are} also in {other}"
        hint = (
            "a node belongs to exactly one pool, and control-plane nodes to none: "
            f"leave {them} out of '{pattern}' here, or out of the nodes of {other}"
        )
    ctx.report(diag("node-in-two-pools", f"{listed} {what}", at, hint=hint))


@dataclass(frozen=True, slots=True)
class Size:
    """How a pool comes to be and how many nodes it has."""

    provisioning: str
    named: bool
    nodes: tuple[str, ...]
    min_nodes: int
    max_nodes: int
    registers_tainted: bool


def pools(ctx: Context, product_tier: dict[str, str], dra_tiers: set[str], claims: NodeClaims) -> list[ir.Pool]:
    """The pools whose tier is known (`product_tier`: GPU product -> its tier) and whose size is, with their named
    nodes claimed."""
    out = []
    tiers_complete = not ctx.parsed.dropped.get("gpuTiers")
    strategy = pool_gpus.MigStrategy(ctx.spec.node_pools)
    for i, pool in ctx.unique("nodePools", ctx.spec.node_pools, "node pool"):
        size = _size(ctx, pool, i, claims)
        if size is None:
            ctx.parsed.leave_out("nodePools", pool.name)
            continue
        if pool.gpu is None:
            out.append(_chosen(_cpu_pool(ctx, pool, i, size)))
            continue
        tier = product_tier.get(pool.gpu.product)
        if tier is None and not tiers_complete:  # its tier may be one that failed to parse
            ctx.parsed.leave_out("nodePools", pool.name)
            continue
        if tier is None:
            ctx.reference(
                pool.gpu.product,
                product_tier,
                "product-without-tier",
                f"GPU product '{pool.gpu.product}' of pool '{pool.name}' is in no GPU tier",
                ctx.path("nodePools", i, "gpu", "product"),
                otherwise="add the product to the products of a gpuTier",
            )
            continue
        out.append(_chosen(_gpu_pool(ctx, pool, i, tier, size, tier in dra_tiers, strategy)))
    return out


def _chosen(pool: ir.Pool) -> ir.Pool:
    """The pool with the labels its provisioner sets to values it chooses as it makes a node (`chosen_labels`)."""
    chosen = provisioner(pool.provisioning).chosen_labels(pool)
    return replace(pool, chosen_labels=chosen) if chosen else pool


SIZE_FIELDS = ("count", "minNodes", "maxNodes")


def _size(ctx: Context, pool: m.NodePool, i: int, claims: NodeClaims) -> Size | None:
    """The pool's provisioning and size: its named nodes (claimed), or its count or range; None after reporting a
    pool that states its nodes otherwise than its provisioning needs."""
    name = provisioning(ctx, pool)
    face = provisioner_settings(name)
    stated = {f: v for f, v in zip(SIZE_FIELDS, (pool.count, pool.min_nodes, pool.max_nodes), strict=True)
              if v is not None}  # fmt: skip
    wrong = _named_wrong(ctx, pool, i, name, stated) if face.NAMED_NODES else _sized_wrong(ctx, pool, i, name, stated)
    wrong = wrong or _other_settings(ctx, pool, i, name)
    if wrong is not None:
        ctx.report(wrong)
        return None
    if face.NAMED_NODES:
        assert pool.nodes is not None
        nodes = tuple(claims.claim(ctx, pool.nodes, f"pool '{pool.name}'", ctx.path("nodePools", i, "nodes")))
        return Size(name, True, nodes, len(nodes), len(nodes), face.REGISTERS_TAINTED)
    low, high = (pool.count, pool.count) if pool.count is not None else (pool.min_nodes or 0, pool.max_nodes)
    assert low is not None and high is not None
    return Size(name, False, (), low, high, face.REGISTERS_TAINTED)


def _other_settings(ctx: Context, pool: m.NodePool, i: int, name: str) -> Diagnostic | None:
    """A pool stating the block of settings of a provisioner it does not use."""
    other = next((o for o in PROVISIONERS if o != name and getattr(pool, o, None) is not None), None)
    if other is None:
        return None
    return diag("settings-of-another-provisioner", f"pool '{pool.name}' states settings of {other}, but its "
                f"provisioning is {name}", ctx.path("nodePools", i, other), at_key=True,
                hint=f"remove {other}, or set provisioning: {other}")  # fmt: skip


def _named_wrong(ctx: Context, pool: m.NodePool, i: int, name: str, stated: dict[str, int]) -> Diagnostic | None:
    """A pool whose provisioning lists its nodes by name, stating a size or no nodes."""
    what = f"pool '{pool.name}' is {name}: its nodes are the ones it lists by name"
    if stated:
        first = next(iter(stated))
        fix = (
            f"remove {' and '.join(stated)}"
            if pool.nodes
            else f"replace {first} with nodes, e.g. nodes: [{pool.name}-[1-{max(stated.values())}]]"
        )
        return diag("pool-nodes-or-size", f"{what}, not a size ({first})", ctx.path("nodePools", i, first),
                    hint=f"{fix}, or give the pool a provisioning of pools by size", at_key=True)  # fmt: skip
    if pool.nodes is None:
        return diag("pool-nodes-or-size", f"{what}, and it lists none", ctx.path("nodePools", i), at_key=True,
                    hint=f"list them or their ranges, e.g. nodes: [{pool.name}-[1-4]]")  # fmt: skip
    return None


def _sized_wrong(ctx: Context, pool: m.NodePool, i: int, name: str, stated: dict[str, int]) -> Diagnostic | None:
    """A pool by size listing nodes, or stating no size, or both a count and a range, or a range upside down."""
    what = f"pool '{pool.name}' is provisioned by {provisioner_settings(name).TITLE}"
    at = ctx.path("nodePools", i)
    if pool.nodes is not None:
        count = sum(check(p) for p in pool.nodes)
        return diag("pool-nodes-or-size", f"{what}, which makes nodes of names no policy knows: it states its size, "
                    "not nodes", (*at, "nodes"), at_key=True, hint=f"replace nodes with count: {count} (or minNodes "
                    "and maxNodes)")  # fmt: skip
    if pool.count is not None and len(stated) > 1:
        return diag("pool-nodes-or-size", f"{what} and states both a fixed size (count) and a range "
                    "(minNodes, maxNodes)", (*at, "count"), at_key=True,
                    hint="remove count, or remove minNodes and maxNodes")  # fmt: skip
    if pool.count is None and pool.max_nodes is None:
        return diag("pool-nodes-or-size", f"{what} and states no size (its most nodes)", at, at_key=True,
                    hint=f"add count: <nodes>, or maxNodes: <nodes> (and minNodes: {pool.min_nodes or 0})")  # fmt: skip
    if pool.slurm is not None:
        return diag("pool-nodes-or-size", f"{what}, whose nodes the policy does not know by name, and a Slurm "
                    "partition names its nodes", (*at, "slurm"), at_key=True, hint="remove slurm, or make it a static "
                    "pool of the nodes the partition names")  # fmt: skip
    if pool.max_nodes is not None and (pool.min_nodes or 0) > pool.max_nodes:
        return diag("pool-nodes-or-size", f"{what} and has minNodes {pool.min_nodes} above maxNodes "
                    f"{pool.max_nodes}", (*at, "minNodes"), hint=f"lower minNodes to {pool.max_nodes} or less, or "
                    f"raise maxNodes to {pool.min_nodes} or more")  # fmt: skip
    return None


def with_accelerators(ctx: Context, tiers: list[ir.Tier], pools: list[ir.Pool], dra_tiers: set[str]) -> list[ir.Tier]:
    """Each GPU tier with the resource and product key of its pools, which must agree (one vendor and resource per
    tier); a tier without pools has NVIDIA's, with the policy's gpuResource."""
    first: dict[str, ir.Pool] = {}
    for p in pools:
        if p.tier == CPU_TIER:
            continue
        seen = first.setdefault(p.tier, p)
        if (seen.resource, seen.product_key) != (p.resource, p.product_key):
            ctx.report(
                diag(
                    "tier-mixes-vendors",
                    f"pool '{p.name}' gives tier '{p.tier}' {p.resource} (labelled by {p.product_key}), but pool "
                    f"'{seen.name}' gives it {seen.resource} (labelled by {seen.product_key})",
                    (*p.path, "gpu"),
                    hint="a tier groups products of one vendor with one resource name: put the products in "
                    "separate tiers",
                )
            )
    nvidia = accelerators.product_key(accelerators.NVIDIA, ctx.keys.domain)
    out = []
    for t in tiers:
        pool = first.get(t.name)
        resource, key = (pool.resource, pool.product_key) if pool else (ctx.spec.gpu_resource, nvidia)
        device_class = dra.class_name(t.name, ctx.keys.domain) if t.name in dra_tiers else None
        if device_class:
            resource = dra.devices_key(device_class)
        out.append(ir.Tier(t.name, t.products, t.path, resource, key, device_class))
    return out


def control_plane(ctx: Context, claims: NodeClaims) -> list[str]:
    if ctx.spec.control_plane is None:
        return []
    return claims.claim(ctx, ctx.spec.control_plane.nodes, "the control plane", ("spec", "controlPlane", "nodes"))


def _labels_and_taints(ctx: Context, pool: m.NodePool, tier: str) -> tuple[dict[str, str], list[ir.Taint]]:
    """What every pool's nodes carry, GPUs or not: its usage, tier and name, its own labels and taints, RDMA's label and
    the taint of a pool only Slurm runs on."""
    keys = ctx.keys
    labels = {keys.usage: pool.usage, keys.tier: tier, keys.pool: pool.name, **pool.labels}
    taints = [ir.Taint(keys.usage, pool.usage, "NoSchedule")]
    taints += (ir.Taint(t.key, t.value, t.effect) for t in pool.taints)
    if pool.slurm is not None and not pool.slurm.shared:  # Slurm-only: no workload template tolerates it
        taints.append(ir.Taint(keys.slurm_only, "", "NoSchedule"))
    if pool.rdma:
        labels[RDMA_LABEL] = "true"
    return labels, taints


def _common(ctx: Context, pool: m.NodePool, i: int, tier: str, size: Size) -> dict[str, Any]:
    """The fields of `ir.Pool` a pool has whether it has GPUs or not."""
    rdma = pool.rdma if isinstance(pool.rdma, m.PoolRdma) else None
    return dict(
        name=pool.name,
        usage=pool.usage,
        tier=tier,
        nodes=size.nodes,
        provisioning=size.provisioning,
        named=size.named,
        min_nodes=size.min_nodes,
        max_nodes=size.max_nodes,
        gfd=pool.gpu_feature_discovery,
        path=ctx.path("nodePools", i),
        rdma_resource=rdma.resource if rdma else None,
        interfaces=tuple(rdma.interfaces) if rdma else (),
        slurm=operations.pool_partition(pool, ctx.path("nodePools", i, "slurm")),
        provisioning_settings=getattr(pool, size.provisioning, None),
    )


def _tainted(ctx: Context, taints: list[ir.Taint], size: Size) -> dict[str, Any]:
    """The pool's taints, sorted, and what its nodes carry as they register: those taints where its provisioner puts
    them there, else policyc's registration taint."""
    ordered = tuple(sorted(taints, key=lambda t: (t.key, t.effect)))
    registering = ordered if size.registers_tainted else (ir.Taint(ctx.keys.registration, "", "NoSchedule"),)
    return dict(taints=ordered, registration_taints=registering)


def _cpu_pool(ctx: Context, pool: m.NodePool, i: int, size: Size) -> ir.Pool:
    """A pool without GPUs, tainted by its tier, which only CPU-only workloads tolerate."""
    labels, taints = _labels_and_taints(ctx, pool, CPU_TIER)
    taints.append(ir.Taint(ctx.keys.tier, CPU_TIER, "NoSchedule"))
    return ir.Pool(
        product=CPU_TIER,
        product_key=ctx.keys.tier,
        gpus_per_node=0,
        gpu_memory=None,
        labels=dict(sorted(labels.items())),
        allocatable=_allocatable(ctx, pool, i, ctx.spec.gpu_resource),
        **_tainted(ctx, taints, size),
        **_common(ctx, pool, i, CPU_TIER, size),
    )


def _gpu_pool(
    ctx: Context, pool: m.NodePool, i: int, tier: str, size: Size, claimed: bool, strategy: pool_gpus.MigStrategy
) -> ir.Pool:
    """A pool with GPUs (`claimed`: of a DRA tier, whose pods claim whole cards)."""
    gpu = pool.gpu
    assert gpu is not None
    labels, taints = _labels_and_taints(ctx, pool, tier)
    common = _common(ctx, pool, i, tier, size)
    maker = pool_gpus.vendor(ctx, gpu, i)
    resource = gpu.resource or (ctx.spec.gpu_resource if maker is accelerators.NVIDIA else maker.resource)
    sharing, partitions = pool_gpus.nvidia_only(ctx, gpu, maker, i)
    if claimed:
        resource = dra.devices_key(dra.class_name(tier, ctx.keys.domain))
        pool_gpus.whole_nvidia_cards(ctx, pool, i, tier, maker)
        sharing, partitions = None, None
    if sharing is not None:
        labels[DEVICE_PLUGIN_CONFIG] = f"{sharing.strategy}-{sharing.replicas}"
    gpus_per_node = gpu.count * (sharing.replicas if sharing else 1)
    allocatable = _allocatable(ctx, pool, i, resource)
    layout = strategy.layout(ctx, gpu, i) if partitions is not None else None
    if layout is not None:
        labels[MIG_CONFIG] = layout.name
        gpus_per_node = sum(layout.per_node.values()) if layout.strategy == "single" else 0
        if layout.strategy != "single":
            for device, count in layout.resources.items():
                allocatable.setdefault(device, Quantity.from_value(count))
            allocatable = dict(sorted(allocatable.items()))
    product_key = accelerators.product_key(maker, ctx.keys.domain)
    labels |= _product_labels(pool, maker, product_key)
    taints.append(ir.Taint(product_key, gpu.product, "NoSchedule"))
    return ir.Pool(
        product=gpu.product,
        gpus_per_node=gpus_per_node,
        gpu_memory=gpu.memory,
        labels=dict(sorted(labels.items())),
        allocatable=allocatable,
        **_tainted(ctx, taints, size),
        sharing=(sharing.strategy, sharing.replicas) if sharing else None,
        mig=layout,
        resource=resource,
        product_key=product_key,
        vendor=maker.name,
        **common,
    )


def _product_labels(pool: m.NodePool, maker: accelerators.Vendor, product_key: str) -> dict[str, str]:
    """The labels naming the pool's cards that policyc writes: the product where nothing else names it, else those of
    feature discovery when it does not run."""
    gpu = pool.gpu
    assert gpu is not None
    if maker.product_label is None:  # nothing else names the product: policyc does
        return {product_key: gpu.product}
    if pool.gpu_feature_discovery:
        return {}
    values = {"gpu.product": gpu.product, "gpu.count": str(gpu.count)}
    if gpu.memory is not None:
        values["gpu.memory"] = str(gpu.memory.value // (1024 * 1024))  # discovery writes MiB
    return {k: values[f] for k, f in accelerators.owned_labels(maker).items() if f in values}


def _allocatable(ctx: Context, pool: m.NodePool, i: int, gpu: str) -> dict[str, Quantity]:
    """The pool's allocatable per node ('gpu': its accelerator resource), with its RDMA resource (what its device plugin
    offers) unless stated."""
    out = resources(ctx, pool.allocatable, ctx.path("nodePools", i, "allocatable"), gpu)
    if isinstance(pool.rdma, m.PoolRdma):
        out.setdefault(pool.rdma.resource, Quantity.from_value(pool.rdma.per_node))
    return dict(sorted(out.items()))

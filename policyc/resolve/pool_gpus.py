"""A node pool's accelerators: the vendor its product is, what only NVIDIA's device plugin and MIG manager provide
(sharing, MIG), the whole cards of a DRA tier, and the MIG layout under the cluster's one MIG strategy."""

from __future__ import annotations

from policyc.diagnostics import diag
from policyc.gpu import accelerators, mig
from policyc.gpu.accelerators import VENDORS
from policyc.language.model import policy as m
from policyc.resolve.context import Context


def vendor(ctx: Context, gpu: m.Gpu, i: int) -> accelerators.Vendor:
    """The pool's vendor as stated (nvidia when omitted); a product known to be another vendor's is reported."""
    stated, maker = VENDORS[gpu.vendor], accelerators.maker(gpu.product)
    if maker is None or maker is stated:
        return stated
    at = ctx.path("nodePools", i, "gpu")
    if "vendor" in gpu.model_fields_set:
        message = f"gpu.vendor is {stated.name}, but GPU product '{gpu.product}' is {maker.name}'s"
        ctx.report(diag("vendor-contradicts-product", message, (*at, "vendor"), hint=f"write vendor: {maker.name}"))
    else:
        message = (
            f"GPU product '{gpu.product}' is {maker.name}'s, and gpu.vendor is nvidia when omitted: the cards "
            f"would be taken for NVIDIA's ({gpu.resource or ctx.spec.gpu_resource}, NVIDIA's product label and "
            "taint), and pods would not run on them"
        )
        written = f"gpu: {{vendor: {maker.name}, product: {gpu.product}, ...}}"
        hint = f"add vendor: {maker.name} to the pool's gpu ({written})"
        ctx.report(diag("vendor-contradicts-product", message, (*at, "product"), hint=hint))
    return stated


def nvidia_only(
    ctx: Context, gpu: m.Gpu, maker: accelerators.Vendor, i: int
) -> tuple[m.GpuSharing | None, m.GpuMig | None]:
    """The pool's sharing and MIG layout, which only NVIDIA's device plugin and MIG manager provide."""
    if maker is accelerators.NVIDIA:
        return gpu.sharing, gpu.mig
    for field, value in (("sharing", gpu.sharing), ("mig", gpu.mig)):
        if value is not None:
            ctx.report(
                diag(
                    "accelerator-feature-unsupported",
                    f"gpu.{field} is NVIDIA's (its device plugin and MIG manager); this pool's vendor is {maker.name}",
                    ctx.path("nodePools", i, "gpu", field),
                    hint=f"remove gpu.{field}, or set gpu.vendor: nvidia if the cards are NVIDIA's",
                )
            )
    return None, None


def whole_nvidia_cards(ctx: Context, pool: m.NodePool, i: int, tier: str, maker: accelerators.Vendor) -> None:
    """A pool of a DRA tier: NVIDIA's DRA driver serves it whole cards, which it claims instead of requesting a device
    plugin's resource; MIG, sharing, another vendor or a resource name of its own are refused."""
    assert pool.gpu is not None
    given = (
        ("vendor", maker is not accelerators.NVIDIA, f"is {maker.name}, and the DRA driver is NVIDIA's"),
        ("resource", pool.gpu.resource is not None, "names a resource, and its GPUs are claimed, not requested"),
        ("mig", pool.gpu.mig is not None, "partitions its cards with MIG, and the tier claims whole cards"),
        ("sharing", pool.gpu.sharing is not None, "shares its cards, and the tier claims whole cards"),
    )
    elsewhere = f"put the pool's product in a tier without dra (or remove dra from tier '{tier}')"
    for field, wrong, why in given:
        if wrong:
            ctx.report(
                diag(
                    "dra-unsupported",
                    f"pool '{pool.name}' of DRA tier '{tier}' {why}",
                    ctx.path("nodePools", i, "gpu", field),
                    # the vendor is the hardware's: only the tier can change
                    hint=elsewhere if field == "vendor" else f"remove gpu.{field}, or {elsewhere}",
                )
            )


class MigStrategy:
    """The cluster's one MIG strategy (the GPU Operator's mig.strategy), and each pool's layout under it."""

    def __init__(self, pools: list[m.NodePool]):
        self.layouts = [(p.name, p.gpu.mig) for p in pools if p.gpu and p.gpu.mig and p.gpu.vendor == "nvidia"]
        """(pool, its MIG layout as written) for the NVIDIA pools that partition their cards."""
        strategies = {layout.strategy for _, layout in self.layouts}
        several = any(len(_profiles(layout)) > 1 for _, layout in self.layouts)
        self.strategy = next(iter(strategies), None) if len(strategies) < 2 else ("mixed" if several else "single")
        """The pools' own strategy where they agree, else single if every MIG pool's cards take one profile, else
        mixed (the pools with the other are reported)."""

    def layout(self, ctx: Context, gpu: m.Gpu, i: int) -> mig.Layout:
        """The pool's MIG layout under the cluster's strategy; a pool of another strategy, and card groups that do not
        take every card of a node, are reported."""
        partitions = gpu.mig
        assert partitions is not None
        strategy = self.strategy or partitions.strategy
        if partitions.strategy != strategy:
            self.report_other_strategy(ctx, i, partitions.strategy, strategy)
        if partitions.cards is None:
            return mig.Layout(strategy, ((gpu.count, dict(sorted(partitions.devices.items()))),))  # type: ignore[union-attr]
        counted = sum(group.count for group in partitions.cards)
        if counted != gpu.count:
            ctx.report(
                diag(
                    "mig-layout-invalid",
                    f"gpu.mig.cards lays out {counted} cards, but the pool's nodes have {gpu.count} (gpu.count)",
                    ctx.path("nodePools", i, "gpu", "mig", "cards"),
                    hint=f"make the groups' counts add up to {gpu.count}",
                )
            )
        groups = tuple((group.count, dict(sorted(group.devices.items()))) for group in partitions.cards)
        return mig.Layout(strategy, groups, per_card=True)

    def report_other_strategy(self, ctx: Context, i: int, stated: str, strategy: str) -> None:
        example = next(name for name, layout in self.layouts if layout.strategy == strategy)
        several = next((name for name, layout in self.layouts if len(_profiles(layout)) > 1), None)
        why = f"pool '{several}' has several profiles" if several else "every MIG pool's cards take one profile"
        ctx.report(
            diag(
                "mig-strategies-differ",
                f"pool '{ctx.spec.node_pools[i].name}' uses the MIG strategy {stated} and pool '{example}' "
                f"{strategy}: the GPU Operator has one mig.strategy for the cluster",
                ctx.path("nodePools", i, "gpu", "mig", "strategy"),
                hint=f"use strategy: {strategy} ({why})",
            )
        )


def _profiles(layout: m.GpuMig) -> set[str]:
    """The MIG profiles a pool's layout cuts its cards into."""
    groups = [layout.devices] if layout.cards is None else [group.devices for group in layout.cards]
    return {profile for devices in groups if devices for profile in devices}

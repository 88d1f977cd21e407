"""MIG layouts: each must fit the pool's card (`policyc.mig`), the single strategy needs one profile per card, the
cluster has one strategy (the GPU Operator's `mig.strategy`), a workload's MIG profile is some pool's, and under the
mixed strategy tenants count MIG devices where they count GPUs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from policyc import mig
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    first = None
    for p in cluster.pools:
        if p.mig is None:
            continue
        layout = p.mig
        at = (*p.path, "gpu", "mig")
        if p.sharing is not None:
            yield diag("mig-layout-invalid", f"pool '{p.name}' both partitions its cards with MIG and shares them",
                       (*p.path, "gpu", "sharing"), hint="keep one of gpu.mig and gpu.sharing")  # fmt: skip
        card = mig.card(p.product)
        model = mig.model_without_mig(p.product) if card is None else None
        if model is not None:
            yield diag("mig-layout-invalid", f"pool '{p.name}': the {model} ({p.product}) has no MIG (NVIDIA's MIG "
                       "user guide lists the cards that do)", at,
                       hint="remove gpu.mig; to share its cards among pods, use gpu.sharing")  # fmt: skip
        elif card is None:
            known = ", ".join(c.name for c in mig.CARDS)
            where = (*at, "cards") if layout.per_card else (*at, "devices")
            yield diag("mig-layout-invalid", f"pool '{p.name}': policyc does not know the MIG profiles of "
                       f"{p.product}", where, hint=f"MIG layouts are checked for {known}")  # fmt: skip
        else:
            for g, (_, devices) in enumerate(layout.cards):
                where = (*at, "cards", g, "devices") if layout.per_card else (*at, "devices")
                for problem in mig.problems(card, devices):
                    yield diag("mig-layout-invalid", f"pool '{p.name}': MIG devices {_layout(devices)} do not fit "
                               f"one card: {problem}", where,
                               hint="see NVIDIA's MIG user guide, 'Supported MIG Profiles', for the card")  # fmt: skip
        if layout.strategy == "single" and len(layout.per_node) > 1:
            yield diag("mig-layout-invalid", f"pool '{p.name}': the single strategy advertises every MIG device as "
                       f"one GPU resource, so its cards take one profile, not {len(layout.per_node)}",
                       (*at, "cards" if layout.per_card else "devices"),
                       hint="keep one profile, or use strategy: mixed")  # fmt: skip
        if first is None:
            first = p
        elif layout.strategy != first.mig.strategy:  # type: ignore[union-attr]  # first has a layout
            yield diag("mig-strategies-differ", f"pool '{p.name}' uses the MIG strategy {layout.strategy} and pool "
                       f"'{first.name}' {first.mig.strategy}: the GPU Operator has one mig.strategy for the cluster",  # type: ignore[union-attr]
                       (*at, "strategy"), hint=f"use strategy: {first.mig.strategy}")  # type: ignore[union-attr]  # fmt: skip

    yield from _profiles_offered(cluster)
    yield from _mixed_devices_counted(cluster)


def _profiles_offered(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # the pool left out for its errors may be the one offering the profile
        return
    for w in cluster.workloads:
        if w.mig_profile is None:
            continue
        if not any(p.tier == w.tier.name and p.mig and w.mig_profile in p.mig.per_node for p in cluster.pools):
            yield diag("mig-profile-without-pool", f"workload '{w.name}' asks for MIG {w.mig_profile} devices, and no "
                       f"pool of tier '{w.tier.name}' has them", (*w.path, "migProfile"),
                       hint=f"partition a pool of the tier with gpu.mig.devices including {w.mig_profile}, or remove "
                       "migProfile")  # fmt: skip


def _mixed_devices_counted(cluster: Cluster) -> Iterator[Diagnostic]:
    """Under the mixed strategy a MIG workload requests `nvidia.com/mig-<profile>`, which a tenant's 'gpu' is not.
    Where the tenant's quota bounds its accelerators, or its queue guarantees or caps them, it must name the MIG
    devices too: else the quota leaves them unbounded, and a queue leaves them unbounded or gives no quota for them,
    by backend."""
    if cluster.mig_strategy != "mixed":
        return
    counted = {*cluster.accelerators, *cluster.claimed_devices}
    asked: dict[tuple[str, str], int] = {}
    for w in cluster.workloads:
        if w.mig_profile is not None:
            key = (w.tenant, mig.resource(w.mig_profile))
            asked[key] = asked.get(key, 0) + w.gpus * w.most_pods
    tenants = {t.name: t for t in cluster.tenants}
    for (name, resource), devices in sorted(asked.items()):
        t = tenants[name]
        hard = {k.removeprefix("requests."): v for k, v in (t.quota.hard if t.quota else {}).items()}
        places = [(("quota", "requests"), hard, "quota bounds"), (("queue", "guarantee"), t.queue.guarantee,
                  "queue guarantees"), (("queue", "capability"), t.queue.capability, "queue caps")]  # fmt: skip
        for field, amounts, verb in places:
            if resource in amounts or not counted.intersection(amounts):
                continue
            yield diag("mig-devices-uncounted", f"tenant '{name}' runs {devices} {resource} (MIG devices under the "
                       f"mixed strategy), but its {verb} only its other GPUs: 'gpu' does not count MIG devices",
                       (*t.path, *field),
                       hint=f"add {resource}: {devices} to tenant '{name}' {'.'.join(field)}")  # fmt: skip


def _layout(devices: Mapping[str, int]) -> str:
    return ", ".join(f"{n} x {p}" for p, n in devices.items())

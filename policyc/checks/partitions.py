"""MIG layouts: each must fit the pool's card (`policyc.gpu.mig`), the single strategy needs one profile per card, a
workload's MIG profile is some pool's, and under the mixed strategy tenants count MIG devices where they count GPUs.
(The cluster's one strategy, the GPU Operator's `mig.strategy`, is checked as the pools are resolved.)"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from policyc.diagnostics import Diagnostic, diag
from policyc.gpu import mig
from policyc.ir import Cluster


def check(cluster: Cluster) -> Iterator[Diagnostic]:
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
                for problem, fix in mig.problems(card, devices):
                    yield diag("mig-layout-invalid", f"pool '{p.name}': MIG devices {_layout(devices)} do not fit "
                               f"one card: {problem}", where,
                               hint=f"{fix} (NVIDIA's MIG user guide, 'Supported MIG Profiles', lists the card's "
                               "layouts)")  # fmt: skip
        if layout.strategy == "single" and len(layout.per_node) > 1:
            yield diag("mig-layout-invalid", f"pool '{p.name}': the single strategy advertises every MIG device as "
                       f"one GPU resource, so its cards take one profile, not {len(layout.per_node)}",
                       (*at, "cards" if layout.per_card else "devices"),
                       hint="keep one profile, or use strategy: mixed")  # fmt: skip

    yield from _profiles_offered(cluster)
    yield from _mixed_devices_counted(cluster)


def _profiles_offered(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # the pool left out for its errors may be the one offering the profile
        return
    for w in cluster.workloads:
        if w.mig_profile is None:
            continue
        offered = sorted({m for p in cluster.pools if p.tier == w.tier.name and p.mig for m in p.mig.per_node})
        if w.mig_profile not in offered:
            other = f"use a profile its pools have ({', '.join(offered)}), " if offered else ""
            yield diag("mig-profile-without-pool", f"workload '{w.name}' asks for MIG {w.mig_profile} devices, and no "
                       f"pool of tier '{w.tier.name}' has them", (*w.path, "migProfile"),
                       hint=f"{other}partition a pool of the tier with gpu.mig.devices including {w.mig_profile}, or "
                       "remove migProfile")  # fmt: skip


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
    held: dict[str, int] = {}
    for p in cluster.kubernetes_pools:
        for resource, per_node in (p.mig.resources if p.mig else {}).items():
            held[resource] = held.get(resource, 0) + per_node * p.max_nodes
    tenants = {t.name: t for t in cluster.tenants}
    for (name, resource), devices in sorted(asked.items()):
        t = tenants[name]
        hard = {k.removeprefix("requests."): v for k, v in (t.quota.hard if t.quota else {}).items()}
        places = [(("quota", "requests"), hard, "quota bounds"), (("queue", "guarantee"), t.queue.guarantee,
                  "queue guarantees"), (("queue", "capability"), t.queue.capability, "queue caps")]  # fmt: skip
        for field, amounts, verb in places:
            if resource in amounts or not counted.intersection(amounts):
                continue
            amount, share = devices, ""
            everyone = sum(n for (_, r), n in asked.items() if r == resource)
            if field == ("queue", "guarantee") and everyone > held.get(resource, 0):
                # the pools cannot guarantee every tenant all it runs: its part of what they hold
                amount = devices * held.get(resource, 0) // everyone
                share = (f" (its part of the {held.get(resource, 0)} the pools hold, which the tenants' workloads ask "
                         f"{everyone} of)")  # fmt: skip
            yield diag("mig-devices-uncounted", f"tenant '{name}' runs {devices} {resource} (MIG devices under the "
                       f"mixed strategy), but its {verb} only its other GPUs: 'gpu' does not count MIG devices",
                       (*t.path, *field),
                       hint=f"add {resource}: {amount} to tenant '{name}' {'.'.join(field)}{share}")  # fmt: skip


def _layout(devices: Mapping[str, int]) -> str:
    return ", ".join(f"{n} x {p}" for p, n in devices.items())

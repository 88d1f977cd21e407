"""MIG layouts: each must fit the pool's card (`policyc.mig`), the single strategy needs one profile per card, the
cluster has one strategy (the GPU Operator's `mig.strategy`), and a workload's MIG profile is some pool's."""

from __future__ import annotations

from collections.abc import Iterator

from policyc import mig
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    first = None
    for p in cluster.pools:
        if p.mig is None:
            continue
        strategy, devices = p.mig
        at = (*p.path, "gpu", "mig")
        if p.sharing is not None:
            yield diag("mig-layout-invalid", f"pool '{p.name}' both partitions its cards with MIG and shares them",
                       (*p.path, "gpu", "sharing"), hint="keep one of gpu.mig and gpu.sharing")  # fmt: skip
        card = mig.card(p.product)
        if card is None:
            known = ", ".join(c.name for c in mig.CARDS)
            yield diag("mig-layout-invalid", f"pool '{p.name}': policyc does not know the MIG profiles of "
                       f"{p.product}", (*at, "devices"), hint=f"MIG layouts are checked for {known}")  # fmt: skip
        else:
            for problem in mig.problems(card, devices):
                yield diag("mig-layout-invalid", f"pool '{p.name}': MIG devices {_layout(devices)} do not fit one "
                           f"card: {problem}", (*at, "devices"),
                           hint="see NVIDIA's MIG user guide, 'Supported MIG Profiles', for the card")  # fmt: skip
        if strategy == "single" and len(devices) > 1:
            yield diag("mig-layout-invalid", f"pool '{p.name}': the single strategy advertises every MIG device as "
                       f"one GPU resource, so a card takes one profile, not {len(devices)}", (*at, "devices"),
                       hint="keep one profile, or use strategy: mixed")  # fmt: skip
        if first is None:
            first = p
        elif strategy != first.mig[0]:  # type: ignore[index]  # first has a layout
            yield diag("mig-strategies-differ", f"pool '{p.name}' uses the MIG strategy {strategy} and pool "
                       f"'{first.name}' {first.mig[0]}: the GPU Operator has one mig.strategy for the cluster",  # type: ignore[index]
                       (*at, "strategy"), hint=f"use strategy: {first.mig[0]}")  # type: ignore[index]  # fmt: skip

    yield from _profiles_offered(cluster)


def _profiles_offered(cluster: Cluster) -> Iterator[Diagnostic]:
    for w in cluster.workloads:
        if w.mig_profile is None:
            continue
        offering = [p for p in cluster.pools if p.tier == w.tier.name and p.mig and w.mig_profile in p.mig[1]]
        if not any(p.mig[0] == "single" for p in offering):  # type: ignore[index]  # offering pools have a layout
            mixed = " (only under the mixed strategy, which templates cannot ask for yet)" if offering else ""
            yield diag("mig-profile-without-pool", f"workload '{w.name}' asks for MIG {w.mig_profile} devices, and no "
                       f"pool of tier '{w.tier.name}' has them{mixed}", (*w.path, "migProfile"),
                       hint=f"partition a pool of the tier with gpu.mig.devices including {w.mig_profile} (strategy "
                       "single), or remove migProfile")  # fmt: skip


def _layout(devices: dict[str, int]) -> str:
    return ", ".join(f"{n} x {p}" for p, n in devices.items())

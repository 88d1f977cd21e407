"""Resource maps as written (a pool's allocatable, a queue's guarantee, a quota ...) with 'gpu' resolved to the
accelerator resource it stands for: the pool's, or the one of the tiers a tenant's workloads use."""

from __future__ import annotations

from dataclasses import dataclass

from policyc.diagnostics import Path, diag
from policyc.gpu import dra
from policyc.k8s.quantity import Quantity
from policyc.language.model.types import GPU
from policyc.resolve.context import Context


@dataclass(frozen=True, slots=True)
class Ambiguous:
    """'gpu' for a tenant whose work uses accelerators of several resources."""

    resources: tuple[str, ...]
    why: str | None
    """None when the workloads or tiers that would tell were left out for errors already reported: not reported."""


def resources(ctx: Context, given: dict[str, Quantity], base: Path, gpu: str | Ambiguous) -> dict[str, Quantity]:
    """Resolve 'gpu' to the accelerator resource `gpu`; report a GPU given under both names, and 'gpu' where it could
    mean several resources (`gpu` is `Ambiguous`: the tenant's workloads use several vendors')."""
    if isinstance(gpu, Ambiguous):
        if GPU in given and gpu.why is not None:
            ctx.report(
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
        ctx.report(
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


def container_resources(
    ctx: Context, given: dict[str, Quantity], base: Path, gpu: str | Ambiguous, counter: str
) -> dict[str, Quantity]:
    """`resources` where only container requests count (`counter`: what counts them): GPUs of a DRA tier, which pods
    claim, are reported and left out."""
    out = resources(ctx, given, base, gpu)
    for name in [n for n in out if dra.is_devices_key(n)]:
        key = GPU if GPU in given and name == gpu else name
        ctx.report(
            diag(
                "dra-gpu-uncounted",
                f"'{key}' here is {name}, the GPUs of a DRA tier, which pods claim; {counter} counts only what "
                "containers request",
                (*base, key),
                at_key=True,
                hint="bound the tier's GPUs in the tenant's quota.requests (a ResourceQuota counts claimed devices), "
                "and remove them here",
            )
        )
        del out[name]
    return out

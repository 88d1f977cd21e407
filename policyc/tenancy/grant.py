"""What the policy grants a workload class, the ground of its tenant's admission contract (`contract`).

The grant is a set of pools: those of the class's tier and usage (or hybrid) whose own taints it tolerates. Every
taint that keeps pods off a node is on a governed key, so the grant is also a set of tolerations: per governed key,
the values a pod of the class may tolerate. A tenant's admission policy lets each of its pods tolerate what one of
its classes is granted, and nothing its templates happen to wear beyond that: an extra toleration beyond its class's
grant is an error (`excess`, reported by `policyc.checks.workloads`), never a widening.
"""

from __future__ import annotations

from dataclasses import dataclass

from policyc.gpu.accelerators import GFD_PRODUCT
from policyc.ir import Cluster, Pool, Taint, Workload, once_per_build
from policyc.k8s.scheduling import NO_EXECUTE, NO_SCHEDULE
from policyc.pods import once_per_workload, placement_tolerations, tolerations, usages

CONTROL_PLANE_TAINT = "node-role.kubernetes.io/control-plane"
"""The control-plane taint kubeadm and most distributions set: no tenant pod tolerates it."""


@once_per_build
def governed_keys(cluster: Cluster) -> tuple[str, ...]:
    """Toleration keys of the taints that keep pods off nodes: every taint of a pool (usage, product or tier,
    Slurm-only, the pools' own) and of its nodes as they register, policyc's control-plane taint and the standard
    one, and GFD's product key."""
    keys = {cluster.keys.usage, GFD_PRODUCT, cluster.keys.control_plane, CONTROL_PLANE_TAINT}
    keys.update(t.key for p in cluster.pools for t in (*p.taints, *p.registration_taints))
    return tuple(sorted(keys))


@once_per_build
def registration_keys(cluster: Cluster) -> frozenset[str]:
    """The keys of the taints nodes carry only as they register (policyc's registration taint): no class is granted
    them, so no tenant pod lands on a node before it is released."""
    kept = {t.key for p in cluster.pools for t in p.taints}
    return frozenset(t.key for p in cluster.pools for t in p.registration_taints if t.key not in kept)


def own_taints(cluster: Cluster, pool: Pool) -> tuple[Taint, ...]:
    """The taints the policy writes on the pool itself (`nodePools[].taints`), not policyc's: the only ones a
    workload class may be granted by tolerating them."""
    policyc = {cluster.keys.usage, cluster.keys.tier, cluster.keys.slurm_only, pool.product_key}
    return tuple(t for t in pool.taints if t.key not in policyc)


def _bounds(cluster: Cluster, w: Workload) -> tuple[Pool, ...]:
    """The pools of the class's tier and usage (or hybrid): all it may ever be granted."""
    return tuple(p for p in cluster.pools if _in_bounds(p, w))


def _in_bounds(pool: Pool, w: Workload) -> bool:
    return pool.tier == w.tier.name and pool.usage in usages(w)


def _class_key(w: Workload) -> tuple:
    """What decides a workload class's grant: its tier, its usage and its extra tolerations."""
    return w.tier.name, w.type, tuple(tuple(sorted(t.items())) for t in w.tolerations)


@once_per_workload(_class_key)
def granted_pools(cluster: Cluster, w: Workload) -> tuple[Pool, ...]:
    """The pools the policy grants the class: of its tier and usage (or hybrid), with every taint that keeps pods
    off within its grant (by key and value, as admission reads tolerations). Its pods may land there whatever
    affinity they carry."""
    g = grant(cluster, w)
    return tuple(p for p in _bounds(cluster, w) if all(t.value in g.get(t.key, ()) for t in _enforced(p)))


def _enforced(pool: Pool) -> tuple[Taint, ...]:
    """The pool's taints that keep pods off (NoSchedule, NoExecute)."""
    return tuple(t for t in pool.taints if t.effect in (NO_SCHEDULE, NO_EXECUTE))


@dataclass(frozen=True, slots=True, eq=False)
class Excess:
    """Why an extra toleration of a workload class tolerates more than the policy grants the class."""

    kind: str
    """'control-plane', 'registration' (the taint of nodes as they register), 'slurm-only' (the taint of a Slurm-only
    pool of its tier and usage), 'exists' (every value of a governed key) or 'value' (a value of a governed key
    outside the grant)."""
    pools: tuple[Pool, ...]
    """The pools outside the grant whose taint it tolerates."""
    instead: tuple[dict, ...]
    """The tolerations within the grant to write instead (none: remove it)."""


def excess(cluster: Cluster, w: Workload, t: dict) -> Excess | None:
    """Why `t`, an extra toleration of class `w`, goes beyond its grant (None: it does not, or its key is not
    governed). Within the grant are the values policyc's own tolerations of the class name, and the pools' own
    taints of the pools of its tier and usage, tolerated with operator Equal."""
    key = t.get("key")
    if not key or key not in governed_keys(cluster):
        return None  # no key: PC433; a key of no taint the policy knows keeps nothing off
    if key in (cluster.keys.control_plane, CONTROL_PLANE_TAINT):
        return Excess("control-plane", (), ())
    if key in registration_keys(cluster):
        return Excess("registration", (), ())
    bounds = _bounds(cluster, w)
    exists = t.get("operator") == "Exists"
    value = None if exists else t.get("value", "")
    if key == cluster.keys.slurm_only and (slurm := tuple(p for p in bounds if _carries(p, key, value))):
        return Excess("slurm-only", slurm, ())
    within = _within(cluster, bounds, key)
    if not exists:
        placed = {(g["key"], g["value"]) for g in placement_tolerations(cluster, w)}
        if (key, value) in placed or any(o["value"] == value for o in within):
            return None
    outside = tuple(p for p in cluster.pools if not _in_bounds(p, w) and _carries(p, key, value))
    return Excess("exists" if exists else "value", outside, within)


def _within(cluster: Cluster, bounds: tuple[Pool, ...], key: str) -> tuple[dict, ...]:
    """The tolerations (operator Equal) of the taints of `key` that the pools `bounds` have of their own, sorted."""
    instead = {(o.key, o.value, o.effect): {"key": o.key, "operator": "Equal", "value": o.value, "effect": o.effect}
               for p in bounds for o in own_taints(cluster, p) if o.key == key}  # fmt: skip
    return tuple(instead[k] for k in sorted(instead))


def _carries(pool: Pool, key: str, value: str | None) -> bool:
    """Whether the pool has a taint of `key` (of `value`, unless None) that keeps pods off."""
    return any(t.key == key and (value is None or t.value == value) for t in _enforced(pool))


@once_per_workload(_class_key)
def grant(cluster: Cluster, w: Workload) -> dict[str, tuple[str, ...]]:
    """Governed key -> the values a pod of the class may tolerate, for the keys it may tolerate at all: what its
    tolerations name with operator Equal (policyc's, and its extra ones, which the checks hold within the grant).
    Shared: callers must not change it."""
    governed = governed_keys(cluster)
    values: dict[str, set[str]] = {}
    for t in tolerations(cluster, w):
        if t.get("key") in governed and t.get("operator", "Equal") == "Equal" and excess(cluster, w, t) is None:
            values.setdefault(t["key"], set()).add(t.get("value", ""))
    return {k: tuple(sorted(v)) for k, v in sorted(values.items())}

"""A namespace quota that binds before the queue (PC496): gangs the queue admits that the quota cannot hold.

Where a job's pods are created only once its queue admits it (the kinds of the backend's `PODS_AFTER_ADMISSION`),
the queue decides how many gangs start at once, and the namespace's ResourceQuota must hold them all: if it cannot,
the scheduler admits a gang, its controller creates pods until the quota refuses one, and the partial gang waits,
holding quota no other job can use. Recorded on a real cluster with ai-prod: team-a's queue admitted 5 gangs of
4 x 800Gi, its 12000Gi quota held 3, the 4th got 3 of its pods and the 5th none, and both waited for good.

The rule, per tenant and namespace: every mix of its workloads' gangs the queue admits at once must fit the quotas
that count their pods (the tenant's, and a priority class's). What the queue admits: per resource, its capability
or the nearest ancestor's; an accelerator no queue caps, what the cluster's Kubernetes pools hold (an upper bound:
a scheduler may keep other queues' guarantees back). The queue counts a job's gang or all its pods, as the backend
says; the quota counts every pod the job creates. Mixes matter: gangs that fit alone may not fit together. Of the
mixes the quota cannot hold, the one that binds first takes the least of the queue (of the capped resource every
gang needs, the accelerator first; then the fewest gangs); the warning names it, with each workload's gangs by
queue and by quota alone.

Two ways out, both in the hint: raise each quota key to the most an admitted mix takes of it, or, if the quota is
the limit meant, lower the capability to the most a mix below the first overflow takes: a capability the quota
holds is how a policy says the quota is its limit. A workload whose one gang the quota cannot hold is PC507's (an
error) and is left out here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from policyc.checks.autoscaling import quota_field, quota_uses
from policyc.checks.sizing import queue_use
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster, Tenant, Workload, once_per_build
from policyc.k8s.quantity import Quantity
from policyc.pods import pod_resources
from policyc.proof.admitted import QuotaUse
from policyc.registry import settings

T = TypeVar("T")

MAX_MIXES = 200_000
"""Mixes of gangs tried per namespace; beyond it, each workload's gangs are tried alone (and the message says so)."""
SHOWN = 3
"""Workloads whose figures one message gives at most."""


@dataclass(frozen=True, slots=True, eq=False)
class Cap:
    """What the queue admits of one resource: a capability (`owner`'s), or the cluster's pools (owner None)."""

    resource: str
    amount: Quantity
    owner: Tenant | None


@dataclass(frozen=True, slots=True, eq=False)
class Gang:
    """One job of a workload: what its queue counts of it, and what its pods take of each quota key."""

    workload: Workload
    queue: dict[str, Quantity]
    """Capped resource -> what the queue counts of one job."""
    quota: dict[tuple[str, str], QuotaUse]
    """(quota, key) -> what one job's pods take of it."""


def _counted_pods(cluster: Cluster, w: Workload) -> int | None:
    """The pods of one job the queue counts when it admits it, or None: its pods exist before the queue sees them."""
    counts = settings(cluster.scheduler.backend).PODS_AFTER_ADMISSION.get(w.kind)
    if counts is None:
        return None
    return w.gang if counts == "gang" else w.most_pods


@once_per_build
def _kubernetes_capacity(cluster: Cluster) -> dict[str, Quantity]:
    return cluster.capacity(cluster.kubernetes_pools)


def caps(cluster: Cluster, w: Workload) -> dict[str, Cap]:
    """What the queue admits of each resource one of the workload's pods requests (those it bounds)."""
    pods = pod_resources(cluster, w)
    out = {u.resource: Cap(u.resource, u.cap, u.capped_by) for u in queue_use(w, pods, cluster.tenants_by_name)}
    total = _kubernetes_capacity(cluster)
    for r in pods.requests:
        if r not in out and r in cluster.accelerators and r in total:
            out[r] = Cap(r, total[r], None)
    return out


def gang(cluster: Cluster, w: Workload) -> Gang | None:
    """The workload's job as its queue and quota count it (either may count none of it); None if its pods exist
    before the queue admits it, or cannot be sized."""
    counted = _counted_pods(cluster, w)
    pods = pod_resources(cluster, w)
    if counted is None or pods.unsized:
        return None
    tenant = cluster.tenants_by_name[w.tenant]
    bounded = {r: pods.requests[r] * counted for r in caps(cluster, w) if not pods.requests[r].is_zero()}
    uses = {(u.quota, u.key): u for u in quota_uses(cluster, w, tenant, w.most_pods) if not u.need.is_zero()}
    return Gang(w, bounded, uses)


def _most(left: dict[str, Fraction], g: Gang) -> int:
    return min(math.floor(left[r] / amount.value) for r, amount in g.queue.items() if r in left)


def _mixes(gangs: Sequence[Gang], cap: dict[str, Cap], alone: bool) -> Iterator[tuple[int, ...]]:
    """Every mix of the gangs (a count of each) that the queue admits at once; with `alone`, one workload's only."""

    def walk(i: int, left: dict[str, Fraction], used: bool) -> Iterator[tuple[int, ...]]:
        if i == len(gangs):
            yield ()
            return
        g = gangs[i]
        for n in range(0 if alone and used else _most(left, g), -1, -1):
            if n:
                rest = {r: amount - g.queue[r].value * n if r in g.queue else amount for r, amount in left.items()}
            else:  # none of this gang: what is left stays
                rest = left
            for tail in walk(i + 1, rest, used or n > 0):
                yield (n, *tail)

    yield from walk(0, {r: c.amount.value for r, c in cap.items()}, False)


def _mix_count(gangs: Sequence[Gang], cap: dict[str, Cap]) -> int:
    left = {r: c.amount.value for r, c in cap.items()}
    return math.prod(_most(left, g) + 1 for g in gangs)


def _taken(gangs: Sequence[Gang], mix: tuple[int, ...], key: tuple[str, str]) -> Fraction:
    """What a mix's pods take of one quota key."""
    return sum(
        (n * g.quota[key].need.value for n, g in zip(mix, gangs, strict=True) if n and key in g.quota), Fraction(0)
    )


def _size(gangs: Sequence[Gang], mix: tuple[int, ...], resource: str | None) -> Fraction:
    """What the queue counts of a mix, in `resource` (0 without one)."""
    if resource is None:
        return Fraction(0)
    return sum((n * g.queue[resource].value for n, g in zip(mix, gangs, strict=True) if n), Fraction(0))


@dataclass(frozen=True, slots=True, eq=False)
class Overflow:
    """A namespace whose quota cannot hold every mix of gangs its tenant's queue admits."""

    namespace: str
    gangs: tuple[Gang, ...]
    caps: dict[str, Cap]
    measure: str | None
    """The capped resource every gang needs, by which mixes are ordered (the accelerator first); None if none is."""
    first: tuple[int, ...]
    """The mix that binds first: of those the quota cannot hold, the least of `measure`, then the fewest gangs."""
    first_over: tuple[tuple[str, str], ...]
    """The quota keys it overflows."""
    worst: dict[tuple[str, str], Fraction]
    """Each quota key an admitted mix overflows -> the most an admitted mix takes of it."""
    below: Fraction
    """The most of `measure` an admitted mix takes below the first overflow."""
    alone: bool
    """Mixes were too many to try: each workload's gangs were tried alone."""


def _measure(cluster: Cluster, gangs: Sequence[Gang]) -> str | None:
    shared = set.intersection(*(set(g.queue) for g in gangs))
    return min(shared, key=lambda r: (r not in cluster.accelerators, r), default=None)


def overflow(cluster: Cluster, tenant: Tenant, namespace: str) -> Overflow | None:
    """The namespace's overflow, or None when its quota holds every mix of gangs its tenant's queue admits."""
    workloads = [w for w in cluster.workloads_of(tenant.name) if w.namespace == namespace]
    return _overflow(cluster, namespace, workloads)


def _overflow(cluster: Cluster, namespace: str, workloads: Sequence[Workload]) -> Overflow | None:
    gangs = tuple(g for w in workloads if (g := gang(cluster, w)) and g.queue and g.quota and _fits_alone(g))
    if not gangs:
        return None
    cap: dict[str, Cap] = {}
    for g in gangs:
        cap.update({r: c for r, c in caps(cluster, g.workload).items() if r in g.queue})
    hard = {key: use.hard.value for g in gangs for key, use in g.quota.items()}
    measure = _measure(cluster, gangs)
    alone = _mix_count(gangs, cap) > MAX_MIXES
    worst: dict[tuple[str, str], Fraction] = {}
    first: tuple[tuple, tuple[int, ...], tuple[tuple[str, str], ...]] | None = None
    sizes: set[Fraction] = set()
    for mix in _mixes(gangs, cap, alone):
        over = _over(gangs, mix, hard, worst)
        rank = (_size(gangs, mix, measure), sum(mix), mix)
        if over and (first is None or rank < first[0]):
            first = (rank, mix, over)
        sizes.add(rank[0])
    if first is None:
        return None
    below = max((s for s in sizes if s < first[0][0]), default=Fraction(0))
    return Overflow(namespace, gangs, cap, measure, first[1], first[2], worst, below, alone)


def _over(
    gangs: Sequence[Gang],
    mix: tuple[int, ...],
    hard: dict[tuple[str, str], Fraction],
    worst: dict[tuple[str, str], Fraction],
) -> tuple[tuple[str, str], ...]:
    """The quota keys `mix` takes more of than `hard` allows, sorted; `worst` keeps the most any mix takes of each."""
    over = []
    for key, limit in hard.items():
        taken = _taken(gangs, mix, key)
        if taken > limit:
            over.append(key)
            worst[key] = max(worst.get(key, taken), taken)
    return tuple(sorted(over))


def _fits_alone(g: Gang) -> bool:
    """One gang fits its quota (else the admission proof reports it, PC507)."""
    return all(use.fits for use in g.quota.values())


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # a pool left out for its errors could size the pods differently
        return
    title = settings(cluster.scheduler.backend).TITLE
    placed: dict[tuple[str, str], list[Workload]] = {}
    for w in cluster.workloads:
        placed.setdefault((w.tenant, w.namespace), []).append(w)
    for t in cluster.tenants:
        if t.quota is None:
            continue
        found = [o for ns in t.namespaces if (o := _overflow(cluster, ns, placed.get((t.name, ns), []))) is not None]
        if found:
            yield _diagnostic(cluster, t, found, title)


def alone_by_queue(g: Gang, cap: dict[str, Cap]) -> tuple[int, str]:
    """How many of the workload's gangs the queue admits at once, none of another with them, and the resource that
    bounds them."""
    return min((math.floor(cap[r].amount.value / amount.value), r) for r, amount in g.queue.items())


def alone_by_quota(g: Gang) -> tuple[int, tuple[str, str]]:
    """How many of the workload's gangs its quotas hold at once, and the (quota, key) that bounds them (of keys that
    hold as many, the one a gang takes the most of)."""
    count, _, key = min((math.floor(use.hard.value / use.need.value), -use.need.value / use.hard.value, key)
                        for key, use in g.quota.items())  # fmt: skip
    return count, key


def _either(counts: list[tuple[str, int, T]], bound: Callable[[T], str]) -> str:
    """'8 of a or 32 of b (what bounds them)', each with its own bound when they differ; at most `SHOWN` of them."""
    shown, more = counts[:SHOWN], len(counts) - SHOWN
    rest = f" or {more} more" if more > 0 else ""
    if len({b for _, _, b in counts}) == 1:
        return " or ".join(f"{n} of {name}" for name, n, _ in shown) + f"{rest} ({bound(counts[0][2])})"
    return " or ".join(f"{n} of {name} ({bound(b)})" for name, n, b in shown) + rest


def binding(cluster: Cluster, w: Workload) -> str:
    """How many of the workload's gangs start at once, alone, by its queue and by its namespace quota, the one that
    binds first named first (the queue on a tie); '-' where its pods exist before the queue admits it."""
    g = gang(cluster, w)
    if g is None:
        return "-"
    figures = []
    if g.queue:
        n, r = alone_by_queue(g, caps(cluster, w))
        figures.append((n, 0, "queue", r))
    if g.quota:
        q, (_, key) = alone_by_quota(g)
        figures.append((q, 1, "quota", key))
    if not figures:
        return "-"
    (n, _, what, by), *rest = sorted(figures)
    return f"{what}: {n} ({by})" + "".join(f"; {w_} {m} ({b})" for m, _, w_, b in rest)


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _diagnostic(cluster: Cluster, t: Tenant, found: list[Overflow], title: str) -> Diagnostic:
    o = min(found, key=lambda o: (_size(o.gangs, o.first, o.measure), o.namespace))
    uses = {key: use for x in found for g in x.gangs for key, use in g.quota.items()}

    def field(key: tuple[str, str]) -> str:
        return ".".join(quota_field(cluster, t.name, uses[key]))

    def bound(r: str) -> str:
        c = o.caps[r]
        if c.owner is None:
            return f"the cluster's {c.amount} {r}: no queue caps it"
        whose = "" if c.owner is t else f"tenant '{c.owner.name}' "
        return f"{whose}queue.capability.{cluster.policy_key(r)} {c.amount}"

    if len(o.gangs) == 1:
        [g] = o.gangs
        (n, r), (q, k) = alone_by_queue(g, o.caps), alone_by_quota(g)
        admits = f"{_plural(n, 'gang')} of {g.workload.name} at once ({bound(r)}, {g.queue[r]} each)"
        holds = f"{q} ({field(k)} {uses[k].hard}, {g.quota[k].need} each)"
        mix = f"{o.first[0]}"
    else:
        admits = _either([(g.workload.name, *alone_by_queue(g, o.caps)) for g in o.gangs], bound) + " at once, or a mix"
        holds = _either(
            [(g.workload.name, *alone_by_quota(g)) for g in o.gangs], lambda k: f"{field(k)} {uses[k].hard}"
        )
        mix = " and ".join(f"{n} of {g.workload.name}" for n, g in zip(o.first, o.gangs, strict=True) if n)
    key = min(o.first_over, key=lambda k: (-(_taken(o.gangs, o.first, k) / uses[k].hard.value), k))
    took = [f"{_amount(uses[key].need, _taken(o.gangs, o.first, key))} {uses[key].key}"]
    if o.measure is not None:
        took.insert(0, f"{_amount(o.gangs[0].queue[o.measure], _size(o.gangs, o.first, o.measure))} {o.measure}")
    message = (
        f"tenant '{t.name}': its queue admits {admits}, the quota of namespace '{o.namespace}' holds {holds}: "
        f"{title} admits {mix} ({', '.join(took)}), and the gang the quota cuts short waits admitted, holding queue "
        "room and quota no other job can use" + (" (workloads tried alone: too many mixes)" if o.alone else "")
    )
    worst: dict[tuple[str, str], Fraction] = {}
    for x in found:
        for k, amount in x.worst.items():
            worst[k] = max(worst.get(k, amount), amount)
    raised = " and ".join(f"{field(k)} to {_amount(uses[k].need, amount)}" for k, amount in sorted(worst.items()))
    hint = f"raise {raised} (what the gangs the queue admits take at most)"
    lower = _lower(cluster, t, found, o)
    if lower:
        hint += f", or {lower} if the quota is the limit you mean"
    return diag("quota-below-queue", message, (*t.path, *quota_field(cluster, t.name, uses[key])), hint=hint)


def _lower(cluster: Cluster, t: Tenant, found: list[Overflow], o: Overflow) -> str | None:
    """The capability that keeps every mix the queue admits within the quota, as the hint words it; None when there
    is none (no resource every gang needs, or one below the queue's deserved share, which the webhook refuses)."""
    measure = o.measure
    if measure is None or any(x.measure != measure for x in found):
        return None
    c = o.caps[measure]
    owner = c.owner or t
    like = o.gangs[0].queue[measure]
    value = _amount(like, min(x.below for x in found))
    if value.is_zero() or owner.queue.deserved.get(measure, Quantity.from_value(0)) > value:
        return None
    whose = "" if owner is t else f"tenant '{owner.name}' "
    field = f"{whose}queue.capability.{cluster.policy_key(measure)}"
    first = _amount(like, min(_size(x.gangs, x.first, measure) for x in found))
    to = f"{value} (anything below {first})"
    return f"lower {field} to {to}" if c.owner is not None else f"set {field}: {to}"


def _amount(like: Quantity, value: Fraction) -> Quantity:
    """`value` as a quantity in the format of `like` (16000Gi rather than its bytes)."""
    return Quantity.from_value(value, like.format)

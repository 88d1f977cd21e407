"""Volcano's rules on a policy: the actions and the generated volcano-scheduler.conf (with the policy's extra plugin
settings merged in) against policyc's strict model of Volcano's scheduler (`policyc.backends.volcano.conf`); queue
fields the chosen queue plugin ignores; actions the policy relies on; queue trees the plugin and the webhook accept;
no queue named like one Volcano manages."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.backends.volcano.backend import scheduler_conf_with_origins
from policyc.backends.volcano.conf.check import check_actions, check_conf
from policyc.checks import queue_tree, queues
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster, PriorityClass, Tenant, Workload, queue_chain

SCHEDULER = ("spec", "scheduler")
MAX_DEPTH = 5
"""Volcano's --max-queue-depth default (v1.15+): levels below root."""


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    for f in check_actions(cluster.scheduler.actions, (*SCHEDULER, "actions")):
        yield diag(f.rule, f.message, f.path, hint=f.hint)
    yield from _plugins(cluster)
    yield from _queue_fields(cluster)
    yield from _hierarchy(cluster)
    yield from queue_tree.leaf_queues_only(cluster, "Volcano")
    yield from _preemption(cluster)


def _plugins(cluster: Cluster) -> Iterator[Diagnostic]:
    first: dict[object, int] = {}
    for i, entry in enumerate(cluster.scheduler.plugins):
        name = entry.get("name")
        if isinstance(name, str) and name in first:
            yield diag("duplicate-plugin", f"plugin '{name}' is configured twice in scheduler.plugins",
                       (*SCHEDULER, "plugins", i, "name"), hint=f"merge it into plugins[{first[name]}]")  # fmt: skip
        first.setdefault(name, i)
    conf, origins = scheduler_conf_with_origins(cluster)
    for f in check_conf(conf):
        at = (f.path[1], f.path[3]) if f.path[:1] == ("tiers",) and len(f.path) >= 4 else None
        if at in origins:
            yield diag(f.rule, f.message, (*SCHEDULER, "plugins", origins[at], *f.path[4:]), hint=f.hint)
        else:  # in what policyc generates by itself: a policyc bug, but never silently
            yield diag(f.rule, f"the generated volcano-scheduler.conf: {f.message}", SCHEDULER, hint=f.hint)


def _queue_fields(cluster: Cluster) -> Iterator[Diagnostic]:
    plugin, actions = cluster.scheduler.queue_plugin, cluster.scheduler.actions
    for t in cluster.tenants:
        q = t.queue
        extra = queues.deserved_apart(q)
        if plugin == "proportion" and extra:
            yield diag(
                "deserved-ignored",
                f"queue '{t.name}' sets deserved, which the proportion plugin ignores (it derives a fair share "
                "from the weight); policyc still writes it because Volcano's webhook demands deserved >= "
                "guarantee",
                (*t.path, "queue", "deserved"),
                hint="use weight with proportion, or set scheduler.queuePlugin: capacity",
            )
        if plugin == "capacity" and q.weight != 1:
            yield diag(
                "weight-ignored",
                f"queue '{t.name}' sets weight {q.weight}, which the capacity plugin ignores",
                (*t.path, "queue", "weight"),
                hint="use deserved with capacity, or set scheduler.queuePlugin: proportion",
            )
    if "allocate" not in actions:
        yield diag(
            "missing-scheduler-action",
            "the actions do not include allocate: Volcano will place no pod",
            ("spec", "scheduler", "actions"),
            hint="add allocate",
        )
    if "reclaim" not in actions and any(t.queue.guarantee for t in cluster.tenants):
        yield diag(
            "missing-scheduler-action",
            "queues have guarantees but the actions do not include reclaim: a queue cannot take back its "
            "share from queues that borrowed it",
            ("spec", "scheduler", "actions"),
            hint="add reclaim",
        )


def _hierarchy(cluster: Cluster) -> Iterator[Diagnostic]:
    with_parent = [t for t in cluster.tenants if t.queue.parent]
    if not with_parent:
        return
    plugin = cluster.scheduler.queue_plugin
    if plugin != "capacity":
        others = f" and {len(with_parent) - 1} more" if len(with_parent) > 1 else ""
        yield diag(
            "hierarchy-needs-capacity",
            f"queue parents are used (by tenant '{with_parent[0].name}'{others}), but the {plugin} plugin ignores them",
            (*SCHEDULER, "queuePlugin"),
            hint="set scheduler.queuePlugin: capacity for hierarchical queues",
        )
    by_name = {t.name: t for t in cluster.tenants}
    for t in with_parent:
        chain = queue_chain(t, by_name)
        if len(chain) > MAX_DEPTH and chain[-1].queue.parent not in by_name:  # a cycle is reported on its own
            yield diag(
                "queue-tree-too-deep",
                f"queue '{t.name}' is {len(chain)} levels below root ({' -> '.join(a.name for a in chain)}); "
                f"Volcano allows {MAX_DEPTH}",
                (*t.path, "queue", "parent"),
                hint=f"give it a parent at most {MAX_DEPTH - 1} levels below root, e.g. parent: "
                f"{chain[len(chain) - MAX_DEPTH + 1].name}, or flatten the queue tree",
            )


PREEMPT_ACTIONS = ("preempt", "gangpreempt")
"""Actions that displace lower-priority jobs of the same queue; both skip jobs whose PodGroup is still Pending."""


def _preemption(cluster: Cluster) -> Iterator[Diagnostic]:
    """A tenant whose workloads run at classes of which a higher one may preempt a lower one: with enqueue, it cannot
    once the queue is full.

    `enqueue` lets a PodGroup leave Pending only while the queue's allocated and inqueue work plus its minResources
    stay within the queue's capability (the cluster, without one), whatever the job's priority; `preempt` and
    `gangpreempt` skip Pending jobs. So a higher-class job held by a queue full of lower-class work waits for that
    work to end (volcano#1772, #2067; the vectors' minimal/scenario/preempt-lower). Said of a complete policy only: a
    class left out for its error would read as none.
    """
    if not cluster.complete:
        return
    actions = cluster.scheduler.actions
    if "enqueue" not in actions or not any(a in actions for a in PREEMPT_ACTIONS):
        return
    classes = {c.name: c for c in cluster.priority_classes}
    default = next((c.name for c in cluster.priority_classes if c.global_default), None)
    for t in cluster.tenants:
        runs = [(w, classes.get(w.priority_class or default or "")) for w in cluster.workloads_of(t.name)]
        found = _held_by_queue(cluster, t, runs)
        if found is not None:
            yield found


def _held_by_queue(cluster: Cluster, t: Tenant, runs: list[tuple[Workload, PriorityClass | None]]) -> Diagnostic | None:
    """The tenant's workload of the highest class that may preempt, which its queue holds once lower-class work of
    `runs` (its workloads and their classes) fills it."""
    if not runs:
        return None
    low = min((c for _, c in runs), key=lambda c: (c.value, c.name) if c else (0, ""))
    lowest = low.value if low else 0
    higher = [(w, c) for w, c in runs if c and c.value > lowest and c.preemption_policy != "Never"]
    if not higher:
        return None
    w, c = max(higher, key=lambda wc: (wc[1].value, wc[0].name))
    lower = listing([v.name for v, d in runs if d == low])
    at = f"priority class {low.name} ({low.value})" if low else "no priority class (0)"
    preempting = sorted({d.name for _, d in higher})
    capped = [f"queue.capability.{cluster.policy_key(r)} {amount}" for r, amount in t.queue.capability.items()]
    full = f"its queue's capability ({', '.join(capped)})" if capped else "the cluster (its queue has no capability)"
    return diag(
        "preemption-held-by-queue",
        f"tenant '{t.name}' runs {w.name} at priority class {c.name} ({c.value}) and {lower} at {at}, but "
        f"Volcano lets a higher class displace a lower one only while queue '{t.name}' has room: once lower-class "
        f"work fills {full}, a higher-class job is held before enqueue ('queue resource quota insufficient'), "
        "where preempt never sees it, and waits for that work to end (volcano#1772, #2067)",
        (*w.path, "priorityClass") if w.priority_class else (*w.path, "name"),
        hint=f"if {' and '.join(preempting)} should only go first (Volcano orders waiting jobs by priority), set "
        f"preemptionPolicy: Never on {'it' if len(preempting) == 1 else 'them'} (then neither preempts nor "
        f"reclaims); if {w.name} must displace other work, give it a tenant of its own, whose guarantee reclaim "
        "takes back (in the recorded runs, for a one-pod job only: never for a gang)",
    )


RESERVED_QUEUES = ("root", "default")
"""Queues Volcano creates and manages itself."""


def reserved_queue_names(cluster: Cluster) -> Iterator[Diagnostic]:
    for t in cluster.tenants:
        if t.name in RESERVED_QUEUES:
            yield diag(
                "reserved-queue-name",
                f"tenant '{t.name}' would own the queue '{t.name}', which Volcano creates and manages itself",
                (*t.path, "name"),
                hint="give the tenant another name",
            )


CHECKS = (reserved_queue_names, check)
"""The rules face (`policyc.backends.interface.RulesFace`): run only for policies that select Volcano."""

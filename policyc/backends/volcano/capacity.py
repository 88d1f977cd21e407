"""A model of what Volcano's scheduler does with jobs that compete for a cluster: which of them run, which wait
(and why), and which running pods reclaim or preemption evicts.

It replays Volcano's scheduling cycle (vc-scheduler and vc-controller-manager, v1.15 and later) on API objects as
they are stored: Nodes, Queues, ResourceQuotas, the volcano-scheduler.conf, and Volcano Jobs submitted one after
another, each once the scheduler has settled the previous ones. A cycle is

1. the job controller creating the pods of every job past `enqueue` (a PodGroup that is not Pending), one by one,
   each admitted or refused by its namespace's ResourceQuotas (scoped by priority class where they are);
2. the conf's actions in order:
   - `enqueue`: a Pending job (a gang of `minAvailable` pods) is admitted (`Inqueue`) only if the overcommit plugin
     (the cluster's allocatable times its factor, default 1.2, minus what pods use, minus what admitted jobs still
     need) and the queue plugin both let it: proportion and capacity compare what the queue has allocated, plus what
     its admitted jobs still need, plus the job's gang, with the queue's real capability (the cluster minus the other
     queues' guarantees, capped by its capability; with hierarchical queues each ancestor's too). A job refused here
     has no pods, so `preempt` and `reclaim`, which only serve jobs with pending pods, never see it (volcano#1772,
     #2067): a queue at its capability cannot make room by priority.
   - `allocate`: the pods of admitted jobs are placed where they fit (node affinity, taints, allocatable) and the
     queue admits them; a gang is bound only if at least `minAvailable` of its pods find a place, else nothing is.
     Under proportion a queue that holds its deserved share (the cluster water-filled by weight over the queues that
     have jobs, up to what they ask) is skipped, and that share is what reclaim measures; under capacity it is the
     queue's `deserved`.
   - `preempt`: a starving job (fewer than `minAvailable` pods placed) evicts running pods of lower-priority jobs of
     its own queue, node by node; a pod whose class says `preemptionPolicy: Never` does not preempt.
   - `reclaim`: a starving job whose queue is below its deserved share evicts running pods of other reclaimable
     queues that are above theirs (and would stay at or above their guarantee).
   Both place one pod at a time on a node where victims make room, skip nodes without candidate victims, and commit
   their evictions only if the job then reaches `minAvailable`; otherwise they undo them. A gang whose pods fit the
   room one eviction frees (two pods of 4 GPUs where one 8-GPU pod is evicted) is therefore never served: its second
   pod finds no victim on that node, and the eviction is undone every cycle.
3. the PodGroup phases: Running once `minAvailable` pods are bound; Unknown when a running gang lost pods below it.

What it does not cover: the DRF and task-topology plugins' orderings, hypernodes and network topology, `backfill`
(pods without requests), `shuffle`, pod affinity and topology spread, LimitRange defaults (pods must state their
requests), init containers, DRA claims, elastic scale-down, queue states other than Open, and the exact node a pod
lands on (it places by binpack or spread score, ties by node name, where Volcano's node order is not stable).
Node and queue order between jobs of equal priority follows submission order.

The API: `simulate(cluster, jobs, existing)` returns each job's `Outcome` (phase, why enqueue holds it, pods
created, the nodes of its bound pods, pods evicted). `Cluster.from_objects(nodes, objects)` makes the cluster from
policyc's emitted objects (Queues, ResourceQuotas, PriorityClasses, the scheduler ConfigMap) and Nodes
(`Node.from_object`, or `nodes_of` a policy's pools); `Job.from_object` reads a Volcano Job, Deployment or batch Job.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ruamel.yaml import YAML

from policyc import ir
from policyc.backends.volcano.backend import CONFIG_KEY, CONFIGMAP_NAME, QUEUE_ANNOTATION
from policyc.k8s.objects import resource_list
from policyc.k8s.quantity import Quantity
from policyc.k8s.scheduling import RequiredNodeAffinity, taint_filter

Resources = dict[str, Fraction]
"""Amounts by resource name (cpu in cores, memory in bytes, extended resources in units)."""

ROOT = "root"
DEFAULT_OVERCOMMIT = Fraction(6, 5)
"""The overcommit plugin's default `overcommit-factor`."""

PENDING, INQUEUE, RUNNING, UNKNOWN = "Pending", "Inqueue", "Running", "Unknown"
"""PodGroup phases."""

OVERUSED = "resource in cluster is overused"
"""The overcommit plugin's reason for refusing a job at `enqueue` (its event message)."""
QUEUE_INSUFFICIENT = "queue resource quota insufficient"
"""The queue plugin's reason for refusing a job at `enqueue`."""

MAX_CYCLES = 50
"""Scheduling cycles to settle in; a state that still changes after these is reported as it is."""


def resources(mapping: Mapping[str, Any] | None) -> Resources:
    """A ResourceList as amounts; quota-style keys (`requests.*`, `limits.*`, `count/*`, `pods`), which a PodGroup's
    minResources also carries, are left out."""
    out: Resources = {}
    for name, amount in (mapping or {}).items():
        if name == "pods" or name.startswith(("requests.", "limits.", "count/")):
            continue
        out[name] = Quantity.from_json(amount).value
    return out


def _add(a: Mapping[str, Fraction], b: Mapping[str, Fraction], sign: int = 1) -> Resources:
    out = dict(a)
    for name, amount in b.items():
        out[name] = out.get(name, Fraction(0)) + sign * amount
    return out


def _scaled(a: Mapping[str, Fraction], factor: Fraction | int) -> Resources:
    return {name: amount * factor for name, amount in a.items()}


def _within(
    used: Mapping[str, Fraction], limit: Mapping[str, float | Fraction], asked: Mapping[str, Fraction]
) -> list[str]:
    """The resources `asked` for (non-zero) on which `used` exceeds `limit` (a resource `limit` does not name is
    unlimited): Volcano's `LessEqualWithDimension`, naming the dimensions that fail."""
    return sorted(n for n, a in asked.items() if a > 0 and n in limit and used.get(n, Fraction(0)) > limit[n])


def _fits(free: Mapping[str, Fraction], asked: Mapping[str, Fraction]) -> bool:
    return all(a <= 0 or free.get(n, Fraction(0)) >= a for n, a in asked.items())


# ---------------------------------------------------------------------------------------------------------------
# The objects


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, Any], ...]
    allocatable: Resources

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> Node:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        return cls(
            meta["name"],
            dict(meta.get("labels") or {}),
            tuple(spec.get("taints") or ()),
            resources(status.get("allocatable")),
        )

    def as_object(self) -> dict[str, Any]:
        return {"metadata": {"name": self.name, "labels": dict(self.labels)}, "spec": {"taints": list(self.taints)}}


@dataclass(frozen=True, slots=True, eq=False)
class Queue:
    name: str
    parent: str | None
    """The parent queue (None: the root queue, or this is root)."""
    capability: Resources
    deserved: Resources
    guarantee: Resources
    reclaimable: bool = True
    weight: int = 1

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> Queue:
        spec = obj.get("spec") or {}
        name = obj["metadata"]["name"]
        parent = spec.get("parent") or (None if name == ROOT else ROOT)
        return cls(
            name,
            parent,
            resources(spec.get("capability")),
            resources(spec.get("deserved")),
            resources((spec.get("guarantee") or {}).get("resource")),
            spec.get("reclaimable", True) is not False,
            int(spec.get("weight") or 1),
        )


@dataclass(frozen=True, slots=True, eq=False)
class Quota:
    """A ResourceQuota: its `hard` limits (as the API server keys them) and the priority classes it counts (None: every
    pod; else `(operator, classes)` of its PriorityClass scope)."""

    namespace: str
    name: str
    hard: Mapping[str, Fraction]
    scope: tuple[str, tuple[str, ...]] | None = None

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> Quota:
        meta, spec = obj["metadata"], obj.get("spec") or {}
        hard = {k: Quantity.from_json(v).value for k, v in (spec.get("hard") or {}).items()}
        scope = None
        for e in (spec.get("scopeSelector") or {}).get("matchExpressions") or ():
            if e.get("scopeName") == "PriorityClass":
                scope = (e.get("operator", "In"), tuple(e.get("values") or ()))
        return cls(meta.get("namespace", ""), meta["name"], hard, scope)

    def counts(self, priority_class: str | None) -> bool:
        if self.scope is None:
            return True
        operator, classes = self.scope
        return {
            "In": priority_class in classes,
            "NotIn": priority_class not in classes,
            "Exists": priority_class is not None,
            "DoesNotExist": priority_class is None,
        }.get(operator, False)

    def usage(self, pod: Pod) -> dict[str, Fraction]:
        """What a pod adds to this quota's tracked keys."""
        out = {"pods": Fraction(1), "count/pods": Fraction(1)}
        for name, amount in pod.requests.items():
            out[f"requests.{name}"] = amount
            if "/" not in name:
                out[name] = amount
        for name, amount in pod.limits.items():
            out[f"limits.{name}"] = amount
        return {k: v for k, v in out.items() if k in self.hard}


@dataclass(frozen=True, slots=True)
class Pod:
    """One pod of a job's task, as its template asks."""

    requests: Resources
    limits: Resources
    template: Mapping[str, Any]
    """The pod template (`spec` is read for node affinity and tolerations)."""
    priority_class: str | None

    @classmethod
    def from_template(cls, template: Mapping[str, Any]) -> Pod:
        spec = template.get("spec") or {}
        requests: Resources = {}
        limits: Resources = {}
        for c in spec.get("containers") or ():
            res = c.get("resources") or {}
            given_limits = resources(res.get("limits"))
            # the API server defaults a missing request to the limit
            requests = _add(requests, {**given_limits, **resources(res.get("requests"))})
            limits = _add(limits, given_limits)
        return cls(requests, limits, template, spec.get("priorityClassName"))


@dataclass(frozen=True, slots=True, eq=False)
class Job:
    """A Volcano Job (or any gang): its pods in creation order, `min_available` of which must run together."""

    namespace: str
    name: str
    queue: str
    min_available: int
    pods: tuple[Pod, ...]
    priority_class: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def gang(self) -> Resources:
        """The PodGroup's minResources: what its first `min_available` pods ask."""
        out: Resources = {}
        for pod in self.pods[: self.min_available]:
            out = _add(out, pod.requests)
        return out

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> Job:
        """From a `batch.volcano.sh` Job as stored (its webhook defaults minAvailable to the sum of the replicas and the
        queue to `default`); or from a Deployment, StatefulSet or batch/v1 Job whose pods name Volcano: the controller
        gives their owner a PodGroup of minMember 1, in the queue of the pods' `scheduling.volcano.sh/queue-name`."""
        meta, spec = obj["metadata"], obj.get("spec") or {}
        namespace, name = meta.get("namespace", "default"), meta["name"]
        if str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/"):
            pods = tuple(
                Pod.from_template(t.get("template") or {})
                for t in spec.get("tasks") or ()
                for _ in range(int(t.get("replicas", 1)))
            )
            min_available = spec.get("minAvailable")
            return cls(
                namespace,
                name,
                spec.get("queue") or "default",
                len(pods) if min_available is None else int(min_available),
                pods,
                spec.get("priorityClassName"),
            )
        template = spec.get("template") or {}
        count = spec.get("parallelism", 1) if obj.get("kind") == "Job" else spec.get("replicas", 1)
        queue = ((template.get("metadata") or {}).get("annotations") or {}).get(QUEUE_ANNOTATION, "default")
        pod = Pod.from_template(template)
        return cls(namespace, name, queue, 1, (pod,) * int(count), pod.priority_class)


@dataclass(frozen=True, slots=True, eq=False)
class Scheduler:
    """What the model reads from volcano-scheduler.conf."""

    actions: tuple[str, ...]
    queue_plugin: str
    """proportion or capacity (the one the conf enables; proportion when neither is)."""
    hierarchy: bool
    overcommit: Fraction | None
    """The overcommit factor, None when the plugin is not enabled."""
    binpack: bool

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any]) -> Scheduler:
        actions = tuple(a.strip() for a in str(conf.get("actions") or "").split(",") if a.strip())
        plugins = {p.get("name"): p for tier in conf.get("tiers") or () for p in tier.get("plugins") or ()}
        queue_plugin = "capacity" if "capacity" in plugins else "proportion"
        overcommit = None
        if "overcommit" in plugins:
            factor = (plugins["overcommit"].get("arguments") or {}).get("overcommit-factor")
            overcommit = (
                Fraction(str(factor)) if isinstance(factor, int | float) and factor >= 1 else DEFAULT_OVERCOMMIT
            )
        hierarchy = queue_plugin == "capacity" and plugins["capacity"].get("enableHierarchy") is True
        return cls(actions, queue_plugin, hierarchy, overcommit, "binpack" in plugins)


@dataclass(frozen=True, slots=True, eq=False)
class Cluster:
    nodes: tuple[Node, ...]
    queues: tuple[Queue, ...]
    scheduler: Scheduler
    quotas: tuple[Quota, ...] = ()
    priorities: Mapping[str, int] = field(default_factory=dict)
    """PriorityClass values by name."""
    default_class: str | None = None
    """The globalDefault class, which the API server gives pods that name none."""
    non_preempting: frozenset[str] = frozenset()
    """Classes with `preemptionPolicy: Never`: their pods evict nobody."""

    @classmethod
    def from_objects(cls, nodes: Iterable[Node], objects: Iterable[Mapping[str, Any]]) -> Cluster:
        """The cluster `nodes` make with the objects applied to it (policyc's output, and any other): its Queues,
        ResourceQuotas and PriorityClasses, and the volcano-scheduler.conf of Volcano's ConfigMap."""
        objects = list(objects)
        by_kind: dict[str, list[Mapping[str, Any]]] = {}
        for o in objects:
            by_kind.setdefault(o.get("kind", ""), []).append(o)
        confs = [
            YAML(typ="safe").load(text)
            for cm in by_kind.get("ConfigMap", ())
            if cm["metadata"].get("name") == CONFIGMAP_NAME
            for text in [(cm.get("data") or {}).get(CONFIG_KEY)]
            if text
        ]
        classes = by_kind.get("PriorityClass", ())
        return cls(
            nodes=tuple(nodes),
            queues=tuple(Queue.from_object(q) for q in by_kind.get("Queue", ())),
            scheduler=Scheduler.from_conf(confs[0] if confs else {}),
            quotas=tuple(Quota.from_object(q) for q in by_kind.get("ResourceQuota", ())),
            priorities={c["metadata"]["name"]: int(c["value"]) for c in classes},
            default_class=next((c["metadata"]["name"] for c in classes if c.get("globalDefault")), None),
            non_preempting=frozenset(c["metadata"]["name"] for c in classes if c.get("preemptionPolicy") == "Never"),
        )


@dataclass(frozen=True, slots=True, eq=False)
class Existing:
    """A job already on the cluster: where each of its pods is bound (None: created, not bound) and its phase."""

    job: Job
    nodes: tuple[str | None, ...]
    phase: str


@dataclass(frozen=True, slots=True, eq=False)
class Outcome:
    """What became of one job."""

    phase: str
    held: str | None
    """Why `enqueue` refuses it ("resource in cluster is overused: overused nvidia.com/gpu", ...), None if admitted."""
    created: int
    """Pods the controller created (and the namespace quota admitted)."""
    nodes: tuple[str, ...]
    """The nodes its bound pods run on."""
    evicted: int
    """Of its pods, how many preempt or reclaim evicted."""

    @property
    def bound(self) -> int:
        return len(self.nodes)


# ---------------------------------------------------------------------------------------------------------------
# The simulation


@dataclass(slots=True)
class _Pod:
    spec: Pod
    node: str | None = None


@dataclass(slots=True, eq=False)
class _Job:
    spec: Job
    order: int
    priority: int
    phase: str = PENDING
    held: str | None = None
    pods: list[_Pod] = field(default_factory=list)
    evicted: int = 0

    @property
    def bound(self) -> list[_Pod]:
        return [p for p in self.pods if p.node is not None]

    @property
    def waiting(self) -> list[_Pod]:
        return [p for p in self.pods if p.node is None]

    def allocated(self) -> Resources:
        out: Resources = {}
        for p in self.bound:
            out = _add(out, p.spec.requests)
        return out

    def still_needs(self) -> Resources:
        """What of its gang is not yet allocated (a Running or Inqueue job's claim on the queue and the cluster)."""
        need = _add(self.spec.gang, self.allocated(), -1)
        return {n: a for n, a in need.items() if a > 0}

    def elastic(self) -> Resources:
        """What it holds beyond its gang."""
        extra = _add(self.allocated(), self.spec.gang, -1)
        return {n: a for n, a in extra.items() if a > 0}


@dataclass(slots=True)
class _Eviction:
    """The statement of one preempt or reclaim action: pods evicted, pods placed in their room; committed only whole."""

    allocated: dict[str, Resources]
    """Queue -> what it has allocated, less the victims chosen so far."""
    owner: dict[int, _Job]
    """id of a pod -> its job."""
    pipelined: list[tuple[str, Pod]] = field(default_factory=list)
    """(node, pod) placed in the room of victims, in order."""
    placed: list[_Pod] = field(default_factory=list)
    victims: list[_Pod] = field(default_factory=list)

    def commit(self) -> None:
        """Evict the victims (a job left below its gang is no longer Running) and bind the pods placed."""
        for v in self.victims:
            x = self.owner[id(v)]
            x.pods.remove(v)
            x.evicted += 1
            if len(x.bound) < x.spec.min_available and x.phase == RUNNING:
                x.phase = UNKNOWN
        for (node, _), pod in zip(self.pipelined, self.placed, strict=True):
            pod.node = node


class _Simulation:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.sched = cluster.scheduler
        self.nodes = {n.name: n for n in sorted(cluster.nodes, key=lambda n: n.name)}
        self.node_objects = {n.name: n.as_object() for n in self.nodes.values()}
        self.queues = {q.name: q for q in cluster.queues}
        self.queues.setdefault(ROOT, Queue(ROOT, None, {}, {}, {}))
        self.queues.setdefault("default", Queue("default", ROOT, {}, {}, {}))
        self.total: Resources = {}
        for n in self.nodes.values():
            self.total = _add(self.total, n.allocatable)
        self.jobs: dict[str, _Job] = {}
        self.real_capability = self._real_capabilities()

    # --- queues ----------------------------------------------------------------------------------------------

    def _chain(self, queue: str) -> list[str]:
        """The queue, then its ancestors up to root (only with hierarchy; else the queue alone)."""
        if not self.sched.hierarchy:
            return [queue]
        chain, seen = [queue], {queue}
        while (parent := self.queues[chain[-1]].parent if chain[-1] in self.queues else None) and parent not in seen:
            chain.append(parent)
            seen.add(parent)
        return chain

    def _real_capabilities(self) -> dict[str, dict[str, float | Fraction]]:
        """Each queue's real capability: what it may hold at most (a resource it does not name is unlimited)."""
        out: dict[str, dict[str, float | Fraction]] = {}
        if not self.sched.hierarchy:
            guaranteed: Resources = {}
            for q in self.queues.values():
                guaranteed = _add(guaranteed, q.guarantee)
            for q in self.queues.values():
                real: dict[str, float | Fraction] = {
                    n: max(a - guaranteed.get(n, Fraction(0)), Fraction(0)) + q.guarantee.get(n, Fraction(0))
                    for n, a in self.total.items()
                }
                for n, cap in q.capability.items():
                    real[n] = min(real.get(n, math.inf), cap)
                out[q.name] = real
            return out
        children: dict[str, list[Queue]] = {}
        for q in self.queues.values():
            if q.parent is not None:
                children.setdefault(q.parent, []).append(q)
        root = self.queues[ROOT]
        out[ROOT] = dict(root.capability)
        capability: dict[str, dict[str, float | Fraction]] = {ROOT: dict(root.capability)}
        pending = [ROOT]
        while pending:
            parent = pending.pop()
            kids = children.get(parent, [])
            guaranteed = {}
            for k in kids:
                guaranteed = _add(guaranteed, k.guarantee)
            for k in kids:
                if k.name in out:  # a cycle: the webhook refuses one, the model stops at it
                    continue
                capability[k.name] = {**capability[parent], **k.capability}  # unset resources inherit the parent's
                real = {
                    n: max(a - guaranteed.get(n, Fraction(0)), Fraction(0)) + k.guarantee.get(n, Fraction(0))
                    for n, a in out[parent].items()
                }
                for n, cap in capability[k.name].items():
                    real[n] = min(real.get(n, math.inf), cap)
                out[k.name] = real
                pending.append(k.name)
        return out

    def _queue_allocated(self, queue: str) -> Resources:
        """What the queue (with its descendants, under hierarchy) has allocated."""
        out: Resources = {}
        for j in self.jobs.values():
            if queue in self._chain(j.spec.queue):
                out = _add(out, j.allocated())
        return out

    def _queue_refuses(self, queue: str, asked: Resources, extra: Resources | None = None) -> list[str]:
        """The resources on which adding `asked` to `queue` (and its ancestors) breaks a real capability."""
        for q in self._chain(queue):
            used = _add(_add(self._queue_allocated(q), extra or {}), asked)
            over = _within(used, self.real_capability.get(q, {}), asked)
            if over:
                return over
        return []

    def _deserved(self) -> dict[str, Resources]:
        """The share each queue deserves: capacity's `deserved` (at least the guarantee, at most the real capability);
        proportion's weighted water-filling of the cluster over the queues that have jobs, capped by what they ask."""
        if self.sched.queue_plugin == "capacity":
            return {q.name: self._bounded(q.name, q.deserved) for q in self.queues.values()}
        asked: dict[str, Resources] = {}
        for j in self.jobs.values():
            request: Resources = {}
            for p in j.pods:
                request = _add(request, p.spec.requests)
            asked[j.spec.queue] = _add(asked.get(j.spec.queue, {}), request)
        return {q: self._bounded(q, share) for q, share in self._water_fill(asked).items()}

    def _water_fill(self, asked: dict[str, Resources]) -> dict[str, Resources]:
        """proportion's shares of the cluster for the queues that `asked`: the remaining resources split by weight,
        round by round, a queue's share capped at what it asks (it is then met and takes no more)."""
        deserved: dict[str, Resources] = {q: {} for q in asked}
        remaining, met = dict(self.total), set()
        while True:
            weight = sum(self.queues[q].weight for q in asked if q not in met and q in self.queues)
            if weight == 0 or not any(a > 0 for a in remaining.values()):
                break
            given: Resources = {}
            for q in sorted(asked):
                if q in met or q not in self.queues:
                    continue
                share = _scaled(remaining, Fraction(self.queues[q].weight, weight))
                mine = _add(deserved[q], share)
                if any(mine.get(n, Fraction(0)) > asked[q].get(n, Fraction(0)) for n in mine):
                    mine = {n: min(a, asked[q].get(n, Fraction(0))) for n, a in mine.items()}
                    met.add(q)
                given = _add(given, _add(mine, deserved[q], -1))
                deserved[q] = mine
            remaining = _add(remaining, given, -1)
            if not given or not any(a > 0 for a in given.values()):
                break
        return deserved

    def _bounded(self, queue: str, share: Resources) -> Resources:
        """`share` at most the queue's real capability and at least its guarantee."""
        real = self.real_capability.get(queue, {})
        capped = {n: min(a, real.get(n, math.inf)) for n, a in share.items()}
        guarantee = self.queues[queue].guarantee if queue in self.queues else {}
        return {**capped, **{n: max(a, capped.get(n, Fraction(0))) for n, a in guarantee.items()}}

    def _overused(self, queue: str, deserved: Mapping[str, Resources]) -> bool:
        """proportion's Overused: the queue has allocated at least its deserved share on every resource."""
        if self.sched.queue_plugin != "proportion":
            return False
        share = deserved.get(queue, {})
        allocated = self._queue_allocated(queue)
        return all(a <= allocated.get(n, Fraction(0)) for n, a in share.items())

    # --- the cycle -------------------------------------------------------------------------------------------

    def _ordered(self, jobs: Iterable[_Job]) -> list[_Job]:
        return sorted(jobs, key=lambda j: (-j.priority, j.order))

    def _class(self, priority_class: str | None) -> str | None:
        return priority_class or self.cluster.default_class

    def _priority(self, priority_class: str | None) -> int:
        return self.cluster.priorities.get(self._class(priority_class) or "", 0)

    def add(self, job: Job, order: int, existing: Existing | None = None) -> None:
        state = _Job(job, order, self._priority(job.priority_class))
        if existing is not None:
            state.phase = existing.phase
            state.pods = [_Pod(p, node) for p, node in zip(job.pods, existing.nodes, strict=False)]
        self.jobs[job.key] = state

    def _create_pods(self) -> None:
        """The job controller: pods of admitted jobs, one by one, each through its namespace's quotas."""
        for j in sorted(self.jobs.values(), key=lambda j: j.order):
            if j.phase == PENDING:
                continue
            while len(j.pods) < len(j.spec.pods):
                pod = j.spec.pods[len(j.pods)]
                if not self._quota_admits(j.spec.namespace, pod):
                    break
                j.pods.append(_Pod(pod))

    def _quota_admits(self, namespace: str, pod: Pod) -> bool:
        priority_class = self._class(pod.priority_class)
        for quota in self.cluster.quotas:
            if quota.namespace != namespace or not quota.counts(priority_class):
                continue
            used: dict[str, Fraction] = {}
            for j in self.jobs.values():
                if j.spec.namespace == namespace:
                    for p in j.pods:
                        if quota.counts(self._class(p.spec.priority_class)):
                            used = _add(used, quota.usage(p.spec))
            after = _add(used, quota.usage(pod))
            if any(after.get(k, Fraction(0)) > limit for k, limit in quota.hard.items()):
                return False
        return True

    def _used_on(self, node: str, pipelined: Iterable[tuple[str, Pod]] = (), gone: Iterable[_Pod] = ()) -> Resources:
        used: Resources = {}
        gone_ids = {id(p) for p in gone}
        for j in self.jobs.values():
            for p in j.bound:
                if p.node == node and id(p) not in gone_ids:
                    used = _add(used, p.spec.requests)
        for n, pod in pipelined:
            if n == node:
                used = _add(used, pod.requests)
        return used

    def _free(self, node: str, pipelined: Iterable[tuple[str, Pod]] = (), gone: Iterable[_Pod] = ()) -> Resources:
        return _add(self.nodes[node].allocatable, self._used_on(node, pipelined, gone), -1)

    def _admits(self, pod: Pod, node: str) -> bool:
        """Node affinity and taints (the predicates plugin's filters the model has)."""
        obj = {"spec": (pod.template.get("spec") or {})}
        target = self.node_objects[node]
        return RequiredNodeAffinity.from_pod(obj).matches(target) and taint_filter(obj, target).admit

    def _score(self, node: str, pod: Pod, pipelined: list[tuple[str, Pod]]) -> Fraction:
        """binpack: how full the node would be on what the pod asks (GPUs weigh most); spread: how empty."""
        alloc = self.nodes[node].allocatable
        used = _add(self._used_on(node, pipelined), pod.requests)
        score = Fraction(0)
        for name, amount in pod.requests.items():
            if amount > 0 and alloc.get(name):
                score += (10 if "/" in name else 1) * used.get(name, Fraction(0)) / alloc[name]
        return score if self.sched.binpack else -score

    def _enqueue(self) -> None:
        used: Resources = {}
        for j in self.jobs.values():
            used = _add(used, j.allocated())
        idle = _add(_scaled(self.total, self.sched.overcommit), used, -1) if self.sched.overcommit is not None else None
        admitted: Resources = {}
        for j in self.jobs.values():
            if j.phase in (INQUEUE, RUNNING):
                admitted = _add(admitted, j.still_needs())
        for j in self._ordered(x for x in self.jobs.values() if x.phase == PENDING):
            gang = j.spec.gang
            if idle is not None:
                over = _within(_add(admitted, gang), idle, gang)
                if over:
                    j.held = f"{OVERUSED}: overused {', '.join(over)}"
                    continue
            over = self._queue_enqueueable(j)
            if over:
                j.held = f"{QUEUE_INSUFFICIENT}: insufficient {', '.join(over)}"
                continue
            j.phase, j.held = INQUEUE, None
            admitted = _add(admitted, gang)

    def _queue_enqueueable(self, job: _Job) -> list[str]:
        """The resources on which the queue plugin refuses the job: its gang, plus what each queue on its chain has
        allocated, plus what its admitted jobs still need, less what they hold beyond their gangs, against the real
        capability."""
        gang = job.spec.gang
        for q in reversed(self._chain(job.spec.queue)):
            held: Resources = {}
            for j in self.jobs.values():
                if q in self._chain(j.spec.queue) and j.phase in (INQUEUE, RUNNING, UNKNOWN):
                    held = _add(
                        held, _add(_add(j.allocated(), j.still_needs() if j.phase != UNKNOWN else {}), j.elastic(), -1)
                    )
            over = _within(_add(held, gang), self.real_capability.get(q, {}), gang)
            if over:
                return over
        return []

    def _placements(self, j: _Job) -> list[tuple[_Pod, str]]:
        """A node for each waiting pod of `j` that fits a node and its queue, in order (nothing is bound yet)."""
        pipelined: list[tuple[str, Pod]] = []
        out = []
        for pod in j.waiting:
            extra: Resources = {}
            for _, p in pipelined:
                extra = _add(extra, p.requests)
            if self._queue_refuses(j.spec.queue, pod.spec.requests, extra):
                continue
            fitting = [
                n
                for n in self.nodes
                if self._admits(pod.spec, n) and _fits(self._free(n, pipelined), pod.spec.requests)
            ]
            if fitting:
                node = min(fitting, key=lambda n: (-self._score(n, pod.spec, pipelined), n))
                pipelined.append((node, pod.spec))
                out.append((pod, node))
        return out

    def _allocate(self) -> None:
        deserved = self._deserved()
        for j in self._ordered(x for x in self.jobs.values() if x.phase != PENDING and x.waiting):
            if self._overused(j.spec.queue, deserved):
                continue
            placements = self._placements(j)
            if len(j.bound) + len(placements) >= j.spec.min_available:  # the gang is met: bind
                for pod, node in placements:
                    pod.node = node

    def _evict(self, j: _Job, reclaim: bool) -> None:
        """preempt (same queue, lower priority) or reclaim (other queues above their deserved share) for a starving
        job, one pod at a time, committed only if the job then reaches its gang."""
        deserved = self._deserved() if reclaim else {}
        queue = j.spec.queue
        if reclaim and self._overused(queue, deserved):
            return
        plan = _Eviction({q: self._queue_allocated(q) for q in self.queues},
                         {id(p): x for x in self.jobs.values() for p in x.pods})  # fmt: skip
        for pod in j.waiting:
            if len(j.bound) + len(plan.placed) >= j.spec.min_available:
                break
            if self._class(pod.spec.priority_class) in self.cluster.non_preempting:
                continue
            if reclaim and not self._preemptive(queue, pod.spec, plan.allocated, plan.placed, deserved):
                continue
            self._evict_for(j, pod, reclaim, deserved, plan)
        if len(j.bound) + len(plan.placed) < j.spec.min_available:
            return  # the statement is discarded: nothing is evicted
        plan.commit()

    def _evict_for(self, j: _Job, pod: _Pod, reclaim: bool, deserved: Mapping[str, Resources], plan: _Eviction) -> None:
        """Add to `plan` the victims that make room for `pod` of job `j` on the first node where some do."""
        for node in self.nodes:
            if not self._admits(pod.spec, node):
                continue
            candidates = [
                p
                for x in self.jobs.values()
                if x is not j
                for p in x.bound
                if p.node == node and p not in plan.victims and self._candidate(j, x, reclaim)
            ]
            if not candidates:
                continue
            chosen = self._victims(
                pod.spec, node, candidates, plan.owner, plan.allocated, deserved, reclaim, plan.pipelined, plan.victims
            )
            if chosen is None:
                continue
            for v in chosen:
                plan.victims.append(v)
                victim_queue = plan.owner[id(v)].spec.queue
                plan.allocated[victim_queue] = _add(plan.allocated[victim_queue], v.spec.requests, -1)
            plan.pipelined.append((node, pod.spec))
            plan.placed.append(pod)
            return

    def _candidate(self, asker: _Job, other: _Job, reclaim: bool) -> bool:
        """Whether `other`'s running pods may be evicted for `asker`: by reclaim, those of another reclaimable queue;
        by preempt, those of a lower-priority job of the same queue."""
        if reclaim:
            queue = self.queues.get(other.spec.queue)
            return other.spec.queue != asker.spec.queue and (queue is None or queue.reclaimable)
        return other.spec.queue == asker.spec.queue and other.priority < asker.priority

    def _preemptive(
        self,
        queue: str,
        pod: Pod,
        allocated: Mapping[str, Resources],
        placed: list[_Pod],
        deserved: Mapping[str, Resources],
    ) -> bool:
        """Whether the queue may reclaim for one more pod: within its real capability, and below its deserved share on
        some resource the pod asks for."""
        future = dict(allocated.get(queue, {}))
        for p in placed:
            future = _add(future, p.spec.requests)
        future = _add(future, pod.requests)
        if _within(future, self.real_capability.get(queue, {}), pod.requests):
            return False
        share = deserved.get(queue, {})
        return any(
            a > 0 and share.get(n, Fraction(0)) > 0 and future.get(n, Fraction(0)) <= share[n]
            for n, a in pod.requests.items()
        )

    def _victims(
        self,
        pod: Pod,
        node: str,
        candidates: list[_Pod],
        owner: Mapping[int, _Job],
        allocated: dict[str, Resources],
        deserved: Mapping[str, Resources],
        reclaim: bool,
        pipelined: list[tuple[str, Pod]],
        taken: list[_Pod],
    ) -> list[_Pod] | None:
        """The victims to evict on `node` for `pod` (lowest priority, then newest first), or None if they cannot make
        room."""
        ordered = sorted(
            candidates, key=lambda p: (owner[id(p)].priority, -owner[id(p)].order, -owner[id(p)].pods.index(p))
        )
        scratch = {q: dict(a) for q, a in allocated.items()}
        eligible = []
        for v in ordered:
            q = owner[id(v)].spec.queue
            guarantee = self.queues[q].guarantee if q in self.queues else {}
            if reclaim and not self._reclaimable(v.spec, scratch.get(q, {}), deserved.get(q, {}), guarantee):
                continue
            scratch[q] = _add(scratch.get(q, {}), v.spec.requests, -1)
            eligible.append(v)
        free = self._free(node, pipelined, taken)
        chosen = []
        for v in eligible:
            if _fits(free, pod.requests):
                break
            chosen.append(v)
            free = _add(free, v.spec.requests)
        return chosen if eligible and _fits(free, pod.requests) else None

    def _reclaimable(self, victim: Pod, allocated: Resources, deserved: Resources, guarantee: Resources) -> bool:
        """Whether reclaim may take `victim` from a queue that has `allocated`: its queue keeps its guarantee, and is
        above its deserved share (capacity: on a resource the victim holds; proportion: on every resource)."""
        after = _add(allocated, victim.requests, -1)
        if any(after.get(n, Fraction(0)) < a for n, a in guarantee.items()):
            return False
        if self.sched.queue_plugin == "proportion":
            return all(a <= after.get(n, Fraction(0)) for n, a in deserved.items())
        relevant = [n for n, a in victim.requests.items() if a > 0 and deserved.get(n, Fraction(0)) > 0]
        return not relevant or any(allocated.get(n, Fraction(0)) > deserved[n] for n in relevant)

    def _phases(self) -> None:
        for j in self.jobs.values():
            if j.phase in (INQUEUE, UNKNOWN) and len(j.bound) >= j.spec.min_available:
                j.phase = RUNNING

    def _signature(self) -> tuple:
        return tuple(
            (k, j.phase, j.held, tuple(p.node for p in j.pods), j.evicted) for k, j in sorted(self.jobs.items())
        )

    def settle(self) -> None:
        """Run scheduling cycles until one changes nothing."""
        for _ in range(MAX_CYCLES):
            before = self._signature()
            self._create_pods()
            for action in self.sched.actions:
                if action == "enqueue":
                    self._enqueue()
                elif action == "allocate":
                    self._allocate()
                    self._phases()
                elif action in ("preempt", "reclaim"):
                    for j in self._ordered(self.jobs.values()):
                        if j.phase != PENDING and len(j.bound) < j.spec.min_available and j.waiting:
                            self._evict(j, reclaim=action == "reclaim")
                    self._phases()
            if "enqueue" not in self.sched.actions:  # without it every job is admitted as it comes
                for j in self.jobs.values():
                    j.phase = INQUEUE if j.phase == PENDING else j.phase
            if self._signature() == before:
                return

    def outcomes(self) -> dict[str, Outcome]:
        return {
            k: Outcome(j.phase, j.held, len(j.pods), tuple(p.node for p in j.bound if p.node), j.evicted)
            for k, j in sorted(self.jobs.items())
        }


def nodes_of(cluster: ir.Cluster) -> tuple[Node, ...]:
    """The nodes of a policy's pools as the scheduler sees them once the node script ran: each pool's labels (with the
    product label its feature discovery sets) and taints, its allocatable with its accelerators."""
    from policyc.proof.placement import CONTROL_PLANE, targets

    pools = {p.name: p for p in cluster.pools}
    out = []
    for t in targets(cluster):
        if t.name == CONTROL_PLANE:
            continue
        allocatable = {
            **resources(resource_list(pools[t.name].allocatable)),
            **resources(t.node["status"]["allocatable"]),
        }
        out.extend(
            Node(name, t.node["metadata"]["labels"], tuple(t.node["spec"]["taints"]), allocatable) for name in t.nodes
        )
    return tuple(out)


def simulate(cluster: Cluster, jobs: Sequence[Job], existing: Sequence[Existing] = ()) -> dict[str, Outcome]:
    """Submit `jobs` one after another to a cluster already running `existing`, letting the scheduler settle after
    each; the outcome of every job (existing ones included), by `namespace/name`."""
    sim = _Simulation(cluster)
    for order, e in enumerate(existing):
        sim.add(e.job, order - len(existing), e)
    sim.settle()
    for order, job in enumerate(jobs):
        sim.add(job, order)
        sim.settle()
    return sim.outcomes()

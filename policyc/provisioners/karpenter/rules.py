"""The Karpenter provisioner's rules on a policy: what the NodePool CRD accepts but Karpenter refuses (label keys by
Karpenter's version, its own taint keys, ill-formed requirements, values that are not label values, a NodePool name
too long for the label Karpenter puts it in), what would make Karpenter never make a node (a label a workload
selects on that no NodePool of its pools gives; a pool's label its own requirements exclude; a scheduler that
creates no pods until their nodes exist), and what Karpenter does not do that a policy may expect (keep a minimum
of nodes; keep a spot node of a training gang)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, Path, diag
from policyc.ir import Cluster, Pool
from policyc.k8s.names import is_valid_label_value
from policyc.pods import usages
from policyc.provisioners.karpenter.backend import (
    GANG_USAGES,
    GPU_VENDORS,
    NAME,
    by_gpu,
    nodepool_name,
    own,
    requirements,
)
from policyc.provisioners.karpenter.label_rules import NODEPOOL, OWN_TAINTS, refused, version_of

MAX_LABELS = 100
"""The most labels a NodePool's template holds (its CRD's maxProperties)."""
MAX_LABEL_VALUE = 63
VALUED = ("In", "NotIn")
UNVALUED = ("Exists", "DoesNotExist")


def _pools(cluster: Cluster) -> list[Pool]:
    return [p for p in cluster.pools if p.provisioning == NAME]


def _own_key(key: str) -> str:
    """The key under a domain of the user's own, for a hint."""
    return f"example.org/{key.rpartition('/')[2]}"


def restricted_labels(cluster: Cluster) -> Iterator[Diagnostic]:
    """Keys under the policy's domain are left out: a domain in kubernetes.io, k8s.io or Karpenter's is refused
    already (PC412, the provisioners' LABEL_DOMAINS)."""
    written = cluster.provisioning[NAME].version
    version = version_of(written)
    ours = f"{cluster.keys.domain}/"
    for pool in _pools(cluster):
        for key in pool.labels:
            why = None if key.startswith(ours) else refused(key, version)
            if why is not None:
                yield diag("restricted-label", f"label '{key}' of Karpenter pool '{pool.name}' is refused by "
                           f"Karpenter {written}: {why}", (*pool.path, "labels", key), at_key=True,
                           hint=f"use a key under a domain of your own, e.g. '{_own_key(key)}'")  # fmt: skip
        for j, r in enumerate(own(pool).requirements):
            why = refused(r.key, version)
            if why is not None:
                yield diag("restricted-label", f"requirement key '{r.key}' of Karpenter pool '{pool.name}' is refused "
                           f"by Karpenter {written}: {why}", (*pool.path, NAME, "requirements", j, "key"),
                           hint=f"use a key under a domain of your own, e.g. '{_own_key(r.key)}'")  # fmt: skip


def label_limits(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        if len(pool.labels) > MAX_LABELS:
            yield diag("too-many-labels", f"Karpenter pool '{pool.name}' gives its nodes {len(pool.labels)} labels; "
                       f"a NodePool holds {MAX_LABELS} at most", (*pool.path, "labels"),
                       hint=f"remove {len(pool.labels) - MAX_LABELS} of the pool's labels")  # fmt: skip
        name = nodepool_name(pool)
        if len(name) > MAX_LABEL_VALUE:
            longest = MAX_LABEL_VALUE - len(name) + len(pool.name)
            yield diag("nodepool-name-too-long", f"the NodePool of pool '{pool.name}', '{name}', is {len(name)} "
                       f"characters long: Karpenter labels each of its nodes {NODEPOOL}=<its name>, and a label value "
                       f"holds {MAX_LABEL_VALUE}", (*pool.path, "name"),
                       hint=f"shorten the pool's name to {longest} characters or fewer")  # fmt: skip


def karpenter_taints(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        for t in pool.taints:
            if t.key in OWN_TAINTS:
                yield diag("karpenter-taint", f"taint '{t.key}' of Karpenter pool '{pool.name}' is one Karpenter puts "
                           "on nodes itself, and refuses in a NodePool", (*pool.path, "taints"),
                           hint=f"remove the taint '{t.key}' from the pool")  # fmt: skip


def ill_formed(operator: str, values: list[str], min_values: int | None) -> tuple[str, str] | None:
    """What is wrong with a requirement, and its fix; None if nothing is."""
    if operator in VALUED and not values:
        return f"operator {operator} needs at least one value", "list the values, e.g. values: [c, m]"
    if operator in UNVALUED and values:
        return f"operator {operator} takes no values", "remove its values"
    if operator not in VALUED + UNVALUED and (len(values) != 1 or not values[0].isdecimal()):
        return (f"operator {operator} takes exactly one value, a non-negative integer",
                "write one whole number, e.g. values: ['4']")  # fmt: skip
    if min_values is not None and operator == "In" and min_values > len(values):
        return (f"minValues {min_values} is more than its {len(values)} value(s)",
                f"list at least {min_values} values, or lower minValues to {len(values)}")  # fmt: skip
    return None


def requirement_forms(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        for j, r in enumerate(own(pool).requirements):
            wrong = ill_formed(r.operator, r.values, r.min_values)
            if wrong is not None:
                yield diag("ill-formed-requirement", f"requirement '{r.key}' of Karpenter pool '{pool.name}': "
                           f"{wrong[0]}", (*pool.path, NAME, "requirements", j), hint=wrong[1])  # fmt: skip


def _values(pool: Pool) -> Iterator[tuple[Path, str]]:
    """Every value the pool's NodePool requires, and where the policy writes it."""
    settings, base = own(pool), (*pool.path, NAME)
    for field, values in (("instanceTypes", settings.instance_types), ("zones", settings.zones)):
        yield from (((*base, field, k), v) for k, v in enumerate(values or ()))
    if settings.gpu_name is not None:
        yield (*base, "gpuName"), settings.gpu_name
    for j, r in enumerate(settings.requirements):
        yield from (((*base, "requirements", j, "values", k), v) for k, v in enumerate(r.values))


def requirement_values(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        for path, value in _values(pool):
            if is_valid_label_value(value):
                yield diag("requirement-value", f"'{value}' of Karpenter pool '{pool.name}' is not a label value: "
                           "Karpenter refuses the NodePool", path,
                           hint="write the value as Karpenter labels nodes with it (at most 63 letters, digits, '-', "
                           "'_' or '.', beginning and ending with a letter or digit), e.g. p5.48xlarge, h100, "
                           "us-east-1a")  # fmt: skip


def instance_shapes(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        if own(pool).instance_types or by_gpu(pool):
            continue
        if pool.vendor in GPU_VENDORS:
            hint = (
                f"name its GPU as Karpenter labels instances (karpenter: {{gpuName: {_gpu_name_guess(pool)}}}) or its "
                "instance types"
            )
        else:
            hint = "list its instance types, e.g. karpenter: {instanceTypes: [m7i.8xlarge]}"
        yield diag("no-instance-shape", f"Karpenter pool '{pool.name}' says neither its instance types nor its GPU: "
                   "Karpenter could make any instance for it", pool.path, hint=hint)  # fmt: skip


def _gpu_name_guess(pool: Pool) -> str:
    """The GPU's name as Karpenter most likely labels it, from the pool's product: its model, lower case
    (NVIDIA-A100-SXM4-40GB -> a100, Tesla-T4 -> t4, NVIDIA-L40S -> l40s)."""
    words = [w for w in (pool.product or "").lower().split("-") if w not in ("nvidia", "tesla", "amd", "instinct")]
    return words[0] if words else "h100"


def provisionable(cluster: Cluster) -> Iterator[Diagnostic]:
    """Karpenter makes a node for a pod only if a NodePool's node would match its node selector: each key the pod
    selects on must be one the NodePool gives (its template's labels) or one Karpenter sets as it makes the node (its
    requirements' keys, and what it sets on every node: zone, instance type, capacity type, ...; the pool's
    `chosen_labels`, which the placement proof reads too). A value Karpenter may not choose is the proof's to
    report (PC504), with the values it may."""
    pools = _pools(cluster)
    for w in cluster.workloads:
        reach = [p for p in pools if p.tier == w.tier.name and p.usage in usages(w)]
        for key, value in w.node_selector.items():
            lacking = [p.name for p in reach if not _gives(p, key)]
            if lacking:
                yield diag("not-provisionable", f"workload '{w.name}' selects on label '{key}', which the NodePool of "
                           f"Karpenter pool(s) {', '.join(lacking)} does not give: Karpenter never makes a node for "
                           "its pods there", (*w.path, "nodeSelector", key),
                           hint=f"give the pool(s) the label (labels: {{{key}: {value}}}), or remove it from the "
                           "workload's nodeSelector", at_key=True)  # fmt: skip


def _gives(pool: Pool, key: str) -> bool:
    """Whether the nodes Karpenter makes for the pool carry `key`."""
    return key in pool.labels or any(label.key == key for label in pool.chosen_labels)


def conflicting_requirements(cluster: Cluster) -> Iterator[Diagnostic]:
    """A NodePool whose template label its own requirements rule out makes no node: the label is a requirement too."""
    for pool in _pools(cluster):
        for key, value in pool.labels.items():
            if _excludes(pool, key, value):
                yield diag("conflicting-requirement", f"Karpenter pool '{pool.name}' labels its nodes {key}={value}, "
                           "which its NodePool's requirements exclude: Karpenter makes no node for it",
                           (*pool.path, "labels", key), at_key=True,
                           hint=f"make the label and the pool's karpenter block agree: allow '{value}' there, or "
                           "change the label")  # fmt: skip


def _excludes(pool: Pool, key: str, value: str) -> bool:
    """Whether a requirement of the pool's NodePool rules out `value` for `key`."""
    return any(
        (r["operator"] == "In" and value not in r["values"])
        or (r["operator"] == "NotIn" and value in r["values"])
        or r["operator"] == "DoesNotExist"
        for r in requirements(pool)
        if r["key"] == key
    )


def unkept(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        if pool.min_nodes > 0:
            yield diag("minimum-not-kept", f"Karpenter pool '{pool.name}' has {pool.size}: Karpenter makes nodes only "
                       f"for pods that wait, and keeps none idle, so the pool may have fewer than {pool.min_nodes}",
                       pool.path,
                       hint=f"write maxNodes: {pool.max_nodes} alone (guarantees then wait for scale-up)")  # fmt: skip
        if pool.usage in GANG_USAGES and "spot" in own(pool).capacity_types:
            yield diag("spot-training", f"{pool.usage} pool '{pool.name}' runs on spot capacity: an interruption takes "
                       "a node out of a running gang", (*pool.path, NAME, "capacityTypes"),
                       hint="use capacityTypes: [on-demand] (or reserved) for the pool")  # fmt: skip


def enqueue_action(cluster: Cluster) -> Iterator[Diagnostic]:
    """A scheduler whose `enqueue` action (spec.scheduler.actions) admits a job, and only then lets its pods be
    created, if the idle resources of the nodes that exist (times its overcommit factor) hold its gang; left out, its
    allocate action admits every job, and the pods wait, unschedulable, where Karpenter sees them."""
    if "enqueue" not in getattr(cluster.scheduler, "actions", ()):
        return
    names = [p.name for p in _pools(cluster)]
    if names:
        yield diag("enqueue-blocks-scale-up", "the scheduler's enqueue action keeps a job back, with no pods, until "
                   "the nodes that exist have room for its gang; Karpenter makes nodes only for pods that wait, so a "
                   f"job bigger than that room never gets nodes of Karpenter pool(s) {', '.join(names)}",
                   ("spec", "scheduler", "actions"),
                   hint="leave enqueue out of spec.scheduler.actions, e.g. actions: [allocate, preempt, reclaim, "
                   "backfill]: every job is then admitted, its pods wait, and Karpenter makes their nodes")  # fmt: skip


CHECKS = (
    restricted_labels,
    label_limits,
    karpenter_taints,
    requirement_forms,
    requirement_values,
    instance_shapes,
    provisionable,
    conflicting_requirements,
    unkept,
    enqueue_action,
)

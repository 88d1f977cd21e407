"""Namespaces back to tenants, with their quotas, limit ranges, queues, priority classes and admission mode.

A namespace belongs to the tenant its `<domain>/tenant` label names; else to the queue the scheduler ties it to (a
queue that names its namespaces) or that bears its name; else it is a tenant of its own where it holds a
ResourceQuota or a LimitRange. The quota a tenant's namespaces share is policyc's `tenant-quota` or the namespace's
one quota without a scope; quotas scoped to one priority class are its `perPriorityClass`; a zero-pods quota scoped
to the classes it may not use gives its `priorityClasses`.
"""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from policyc.adopt.draft import Draft, block, flow
from policyc.backends.kubernetes import LIMIT_RANGE_NAME, QUOTA_NAME
from policyc.checks.namespaces import SYSTEM_NAMESPACES
from policyc.cluster.reading import ObjectRef, QueueRead, number, resources
from policyc.cluster.source import NAMESPACE, ClusterSource, Kind
from policyc.gpu import dra
from policyc.ir import LabelKeys
from policyc.registry import every_provisioner_settings, every_settings

QUOTA = Kind("", "ResourceQuota")
LIMIT_RANGE = Kind("", "LimitRange")
LIMIT_FIELDS = ("defaultRequest", "default", "max", "min")
"""A LimitRange's Container fields, which the policy's limitRange names alike."""


def owned_namespaces() -> set[str]:
    """Namespaces the cluster's own components run in: never a tenant's."""
    backends = {ns for m in (*every_settings(), *every_provisioner_settings()) for ns in m.NAMESPACES}
    return set(SYSTEM_NAMESPACES) | backends


def read_tenants(
    source: ClusterSource, keys: LabelKeys, draft: Draft, gpu_resource: str, queues: list[QueueRead]
) -> list[CommentedMap]:
    """spec.tenants, in name order; the queues no tenant took are listed as not expressed."""
    by_namespace = _by_namespace(source)
    members = _members(source, keys, draft, queues, by_namespace)
    tenants = []
    taken: set[str] = set()
    for name, namespaces in sorted(members.items()):
        queue = next((q for q in queues if q.tenant == name), None) or next(
            (q for q in queues if q.name == name or set(q.namespaces) & set(namespaces)), None
        )
        tenant: dict = {"name": name, "namespaces": flow(namespaces)}
        objects = by_namespace.get(namespaces[0], {})
        guesses: dict[str, str] = {}
        _quotas(tenant, objects.get(QUOTA, []), gpu_resource, draft, guesses)
        limit_range = _limit_range(objects.get(LIMIT_RANGE, []), gpu_resource, draft)
        if queue is not None:
            taken.add(queue.name)
            tenant["queue"] = block(queue.settings, queue.guesses)
        if limit_range:
            tenant["limitRange"] = limit_range
            named = objects[LIMIT_RANGE][0]["metadata"]["name"] if len(objects[LIMIT_RANGE]) == 1 else None
            if named is not None and named != LIMIT_RANGE_NAME:
                guesses["limitRange"] = f"from LimitRange {named}, the namespace's one"
        for other in namespaces[1:]:
            _same_as_first(by_namespace.get(other, {}), objects, draft)
        tenants.append(block(tenant, guesses))
    for queue in queues:
        if queue.name not in taken:
            draft.notes.append(f"queue {queue.name}: no namespace of the cluster joins it; not expressed")
    return tenants


def _by_namespace(source: ClusterSource) -> dict[str, dict[Kind, list[dict]]]:
    out: dict[str, dict[Kind, list[dict]]] = {}
    for kind in (QUOTA, LIMIT_RANGE):
        for obj in sorted(source.objects(kind), key=lambda o: o["metadata"]["name"]):
            out.setdefault(obj["metadata"].get("namespace", ""), {}).setdefault(kind, []).append(obj)
    return out


def _members(
    source: ClusterSource, keys: LabelKeys, draft: Draft, queues: list[QueueRead], by_namespace: dict
) -> dict[str, list[str]]:
    """Tenant -> its namespaces, in name order."""
    owned = owned_namespaces()
    queue_of = {ns: q.tenant or q.name for q in queues for ns in q.namespaces}
    queue_names = {q.name: q.tenant or q.name for q in queues}
    out: dict[str, list[str]] = {}
    names = sorted(source.objects(NAMESPACE), key=lambda n: n["metadata"]["name"])
    for namespace in names:
        name = namespace["metadata"]["name"]
        labelled = (namespace["metadata"].get("labels") or {}).get(keys.tenant)
        if name in owned:
            continue
        tenant = labelled or queue_of.get(name) or queue_names.get(name) or (name if by_namespace.get(name) else None)
        if tenant is None:
            draft.unexpressed[ObjectRef.of(namespace)] = "no quota, limit range or queue: not a tenant's namespace"
            continue
        out.setdefault(tenant, []).append(name)
        draft.expressed.add(ObjectRef.of(namespace))
    return out


def _quotas(tenant: dict, quotas: list[dict], gpu_resource: str, draft: Draft, guesses: dict) -> None:
    """The tenant's quota, per-class quotas and granted priority classes from its first namespace's quotas."""
    plain = [q for q in quotas if not _scoped(q)]
    main = next((q for q in plain if q["metadata"]["name"] == QUOTA_NAME), plain[0] if plain else None)
    quota: dict = {}
    for obj in quotas:
        if obj is main:
            quota.update(_hard((obj.get("spec") or {}).get("hard") or {}, gpu_resource))
        else:
            every_class = [c["name"] for c in draft.spec.get("priorityClasses") or []]
            why = _scoped_quota(obj, tenant, quota, gpu_resource, every_class)
            if why is not None:
                draft.unexpressed[ObjectRef.of(obj)] = why
                continue
        draft.expressed.add(ObjectRef.of(obj))
    if quota:
        order = ("requests", "limits", "objects", "perPriorityClass")
        tenant["quota"] = block({k: quota[k] if k == order[-1] else flow(quota[k]) for k in order if k in quota})
    if main is not None and main["metadata"]["name"] != QUOTA_NAME:
        guesses["quota"] = f"from ResourceQuota {main['metadata']['name']}, the namespace's quota without a scope"


def _scoped(quota: dict) -> bool:
    spec = quota.get("spec") or {}
    return bool(spec.get("scopeSelector") or spec.get("scopes"))


def _scoped_quota(obj: dict, tenant: dict, quota: dict, gpu_resource: str, every_class: list[str]) -> str | None:
    """Read a quota scoped to priority classes into the tenant: the zero-pods quota refusing the classes it is not
    granted (`priorityClasses`), or one class's quota (`perPriorityClass`). Returns why it cannot, or None."""
    spec = obj.get("spec") or {}
    hard = spec.get("hard") or {}
    expressions = (spec.get("scopeSelector") or {}).get("matchExpressions") or []
    if any(e.get("scopeName") != "PriorityClass" for e in expressions) or spec.get("scopes") or not expressions:
        return "a second quota, or one with scopes policyc does not write"
    values = next((e.get("values") or [] for e in expressions if e.get("operator") != "Exists"), [])
    if hard == {"pods": "0"}:
        return _granted(tenant, sorted(e.get("operator") for e in expressions), values, every_class)
    if len(expressions) != 1:
        return "a quota scoped to several priority-class expressions policyc does not write"
    operator = expressions[0].get("operator")
    requests = _hard(hard, gpu_resource)
    if operator == "In" and len(values) == 1 and set(requests) == {"requests"}:
        quota.setdefault("perPriorityClass", {})[values[0]] = flow(requests["requests"])
        return None
    return "a priority class's quota on more than requests, or on several classes"


def _granted(tenant: dict, operators: list[str], values: list[str], every_class: list[str]) -> str | None:
    """`priorityClasses` from the zero-pods quota refusing the others. NotIn alone refuses pods naming no class
    too; with Exists, only pods naming another class. Every class of the policy, with Exists (or Exists alone, in a
    policy of none), is what a tenant that names no classes gets."""
    if operators not in (["NotIn"], ["Exists", "NotIn"], ["Exists"]):
        return "a zero-pods quota on priority classes policyc does not write"
    if "Exists" not in operators or set(values) != set(every_class):
        tenant["priorityClasses"] = flow(sorted(values))
    return None


def _hard(hard: dict, gpu_resource: str) -> dict:
    """A quota's `spec.hard` as the policy's quota block: requests, limits and object counts."""
    out: dict = {}
    for name, value in hard.items():
        scope, _, resource = name.partition(".")
        if dra.is_devices_key(name):
            out.setdefault("requests", {})[name] = value
        elif scope in ("requests", "limits") and resource and not resource.startswith("storage"):
            out.setdefault(scope, {})[resource] = value
        elif name in ("cpu", "memory"):
            out.setdefault("requests", {})[name] = value
        else:
            out.setdefault("objects", {})[name] = number(value)
    return {k: (v if k == "objects" else resources(v, gpu_resource)) for k, v in out.items()}


def _limit_range(ranges: list[dict], gpu_resource: str, draft: Draft) -> CommentedMap | None:
    chosen = next((r for r in ranges if r["metadata"]["name"] == LIMIT_RANGE_NAME), ranges[0] if ranges else None)
    if chosen is None:
        return None
    out: dict = {}
    for entry in (chosen.get("spec") or {}).get("limits") or []:
        if entry.get("type") != "Container":
            draft.notes.append(f"{ObjectRef.of(chosen)}: its {entry.get('type')} limits are not expressed")
            continue
        for field in LIMIT_FIELDS:
            if entry.get(field):
                out[field] = flow(resources(entry[field], gpu_resource))
    for other in ranges:
        if other is not chosen:
            draft.unexpressed[ObjectRef.of(other)] = "a second LimitRange in the namespace"
    draft.expressed.add(ObjectRef.of(chosen))
    return block(out) if out else None


def _same_as_first(objects: dict, first: dict, draft: Draft) -> None:
    """A tenant's other namespaces get the same quotas and limit range as its first: theirs are carried over where
    they match it, else listed."""

    def shape(obj: dict) -> tuple:
        return (obj["metadata"]["name"], repr(obj.get("spec")))

    theirs = {shape(o) for kind in (QUOTA, LIMIT_RANGE) for o in first.get(kind, [])}
    for kind in (QUOTA, LIMIT_RANGE):
        for obj in objects.get(kind, []):
            if shape(obj) in theirs:
                draft.expressed.add(ObjectRef.of(obj))
            else:
                draft.unexpressed[ObjectRef.of(obj)] = (
                    "differs from the tenant's first namespace's (one quota per tenant)"
                )

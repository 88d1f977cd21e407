"""What each emitted object needs created before it, and the creation depth that follows: the one statement of
"X needs Y" that Argo CD's sync waves and the kustomization's order are both derived from (`policyc.output.argocd`).

Among the objects emitted together, an object needs:

- the Namespace it lives in (the API server refuses an object in a namespace that does not exist);
- the CustomResourceDefinition that defines its kind;
- every object it names in a field that an admission webhook or controller looks up when it is created
  (`Reference`): `REFERENCES` below, and each scheduler backend's own (a parent queue, a queue's cohort);
- if it makes pods (it holds a pod template), what acts on each of those pods at admission: the PriorityClass any
  `priorityClassName` in it names (the Priority admission plugin refuses a pod naming a class that does not
  exist), and the ResourceQuotas and LimitRanges of its namespace and the admission policy bindings that select
  the namespace (a pod created before them is neither counted, defaulted nor checked); and the node side, every
  object that makes nodes or gives them their labels and taints (`NODE_SIDE`: a NodeFeatureRule, a NodePool),
  which its pods are placed by.

What is not among the emitted objects (a namespace a Helm chart creates, a scheduler's root queue) is no concern here:
it exists before the sync or not at all, and no order of the emitted objects changes that.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ObjectId = tuple[str, str, str, str]
"""(API group, kind, namespace, name); the group and namespace are "" for the core group and cluster scope."""

ADMISSION = "admissionregistration.k8s.io"
BINDINGS = frozenset({(ADMISSION, "ValidatingAdmissionPolicyBinding"), (ADMISSION, "MutatingAdmissionPolicyBinding")})
ACTS_ON_PODS = frozenset({("", "ResourceQuota"), ("", "LimitRange")}) | BINDINGS
"""Kinds that act on a pod of their namespace as it is admitted (a binding: of the namespaces it selects)."""
NODE_SIDE = frozenset({("nfd.k8s-sigs.io", "NodeFeatureRule"), ("karpenter.sh", "NodePool")})
"""Kinds that make nodes or give them labels and taints: the pods of every object that makes pods are placed by them,
so those objects come after them."""
NAMESPACE_NAME = "kubernetes.io/metadata.name"
"""The label the API server gives every Namespace: its name."""


@dataclass(frozen=True, eq=False)
class Reference:
    """Objects of `source` (API group, kind) name, in the field at `path`, a cluster-scoped object of `target` that
    must exist before they are created. A `*` step in `path` goes into every item of a list."""

    source: tuple[str, str]
    path: tuple[str, ...]
    target: tuple[str, str]


REFERENCES = (
    # A binding whose policy does not exist yet is stored but ignored (the API reference's `policyName`): with the
    # policy first, the binding acts from the moment it exists.
    Reference(
        (ADMISSION, "ValidatingAdmissionPolicyBinding"),
        ("spec", "policyName"),
        (ADMISSION, "ValidatingAdmissionPolicy"),
    ),
    Reference(
        (ADMISSION, "MutatingAdmissionPolicyBinding"), ("spec", "policyName"), (ADMISSION, "MutatingAdmissionPolicy")
    ),
    Reference(
        ("resource.k8s.io", "ResourceClaimTemplate"),
        ("spec", "spec", "devices", "requests", "*", "exactly", "deviceClassName"),
        ("resource.k8s.io", "DeviceClass"),
    ),
)
"""The references among the kinds every backend may emit; a scheduler backend adds its own (`SchedulerBackend`)."""


def identity(obj: Mapping[str, Any]) -> ObjectId:
    meta = obj["metadata"]
    return obj["apiVersion"].rpartition("/")[0], obj["kind"], meta.get("namespace", ""), meta["name"]


def needs(
    objects: Sequence[Mapping[str, Any]],
    references: Iterable[Reference],
    identities: Sequence[ObjectId] | None = None,
) -> dict[ObjectId, frozenset[ObjectId]]:
    """Each object's identity -> the identities of the other objects among `objects` it needs created before it;
    `identities`, if given, are the objects' (`identity`), in the same order."""
    by_source: dict[tuple[str, str], list[Reference]] = {}
    for r in references:
        by_source.setdefault(r.source, []).append(r)
    if identities is None:
        identities = [identity(o) for o in objects]
    present = dict(zip(identities, objects, strict=True))
    defined = {
        (o["spec"]["group"], o["spec"]["names"]["kind"]): i
        for i, o in present.items()
        if i[:2] == ("apiextensions.k8s.io", "CustomResourceDefinition")
    }
    acting: dict[str, list[ObjectId]] = {}  # namespace ("" for a binding: any) -> what acts on its pods
    for i in present:
        if i[:2] in ACTS_ON_PODS:
            acting.setdefault(i[2], []).append(i)
    node_side = [i for i in present if i[:2] in NODE_SIDE]
    out = {}
    for i, obj in present.items():
        group, kind, namespace, _ = i
        wanted = set()
        if namespace:
            wanted.add(("", "Namespace", "", namespace))
        if (group, kind) in defined:
            wanted.add(defined[group, kind])
        for r in by_source.get((group, kind), ()):
            wanted.update((*r.target, "", name) for name in _values(obj, r.path))
        if namespace and (group, kind) not in ACTS_ON_PODS and _makes_pods(obj.get("spec")):  # quotas make none
            wanted.update(_for_pods(present, obj, namespace, acting, node_side))
        wanted.discard(i)
        out[i] = frozenset(w for w in wanted if w in present)
    return out


def _for_pods(
    present: Mapping[ObjectId, Mapping[str, Any]],
    obj: Mapping[str, Any],
    namespace: str,
    acting: Mapping[str, list[ObjectId]],
    node_side: list[ObjectId],
) -> Iterator[ObjectId]:
    """What an object that makes pods in `namespace` needs for them: the PriorityClasses it names, what acts on its
    pods at admission (`acting`: namespace, or "" for a binding, -> those objects), and the node side."""
    yield from (("scheduling.k8s.io", "PriorityClass", "", n) for n in _named(obj["spec"], "priorityClassName"))
    labels = _namespace_labels(present, namespace)
    yield from acting.get(namespace, ())
    yield from (b for b in acting.get("", ()) if _selects(present[b], labels))
    yield from node_side


def depths(graph: Mapping[ObjectId, frozenset[ObjectId]]) -> dict[ObjectId, int]:
    """Each object's creation depth: 0 if it needs nothing, else one more than the deepest object it needs. Objects
    of one depth need none of each other, and each needs only objects of smaller depths."""
    out: dict[ObjectId, int] = {}
    visiting: set[ObjectId] = set()

    def depth(i: ObjectId) -> int:
        if i in out:
            return out[i]
        if i in visiting:  # the checks refuse what would make one (a queue its own ancestor): a policyc bug
            raise ValueError(f"dependency cycle through {'/'.join(filter(None, i))}")
        visiting.add(i)
        deepest = -1
        for n in sorted(graph[i]):
            deepest = max(deepest, depth(n))
        visiting.discard(i)
        out[i] = deepest + 1
        return out[i]

    for i in sorted(graph):
        depth(i)
    return out


def _values(node: Any, path: Sequence[str]) -> Iterator[str]:
    """The strings at `path` in `node` (a `*` step: in every item of a list)."""
    if not path:
        if isinstance(node, str) and node:
            yield node
        return
    step, rest = path[0], path[1:]
    if step == "*":
        for item in node if isinstance(node, list) else ():
            yield from _values(item, rest)
    elif isinstance(node, dict) and step in node:
        yield from _values(node[step], rest)


def _named(node: Any, key: str) -> Iterator[str]:
    """Every string value of a field `key` anywhere in `node`."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, str):
                yield v
            else:
                yield from _named(v, key)
    elif isinstance(node, list):
        for item in node:
            yield from _named(item, key)


def _makes_pods(node: Any) -> bool:
    """Whether `node` holds a pod template: a `template` with a `spec`, at any depth (a Deployment's, a Job's, each
    task's of a gang job, a Slurm NodeSet's)."""
    todo = [node]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            template = node.get("template")
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                return True
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return False


def _namespace_labels(present: Mapping[ObjectId, Mapping[str, Any]], namespace: str) -> dict[str, str]:
    ns = present.get(("", "Namespace", "", namespace))
    return {**(ns["metadata"].get("labels", {}) if ns else {}), NAMESPACE_NAME: namespace}


def _selects(binding: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether an admission policy binding applies in a namespace of these labels: its `namespaceSelector` (a
    metav1.LabelSelector; none selects every namespace) holds every `matchLabels` pair and `matchExpressions`
    requirement."""
    selector = (binding["spec"].get("matchResources") or {}).get("namespaceSelector") or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_requirement_holds(e, labels) for e in selector.get("matchExpressions") or ())


def _requirement_holds(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, values = expression["key"], expression.get("values") or ()
    return {
        "In": key in labels and labels[key] in values,
        "NotIn": key not in labels or labels[key] not in values,
        "Exists": key in labels,
        "DoesNotExist": key not in labels,
    }[expression["operator"]]

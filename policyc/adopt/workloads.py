"""Workload classes read back. Their templates are never applied by Argo CD, so a cluster shows a class three ways,
used in this order:

- a copy of its template a team applied (policyc's ownership labels, `app.kubernetes.io/name` naming the class):
  its kind, GPUs per pod, priority class and the tolerations that place it;
- the tenant's mutating admission policy (policyc's own), which names every class and the tolerations it injects,
  and the namespace whose pods it defaults to a class (`namespaceDefault`);
- the tenant's validating admission policy, whose grants give one class per set of usages and GPU products.

The type and tier follow from the tolerations (usage and product); what the cluster does not show is a guess (one
GPU per pod, the backend's default kind), marked as such.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ruamel.yaml.comments import CommentedMap

from policyc.adopt.draft import Draft, block
from policyc.cluster.reading import ObjectRef
from policyc.cluster.source import ClusterSource, Kind
from policyc.gpu import dra
from policyc.gpu.accelerators import CPU_TIER
from policyc.ir import RDMA_LABEL, LabelKeys
from policyc.pods import HOSTNAME, ZONE
from policyc.tenancy.policies import policy_name

MANAGED_BY = "app.kubernetes.io/managed-by"
CLASS_LABEL = "app.kubernetes.io/name"
ADMISSION = "admissionregistration.k8s.io"
VALIDATING_POLICY = Kind(ADMISSION, "ValidatingAdmissionPolicy")
MUTATING_POLICY = Kind(ADMISSION, "MutatingAdmissionPolicy")
RESOURCE_CLAIM_TEMPLATE = Kind("resource.k8s.io", "ResourceClaimTemplate")
INJECTION_PREFIX = "policyc-inject-"
_CLASS_PATCH = re.compile(r"^variables\.workloadClass != '([^']+)' \? \[\] :")
_TOLERATION = re.compile(r"'key': '([^']+)', 'operator': 'Equal', 'value': '([^']*)'")
_NAMESPACE_DEFAULTS = re.compile(r"request\.namespace in (\{[^}]*\})")
_ONE_PER_NODE = re.compile(rf"'podAntiAffinity': .*?'topologyKey': (dyn\()?'{re.escape(HOSTNAME)}'")
_SAME_ZONE = re.compile(rf"'podAffinity': .*?'topologyKey': (dyn\()?'{re.escape(ZONE)}'")


@dataclass(slots=True)
class ClassRead:
    """What the cluster shows of one workload class."""

    name: str
    tolerated: dict[str, list[str]] = field(default_factory=dict)
    """Toleration key -> the values its pods tolerate (usages, GPU products)."""
    namespace: str | None = None
    kind: str | None = None
    gpus: int | None = None
    priority_class: str | None = None
    namespace_default: bool = False
    rdma: int | None = None
    """RDMA devices a pod asks for (`rdma/...` resources)."""
    cpu: str | None = None
    memory: str | None = None
    """A pod's cpu and memory requests, for a class on CPU-only nodes (the largest of its pod templates)."""
    rdma_nodes: bool = False
    """Its pods require RDMA nodes (the mutating admission policy's node affinity): it asks for RDMA devices."""
    one_per_node: bool = False
    same_zone: bool = False


@dataclass(frozen=True, slots=True)
class Context:
    """What reading classes needs beside the cluster: the policy's keys, its tiers and the backend's kinds."""

    keys: LabelKeys
    tiers: dict[str, list[str]]
    kinds: dict[Kind, tuple[str, object]]
    """(group, kind) -> (the policy's kind name, the function giving an object's pod templates)."""
    accelerators: tuple[str, ...]
    """The resources the nodes advertise their accelerators as: what a pod's GPUs are counted in."""
    mig_profiles: dict[str, tuple[str, ...]]
    """Tier -> the MIG profiles its pools' layouts hold (none for whole cards)."""
    unsized_tiers: frozenset[str] = frozenset()
    """Tiers none of whose pools states its allocatable cpu and memory: a class there states its pods' own."""


def read_workloads(source: ClusterSource, draft: Draft, tenants: list[CommentedMap], context: Context) -> None:
    """spec.workloads, tenant by tenant."""
    applied = _applied(source, draft, context)
    validating = {p["metadata"]["name"]: p for p in source.objects(VALIDATING_POLICY)}
    mutating = {p["metadata"]["name"]: p for p in source.objects(MUTATING_POLICY)}
    claimed = _claimed_devices(source)
    default_classes = {c["name"] for c in draft.spec.get("priorityClasses") or [] if c.get("globalDefault")}
    out = []
    for tenant in tenants:
        namespaces = list(tenant["namespaces"])
        classes = {
            c.name or f"grant {i}": c for i, c in enumerate(_admission_classes(tenant["name"], validating, mutating))
        }
        for read in applied:
            if read.namespace in namespaces:
                classes[read.name] = _merged(classes.get(read.name), read)
        for read in classes.values():
            entry = _entry(read, tenant, context, claimed, default_classes)
            if entry is None:
                draft.notes.append(f"tenant {tenant['name']}: class {read.name or '?'} on no GPU tier; not expressed")
            elif all(w["name"] != entry["name"] for w in out):
                out.append(entry)
    if out:
        draft.spec["workloads"] = out


def _entry(
    read: ClassRead, tenant: CommentedMap, context: Context, claimed: dict, default_classes: set[str]
) -> CommentedMap | None:
    kind, tier = _placement(read, context)
    on_cpus = tier is None and CPU_TIER in read.tolerated.get(context.keys.tier, ())
    if tier is None and not on_cpus:
        return None
    name = read.name or f"{tenant['name']}-{kind}-{tier or CPU_TIER}"  # a grant names no class
    first = tenant["namespaces"][0]
    namespace = read.namespace or first
    entry: dict = {"name": name, "type": kind, "tenant": tenant["name"]}
    if namespace != first:
        entry["namespace"] = namespace
    gpus = read.gpus or claimed.get((namespace, f"{name}-{dra.CLAIM}"))
    entry.update(_sizes(read, tier, gpus, context))
    entry.update(_shown(read, _needed_class(tenant, default_classes)))
    out = block(entry)
    shown: tuple = (("gpus", gpus),) if not on_cpus else ()
    if on_cpus or tier in context.unsized_tiers:
        shown += (("cpu and memory", read.cpu and read.memory),)
    shown += (("kind", read.kind), ("priority class", read.priority_class))
    if read.rdma_nodes and not read.rdma:
        shown += (("RDMA devices per pod (1: its pods require RDMA nodes)", False),)
    unseen = [what for what, known in shown if not known]
    if unseen:
        out.yaml_add_eol_comment(
            f"guessed: {', '.join(unseen)} not on the cluster (no copy of its template there); from the admission "
            "policies",
            "name",
        )
    return out


def _shown(read: ClassRead, needed_class: str | None) -> dict:
    """The fields of a class the cluster shows beside its placement and size: kind, RDMA devices (1 where only its
    placement on RDMA nodes shows), one pod per node, one zone, priority class (else the one its pods must name),
    namespace default."""
    fields = {
        "kind": read.kind,
        "rdma": read.rdma or (1 if read.rdma_nodes else None),
        "onePerNode": read.one_per_node,
        "sameZone": read.same_zone,
        "priorityClass": read.priority_class or needed_class,
        "namespaceDefault": read.namespace_default,
    }
    return {key: value for key, value in fields.items() if value}


def _sizes(read: ClassRead, tier: str | None, gpus: int | None, context: Context) -> dict:
    """A class on CPU-only nodes (tier None) states its pods' cpu and memory (nothing to size them from); one on a
    GPU tier its GPUs, and the MIG device its tier's cards are cut into where there is one (and its pods' cpu and
    memory where no pool of the tier states its allocatable)."""
    if tier is None:
        return {"cpu": read.cpu or "1", "memory": read.memory or "1Gi"}
    out: dict = {"gpuTier": tier, "gpus": gpus or 1}
    if tier in context.unsized_tiers:
        out.update(cpu=read.cpu or "1", memory=read.memory or "1Gi")
    profiles = context.mig_profiles.get(tier, ())
    if len(profiles) == 1:
        out["migProfile"] = profiles[0]
    return out


def _placement(read: ClassRead, context: Context) -> tuple[str, str | None]:
    """(type, tier) from the usages and GPU products the class's pods tolerate (tier None: no tier has them)."""
    usages = set(read.tolerated.get(context.keys.usage, ()))
    kind = "inference" if "inference" in usages and "training" not in usages else "training"
    products = sorted(next((v for k, v in read.tolerated.items() if k != context.keys.usage), []))
    return kind, next((t for t, ps in context.tiers.items() if sorted(ps) == products), None)


def _needed_class(tenant: CommentedMap, default_classes: set[str]) -> str | None:
    """The class a class's pods must name where the cluster does not show one: the tenant's first granted class
    when none it is granted is the default (pods naming none are refused); else none."""
    granted = list(tenant.get("priorityClasses") or [])
    return granted[0] if granted and not set(granted) & default_classes else None


def _merged(known: ClassRead | None, applied: ClassRead) -> ClassRead:
    """The applied copy's facts, with the admission policy's namespace default."""
    if known is not None:
        applied.namespace_default = known.namespace_default
        applied.tolerated = applied.tolerated or known.tolerated
    return applied


def _applied(source: ClusterSource, draft: Draft, context: Context) -> list[ClassRead]:
    """Classes from copies of their templates on the cluster (policyc's ownership labels), in name order."""
    out = []
    for kind, (name, pods) in sorted(context.kinds.items()):
        for obj in source.objects(kind):
            labels = obj["metadata"].get("labels") or {}
            if labels.get(MANAGED_BY) != "policyc" or not labels.get(CLASS_LABEL):
                continue
            try:
                templates = pods(obj.get("spec") or {})  # type: ignore[operator]
            except (KeyError, TypeError, AttributeError):
                continue
            read = ClassRead(labels[CLASS_LABEL], namespace=obj["metadata"].get("namespace"), kind=name)
            for _, _, template in templates:
                _pod_facts(read, template.get("spec") or {}, context)
            out.append(read)
            draft.expressed.add(ObjectRef.of(obj))
    return sorted(out, key=lambda r: r.name)


def _pod_facts(read: ClassRead, spec: dict, context: Context) -> None:
    """GPUs per pod (the largest of its pod templates), priority class and tolerations of one pod template."""
    resources = [c.get("resources") or {} for c in spec.get("containers") or []]
    gpus = _devices(resources, lambda name: name in context.accelerators)
    read.gpus = max(gpus, read.gpus or 0) or None
    read.rdma = max(_devices(resources, lambda name: name.startswith("rdma/")), read.rdma or 0) or None
    read.priority_class = spec.get("priorityClassName") or read.priority_class
    if len(resources) == 1 and not gpus:
        requests = resources[0].get("requests") or {}
        read.cpu, read.memory = str(requests.get("cpu", "")) or read.cpu, str(requests.get("memory", "")) or read.memory
    _tolerated(read, spec.get("tolerations") or [])


def _devices(resources: list[dict], counted: Callable[[str], bool]) -> int:
    """The devices a pod's containers' limits ask for, of the resources `counted` names."""
    amounts = [str(n) for r in resources for name, n in (r.get("limits") or {}).items() if counted(name)]
    return sum(int(n) for n in amounts if n.isdigit())


def _tolerated(read: ClassRead, tolerations: list[dict]) -> None:
    for toleration in tolerations:
        key, value = toleration.get("key"), toleration.get("value")
        if key and value is not None and value not in read.tolerated.setdefault(key, []):
            read.tolerated[key].append(value)


def _admission_classes(tenant: str, validating: dict, mutating: dict) -> list[ClassRead]:
    injected = mutating.get(f"{INJECTION_PREFIX}{tenant}")
    if injected is not None:
        classes = _injected_classes(injected, _namespace_defaults(injected))
        if classes:
            return classes
    policy = validating.get(policy_name(tenant))
    return [ClassRead("", grant) for grant in _grants(policy)] if policy else []


def _injected_classes(policy: dict, defaults: dict[str, str]) -> list[ClassRead]:
    """Each class a tenant's mutating admission policy injects into: the tolerations and the placement it injects
    (RDMA nodes required, one pod per node, one zone), and the namespace it defaults to it."""
    out: dict[str, ClassRead] = {}
    for mutation in (policy.get("spec") or {}).get("mutations") or []:
        expression = str((mutation.get("jsonPatch") or {}).get("expression", ""))
        match = _CLASS_PATCH.match(expression)
        if match is None:
            continue
        name = match.group(1)
        read = out.setdefault(name, ClassRead(name, namespace=defaults.get(name), namespace_default=name in defaults))
        for key, value in _TOLERATION.findall(expression):
            if value not in read.tolerated.setdefault(key, []):
                read.tolerated[key].append(value)
        read.rdma_nodes |= f"'{RDMA_LABEL}'" in expression
        read.one_per_node |= bool(_ONE_PER_NODE.search(expression))
        read.same_zone |= bool(_SAME_ZONE.search(expression))
    return list(out.values())


def _namespace_defaults(policy: dict) -> dict[str, str]:
    """Class -> the namespace whose pods that name no class it injects into (`namespaceDefault`)."""
    for variable in (policy.get("spec") or {}).get("variables") or []:
        match = _NAMESPACE_DEFAULTS.search(str(variable.get("expression", "")))
        if variable.get("name") == "workloadClass" and match:
            try:
                by_namespace = ast.literal_eval(match.group(1))
            except (ValueError, SyntaxError):
                return {}
            return {str(c): str(ns) for ns, c in by_namespace.items()} if isinstance(by_namespace, dict) else {}
    return {}


def _grants(policy: dict) -> list[dict]:
    """The `grants` variable of a tenant's validating admission policy: a CEL list of maps of string lists."""
    for variable in (policy.get("spec") or {}).get("variables") or []:
        if variable.get("name") == "grants":
            try:
                grants = ast.literal_eval(variable.get("expression", ""))
            except (ValueError, SyntaxError):
                return []
            return [g for g in grants if isinstance(g, dict) and g] if isinstance(grants, list) else []
    return []


def _claimed_devices(source: ClusterSource) -> dict[tuple[str, str], int]:
    """(namespace, ResourceClaimTemplate) -> the devices it claims: a DRA tier's class claims its GPUs per pod in
    `<class>-gpus`, the one part of its template on the cluster."""
    out = {}
    for template in source.objects(RESOURCE_CLAIM_TEMPLATE):
        requests = ((((template.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests")) or []
        counts = [r.get("exactly", {}).get("count") for r in requests if isinstance(r, dict)]
        if len(counts) == 1 and isinstance(counts[0], int):
            out[(template["metadata"].get("namespace", ""), template["metadata"]["name"])] = counts[0]
    return out

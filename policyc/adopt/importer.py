"""A running cluster (any `ClusterSource`) to the text of a starting ClusterPolicy."""

from __future__ import annotations

import io
from collections import Counter

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from policyc.adopt.alerts import read_monitoring
from policyc.adopt.draft import Draft, block, flow, guess, quoted
from policyc.adopt.gpu_layouts import read_layouts
from policyc.adopt.pools import IGNORED_LABEL_DOMAINS, read_nodes
from policyc.adopt.sized import fit_unseen, place_sized, read_sized, template_nodes
from policyc.adopt.tenants import owned_namespaces, read_tenants
from policyc.adopt.workloads import ADMISSION, MANAGED_BY, MUTATING_POLICY, Context, read_workloads
from policyc.checks.cluster_capacity import tenant_reach
from policyc.cluster.reading import ObjectRef, QueuesRead, number
from policyc.cluster.source import NAMESPACE, NODE, ClusterSource, Kind
from policyc.codes import rule
from policyc.compiler import compile_text
from policyc.gpu import dra
from policyc.ir import LabelKeys
from policyc.k8s import nfd, versions
from policyc.registry import SCHEDULERS, scheduler, scheduler_adopt, settings
from policyc.tenancy.policies import ACTIONS, policy_name

PART_OF = "app.kubernetes.io/part-of"
PRIORITY_CLASS = Kind("scheduling.k8s.io", "PriorityClass")
DEVICE_CLASS = Kind("resource.k8s.io", "DeviceClass")
NODE_FEATURE_RULE = Kind(nfd.NFD_API_VERSION.rpartition("/")[0], nfd.NODE_FEATURE_RULE)
VALIDATING_BINDING = Kind(ADMISSION, "ValidatingAdmissionPolicyBinding")
MUTATING = (MUTATING_POLICY, Kind(ADMISSION, "MutatingAdmissionPolicyBinding"))
RUNNING = (
    Kind("", "Pod"),
    Kind("apps", "Deployment"),
    Kind("apps", "ReplicaSet"),
    Kind("apps", "StatefulSet"),
    Kind("batch", "Job"),
    Kind("", "Event"),
)
"""Kinds of running work and its records: what a cluster does, not what its policy says (summed up in one line)."""
DOMAIN_KEYS = ("node.pool", "node.usage", "gpu.tier", "tenant")
"""policyc's label names under the policy's domain."""
DEFAULT_DOMAIN = "gpu.example.com"
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
SPEC_ORDER = (
    "kubernetesVersion",
    "domain",
    "gpuResource",
    "controlPlane",
    "provisioning",
    "gpuTiers",
    "nodePools",
    "priorityClasses",
    "scheduler",
    "admission",
    "tenants",
    "workloads",
    "monitoring",
)
LISTED_KINDS = (
    NODE,
    NAMESPACE,
    Kind("", "ResourceQuota"),
    Kind("", "LimitRange"),
    PRIORITY_CLASS,
    Kind("", "ConfigMap"),
)
"""Kinds whose leftover objects are listed for a source that cannot say which kinds it holds (a live server)."""


def import_policy(source: ClusterSource) -> str:
    """The policy's text: a header listing what was not expressed, then the ClusterPolicy."""
    draft = Draft()
    nodes = list(source.objects(NODE))
    namespaces = list(source.objects(NAMESPACE))
    domain, domain_guess = _domain(nodes, namespaces)
    keys = LabelKeys(domain)
    draft.spec["domain"] = domain
    layouts = read_layouts(source)
    draft.expressed |= layouts.read
    sized = read_sized(source, keys, draft)
    accelerators, tiers = read_nodes(nodes + template_nodes(sized), keys, draft, _rule_labels(source, keys), layouts)
    unseen = place_sized(draft, sized, keys)
    _dra_tiers(source, draft, domain)
    gpu_resource = accelerators[0] if accelerators else DEFAULT_GPU_RESOURCE
    if gpu_resource != DEFAULT_GPU_RESOURCE:
        draft.spec["gpuResource"] = gpu_resource
    short = gpu_resource  # what amounts write as `gpu`: none where the nodes advertise several (it would be ambiguous)
    if len(accelerators) > 1:
        short = ""
        draft.notes.append(f"the nodes advertise {', '.join(accelerators)}: amounts name each resource, not 'gpu'")
    reading = _queues(source, domain, short, draft)
    _priority_classes(source, draft)
    tenants = read_tenants(source, keys, draft, short, reading.queues if reading else [])
    if tenants:
        draft.spec["tenants"] = tenants
    _admission(source, draft, tenants)
    read_workloads(
        source,
        draft,
        tenants,
        Context(keys, tiers, _workload_kinds(reading), tuple(accelerators), _mig_profiles(draft), _unsized(draft)),
    )
    if reading is not None:
        _integrated_kinds(draft, reading)
    fit_unseen(draft, unseen)
    read_monitoring(source, draft)
    _version(source, nodes, draft)
    _policy_name(source, draft, reading)
    _leftovers(source, draft)
    draft.notes += getattr(source, "skipped", [])  # documents of a manifest directory that are not objects
    _keep_guarantees(draft)
    spec = CommentedMap((key, draft.spec[key]) for key in SPEC_ORDER if key in draft.spec)
    if domain_guess:
        guess(spec, "domain", domain_guess)
    for key, why in draft.spec_guesses.items():
        guess(spec, key, why)
    return _render(draft, spec, source.name)


def _domain(nodes: list[dict], namespaces: list[dict]) -> tuple[str, str | None]:
    """The policy's label domain and, where it was guessed, from what."""
    own = Counter(
        key.rpartition("/")[0]
        for obj in (*nodes, *namespaces)
        for key in (obj["metadata"].get("labels") or {})
        if key.rpartition("/")[2] in DOMAIN_KEYS and "/" in key
    )
    if own:
        return own.most_common(1)[0][0], None
    custom = Counter(
        key.rpartition("/")[0]
        for node in nodes
        for key in (node["metadata"].get("labels") or {})
        if "/" in key and not any(key.rpartition("/")[0].endswith(d) for d in IGNORED_LABEL_DOMAINS)
    )
    if custom:
        found = custom.most_common(1)[0][0]
        return found, f"the most common label domain on the nodes ({found}); policyc's labels are not there"
    return DEFAULT_DOMAIN, "no label domain of your own on the nodes: write yours"


def _dra_tiers(source: ClusterSource, draft: Draft, domain: str) -> None:
    """A tier whose DeviceClass (`<tier>.<domain>`) is on the cluster is claimed through DRA (`dra: true`)."""
    classes = {obj["metadata"]["name"]: obj for obj in source.objects(DEVICE_CLASS)}
    for tier in draft.spec.get("gpuTiers") or []:
        device_class = classes.get(dra.class_name(tier["name"], domain))
        if device_class is not None:
            tier["dra"] = True
            draft.expressed.add(ObjectRef.of(device_class))


def _rule_labels(source: ClusterSource, keys: LabelKeys) -> dict[str, dict]:
    """Pool -> the labels policyc's NodeFeatureRules set on its nodes (each rule names its pool by the pool label)."""
    out: dict[str, dict] = {}
    for rule_object in source.objects(NODE_FEATURE_RULE):
        for one in (rule_object.get("spec") or {}).get("rules") or []:
            labels = one.get("labels") or {}
            if keys.pool in labels:
                out.setdefault(labels[keys.pool], {}).update(labels)
    return out


def _queues(source: ClusterSource, domain: str, gpu_resource: str, draft: Draft) -> QueuesRead | None:
    """The scheduler backend whose queues the cluster holds (the first, in the registry's order, that finds any)."""
    readings = [(name, scheduler_adopt(name).read_queues(source, domain, gpu_resource)) for name in SCHEDULERS]
    found = [(name, r) for name, r in readings if r is not None]
    if not found:
        draft.spec["scheduler"] = block({"backend": next(iter(SCHEDULERS))})
        draft.spec_guesses["scheduler"] = "no scheduler queues on the cluster: the default backend"
        return None
    name, reading = found[0]
    for other, _ in found[1:]:
        draft.notes.append(f"the cluster also holds {other}'s queues; the policy has one scheduler: {name}")
    draft.spec["scheduler"] = block(reading.scheduler, reading.guesses)
    draft.expressed |= reading.expressed
    draft.unexpressed.update(reading.unexpressed)
    return reading


def _priority_classes(source: ClusterSource, draft: Draft) -> None:
    out = []
    for obj in sorted(source.objects(PRIORITY_CLASS), key=lambda o: o["metadata"]["name"]):
        name = obj["metadata"]["name"]
        if name.startswith("system-"):
            continue
        entry: dict = {"name": name, "value": obj.get("value", 0)}
        if obj.get("globalDefault"):
            entry["globalDefault"] = True
        if obj.get("preemptionPolicy") == "Never":
            entry["preemptionPolicy"] = "Never"
        if obj.get("description"):
            entry["description"] = obj["description"]
        out.append(block(entry))
        draft.expressed.add(ObjectRef.of(obj))
    if out:
        draft.spec["priorityClasses"] = out


def _admission(source: ClusterSource, draft: Draft, tenants: list[CommentedMap]) -> None:
    """Each tenant's admission mode from its binding's validationActions; one `spec.admission.mode` where all agree.
    MutatingAdmissionPolicies of v1beta1 say the cluster turned their beta on."""
    modes = _modes(source, tenants)
    known = {m for m in modes.values() if m is not None}
    admission: dict = {}
    if tenants and not known:
        admission["mode"] = "warn"
        draft.spec_guesses["admission"] = (
            "no tenant admission policy on the cluster: warn admits every pod and tells what deny would refuse"
        )
    elif len(known) == 1 and None not in modes.values():
        admission["mode"] = known.pop()
    elif known:
        for tenant in tenants:
            tenant["admission"] = flow({"mode": modes[tenant["name"]] or "off"})
    if any(obj["apiVersion"].endswith("/v1beta1") for kind in MUTATING for obj in source.objects(kind)):
        admission["mutatingAdmissionPolicyBeta"] = True
    if admission:
        draft.spec["admission"] = flow(admission)


def _modes(source: ClusterSource, tenants: list[CommentedMap]) -> dict[str, str | None]:
    """Tenant -> the admission mode its ValidatingAdmissionPolicyBinding's actions make (None: no binding)."""
    modes_by_actions = {tuple(actions): mode for mode, actions in ACTIONS.items()}
    bindings = {b["metadata"]["name"]: b for b in source.objects(VALIDATING_BINDING)}
    modes: dict[str, str | None] = {}
    for tenant in tenants:
        binding = bindings.get(policy_name(tenant["name"]))
        actions = tuple((binding.get("spec") or {}).get("validationActions") or ()) if binding else ()
        modes[tenant["name"]] = modes_by_actions.get(actions, "off") if binding else None
    return modes


def _mig_profiles(draft: Draft) -> dict[str, tuple[str, ...]]:
    """Tier -> the MIG profiles of its pools' layouts, from the pools read so far."""
    tier_of = {p: t["name"] for t in draft.spec.get("gpuTiers") or [] for p in t["products"]}
    out: dict[str, set[str]] = {}
    for pool in draft.spec.get("nodePools") or []:
        mig = pool["gpu"].get("mig") if "gpu" in pool else None
        if mig is not None and pool["gpu"]["product"] in tier_of:
            out.setdefault(tier_of[pool["gpu"]["product"]], set()).update(mig["devices"])
    return {tier: tuple(sorted(profiles)) for tier, profiles in out.items()}


def _unsized(draft: Draft) -> frozenset[str]:
    """The tiers none of whose pools states its allocatable cpu and memory (pools of a provisioner that makes them)."""
    tier_of = {p: t["name"] for t in draft.spec.get("gpuTiers") or [] for p in t["products"]}
    sized: dict[str, bool] = {}
    for pool in draft.spec.get("nodePools") or []:
        tier = tier_of.get(pool["gpu"]["product"]) if "gpu" in pool else None
        if tier is not None:
            sized[tier] = sized.get(tier, False) or {"cpu", "memory"} <= set(pool.get("allocatable") or {})
    return frozenset(tier for tier, stated in sized.items() if not stated)


def _workload_kinds(reading: QueuesRead | None) -> dict[Kind, tuple[str, object]]:
    """The selected backend's workload kinds: (group, kind) -> (the policy's name, its pod templates)."""
    backend = scheduler(reading.scheduler["backend"] if reading else next(iter(SCHEDULERS)))
    return {Kind(k.group, k.kind): (name, k.pods) for name, k in backend.KINDS.items()}


def _integrated_kinds(draft: Draft, reading: QueuesRead) -> None:
    """A workload kind the scheduler's configuration shows some class runs, which no class read runs, goes to the
    first class of its type whose kind the cluster does not show (guessed: which class it is is not there)."""
    defaults = settings(reading.scheduler["backend"]).DEFAULT_KINDS
    classes = draft.spec.get("workloads") or []
    for kind, type_ in sorted(reading.workload_kinds.items()):
        if any(w.get("kind", defaults[w["type"]]) == kind for w in classes):
            continue
        chosen = next((w for w in classes if "kind" not in w and w["type"] == type_), None)
        if chosen is None:
            draft.notes.append(f"the scheduler's configuration integrates {kind}: no {type_} class to run it")
            continue
        chosen["kind"] = kind
        guess(chosen, "kind", f"the scheduler's configuration integrates {kind}; which class runs it is not there")


def _version(source: ClusterSource, nodes: list[dict], draft: Draft) -> None:
    kubelets = sorted({((n.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "") for n in nodes} - {""})
    mutating = [obj["apiVersion"] for kind in MUTATING for obj in source.objects(kind)]
    api = versions.MUTATING_ADMISSION_POLICY
    if kubelets:
        draft.spec["kubernetesVersion"] = quoted(".".join(kubelets[0].lstrip("v").split(".")[:2]))
        if len(kubelets) > 1:
            draft.spec_guesses["kubernetesVersion"] = f"the oldest kubelet of {', '.join(kubelets)}"
    elif api.group_version in mutating:
        draft.spec["kubernetesVersion"] = quoted(f"1.{api.since}")
        draft.spec_guesses["kubernetesVersion"] = (
            f"the nodes report no kubelet version; {api.kind} {api.version} is served"
        )
    elif mutating:
        draft.spec["kubernetesVersion"] = quoted(f"1.{api.beta_since}")
        draft.spec_guesses["kubernetesVersion"] = (
            f"the nodes report no kubelet version; {api.kind} {api.beta_version} is served"
        )
    else:
        draft.spec["kubernetesVersion"] = quoted(f"1.{api.beta_since - 1}")  # type: ignore[operator]
        draft.spec_guesses["kubernetesVersion"] = f"the nodes report no kubelet version and no {api.kind} is served"


def _policy_name(source: ClusterSource, draft: Draft, reading: QueuesRead | None) -> None:
    names: Counter[str] = Counter()
    for kind in _kinds(source):
        for obj in source.objects(kind):
            labels = obj["metadata"].get("labels") or {}
            if labels.get(MANAGED_BY) == "policyc" and labels.get(PART_OF):
                names[labels[PART_OF]] += 1
    if names:
        draft.name, draft.name_guess = names.most_common(1)[0][0], None
    elif reading is not None and reading.policy_name:
        draft.name, draft.name_guess = reading.policy_name, "the scheduler's root queue, named after the policy"


def _kinds(source: ClusterSource) -> list[Kind]:
    kinds = getattr(source, "kinds", None)
    return kinds() if callable(kinds) else list(LISTED_KINDS)


def _leftovers(source: ClusterSource, draft: Draft) -> None:
    """Every object neither expressed nor listed yet: policyc's own (built again from the policy), running work
    (summed up), or not expressed."""
    running: Counter[str] = Counter()
    system: Counter[str] = Counter()
    owned = owned_namespaces()
    for kind in _kinds(source):
        for obj in source.objects(kind):
            ref = ObjectRef.of(obj)
            if ref in draft.expressed or ref in draft.unexpressed:
                continue
            if (obj["metadata"].get("labels") or {}).get(MANAGED_BY) == "policyc":
                draft.owned.add(ref)
            elif ref.namespace in owned or (kind == NAMESPACE and ref.name in owned) or ref.name.startswith("system-"):
                system[str(kind)] += 1
            elif kind in RUNNING or (obj["metadata"].get("ownerReferences") and kind.group not in ("", ADMISSION)):
                running[str(kind)] += 1
            else:
                draft.unexpressed[ref] = "no field of the policy writes it"
    if running:
        counted = ", ".join(f"{n} {kind}" for kind, n in sorted(running.items()))
        draft.notes.append(f"running work, not policy: {counted}")
    if system:
        counted = ", ".join(f"{n} {kind}" for kind, n in sorted(system.items()))
        draft.notes.append(f"Kubernetes' and the cluster components' own (system namespaces and classes): {counted}")


def _keep_guarantees(draft: Draft) -> None:
    """A queue guarantee the nodes of the pools its tenant's workloads reach cannot hold is refused (PC414): the
    cluster has fewer nodes than its queues were sized for. Lower it to what they hold, and say from what."""
    build = compile_text(_dump(_policy(draft, draft.spec)), f"{draft.name}.yaml")
    refused = rule("guarantee-exceeds-capacity").code
    if build.cluster is None or not any(d.code == refused for d in build.report.errors):
        return
    cluster, reach = build.cluster, tenant_reach(build.cluster)
    written = {t["name"]: t for t in draft.spec.get("tenants") or []}
    for tenant in cluster.tenants:
        for resource, amount in tenant.queue.guarantee.items():
            held = [cluster.pool_capacity(p, resource) for p in cluster.pools if p.name in reach[tenant.name]]
            if None in held or not held:
                continue  # a pool that states none of it is taken as large enough
            have = sum(held[1:], held[0])
            if amount > have:
                guarantee = written[tenant.name]["queue"]["guarantee"]
                key = resource if resource in guarantee else cluster.policy_key(resource)
                guarantee[key] = number(str(have))
                guess(guarantee, key, f"lowered from {amount}: the nodes of the pools its workloads reach hold {have}")


def _policy(draft: Draft, spec: CommentedMap) -> CommentedMap:
    return CommentedMap(
        [
            ("apiVersion", "policyc.io/v1alpha1"),
            ("kind", "ClusterPolicy"),
            ("metadata", block({"name": draft.name}, {"name": draft.name_guess} if draft.name_guess else None)),
            ("spec", spec),
        ]
    )


def _render(draft: Draft, spec: CommentedMap, source_name: str) -> str:
    body = _dump(_policy(draft, spec))
    build = compile_text(body, f"{draft.name}.yaml")
    problems = build.report.errors
    rebuilt = {
        ObjectRef(Kind.of(m.obj), m.obj["metadata"].get("namespace"), m.obj["metadata"]["name"])
        for artifact in build.artifacts
        if artifact.synced
        for m in artifact.manifests
    }
    if problems and draft.owned:
        draft.notes.append(f"policyc's own objects: {len(draft.owned)}, built again once the policy validates")
    for ref in sorted(draft.owned - rebuilt) if not problems else ():
        draft.unexpressed[ref] = "policyc's own object, which the imported policy does not build again"
    header = [f"Imported by policyc import from {source_name}. Check every value marked 'guessed'."]
    if problems:
        header += ["", "policyc validate refuses it as it stands:"]
        header += [f"  {d.code} at {'.'.join(map(str, d.path)) or 'the top'}: {d.message}" for d in problems]
    listed = sorted(draft.unexpressed.items())
    if listed or draft.notes:
        header += ["", "Not expressed (what the policy does not say; kind namespace/name: why):"]
        header += [f"  {ref}: {why}" for ref, why in listed]
        header += [f"  {note}" for note in draft.notes]
    return "".join(f"# {line}".rstrip() + "\n" for line in header) + body


def _dump(policy: CommentedMap) -> str:
    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump(policy, out)
    return out.getvalue()

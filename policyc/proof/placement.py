"""The placement proof: where can each workload template's pods land?

Every pod template the compiler emits is evaluated against every pool of the node plan (and the control
plane) with kube-scheduler's filter semantics (`policyc.k8s.scheduling`): nodeSelector and required node
affinity, then NoSchedule/NoExecute taints against tolerations. Nodes of a pool carry the same labels
and taints, as its provisioning gives them, so one node, the pool's template, stands for its pool (named
or by size: the templates do not select by node name). The build fails if a template can land on a pool
of the other usage, of another GPU tier, on the control plane, or nowhere; it warns if a template prefers
a hybrid pool to its dedicated one.

A node that joins is none of that yet: each pool also has a fresh node, as it registers, without the
policy's labels and with only the taints it registers with (`Pool.registration_taints`). A template that
can land on the fresh node of a pool it cannot use once the pool is labelled fails the build too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from policyc.artifacts import Artifact
from policyc.backends.workloads import Kind, PodTemplates, pod_templates
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.gpu import dra
from policyc.ir import ChosenLabel, Cluster, Pool, Taint, Workload, once_per_build
from policyc.k8s.scheduling import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PreferredTerms,
    RequiredNodeAffinity,
    find_untolerated_taint,
    taint_filter,
    tolerates_taint,
)
from policyc.k8s.validation import taint_string
from policyc.pods import reachable_pools, tolerations
from policyc.proof.chosen_values import nodes_for

CONTROL_PLANE = "(control plane)"
"""Name of the control plane in the matrix; not a valid pool name, so it cannot clash with one."""


@dataclass(frozen=True, slots=True, eq=False)
class Target:
    """A pool (or the control plane) as the scheduler sees one of its nodes."""

    name: str
    usage: str | None
    tier: str | None
    node: Mapping[str, Any]
    nodes: tuple[str, ...]
    chosen: Mapping[str, ChosenLabel] = field(default_factory=dict)
    """The labels its provisioner sets to values it chooses for the pod it makes a node for (`Pool.chosen_labels`),
    by key; `node` lacks them."""
    maker: str = ""
    """Its provisioner, for messages."""


@dataclass(frozen=True, slots=True, eq=False)
class Cell:
    """The verdict for one workload's pods on one target."""

    workload: str
    role: str
    target: str
    admitted: bool
    score: int
    reason: str | None
    """Why the pods are rejected (None when admitted)."""

    @property
    def verdict(self) -> str:
        return "admitted" if self.admitted else "rejected"


FRESH = "{} (registering)"
"""Name of a pool's fresh node in messages."""


def _node(p: Pool, labels: dict[str, str], taints: tuple[Taint, ...]) -> dict:
    """A node of pool `p` with these labels and taints, and the devices its nodes have."""
    devices = {r: str(q) for r, q in p.allocatable.items() if "/" in r}
    if p.resource:
        devices[p.resource] = str(p.gpus_per_node)
    return {
        "metadata": {"name": p.nodes[0] if p.nodes else p.name, "labels": labels},
        "spec": {"taints": [t.to_dict() for t in taints]},
        "status": {"allocatable": dict(sorted(devices.items()))},
    }


@once_per_build
def targets(cluster: Cluster) -> list[Target]:
    """The pools of the node plan, then the control plane, each as one representative node: its template. Shared:
    callers must not change it."""
    out = []
    for p in cluster.pools:
        labels = dict(p.labels)
        if p.discovered_product:  # the vendor's feature discovery sets it; the node script checks it
            labels.setdefault(p.product_key, p.product)
        chosen = {label.key: label for label in p.chosen_labels}
        out.append(Target(p.name, p.usage, p.tier, _node(p, labels, p.taints), p.nodes, chosen, p.provisioning))
    if cluster.control_plane_nodes:
        node = {
            "metadata": {"name": cluster.control_plane_nodes[0], "labels": {}},
            "spec": {"taints": [cluster.control_plane_taint.to_dict()]},
        }
        out.append(Target(CONTROL_PLANE, None, None, node, cluster.control_plane_nodes))
    return out


@once_per_build
def fresh_targets(cluster: Cluster) -> list[Target]:
    """A node of each pool as it registers: none of the policy's labels, only the taints it registers with; its
    devices already advertised (the worst case: a pod that needs them finds them). Shared: callers must not change
    it."""
    return [Target(FRESH.format(p.name), p.usage, p.tier, _node(p, {}, p.registration_taints), p.nodes)
            for p in cluster.pools]  # fmt: skip


def fresh_placement_of(cluster: Cluster, pod: Mapping[str, Any]) -> list[tuple[str, bool, str | None]]:
    """(fresh node, admitted, why not) of a pod on the fresh node of every pool."""
    return [(t.name, admitted, why) for t in fresh_targets(cluster) for admitted, _, why in [_evaluate(pod, t, {})]]


NO_CLAIMS: dra.ClaimDevices = {}


def _devices(pod: Mapping[str, Any], claims: dra.ClaimDevices) -> tuple[list[str], list[str]]:
    """The extended resources (GPUs, RDMA devices ...) the pod's containers request (a limit without a request is
    the request, as the API server defaults it) and the devices its resource claims take (as their DeviceClass's quota
    key, which a DRA pool's nodes stand for), and the claim templates it names that do not exist in its namespace."""
    containers = (pod.get("spec") or {}).get("containers") or []
    resources = [c.get("resources") or {} for c in containers]
    requested = {r for res in resources for r, q in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items()
                 if "/" in r and str(q) != "0"}  # fmt: skip
    claimed, missing = dra.pod_claims(pod, claims)
    return sorted(requested | set(claimed)), missing


def _evaluate(
    pod: Mapping[str, Any], target: Target, claims: dra.ClaimDevices, *, bound: bool = False
) -> tuple[bool, int, str | None]:
    """(admitted, preferred-affinity score, why not) of a pod on a target. `bound`: the pod names the node
    (spec.nodeName), so no scheduler runs and the node's kubelet admits it: by node selector and required affinity,
    NoExecute taints only (kubelet `generalFilter`), and resources; nothing allocates its resource claims."""
    target, why = _made_for(pod, target, bound) if target.chosen else (target, _not_scheduled(pod, target, bound))
    if why is None:
        why = _not_resourced(pod, target, claims, bound)
    preferred = (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "preferredDuringSchedulingIgnoredDuringExecution"
    )
    score = PreferredTerms.parse(preferred).score(target.node) if why is None else 0
    return why is None, score, why


def _made_for(pod: Mapping[str, Any], target: Target, bound: bool) -> tuple[Target, str | None]:
    """The target with the node its provisioner makes for the pod, the values it chooses set (the first such node
    the pod is scheduled on, else the first it can make), and why the pod is not scheduled on it (None: it is)."""
    nodes, why = nodes_for(pod, target.node, target.chosen, target.maker)
    first: tuple[Target, str | None] | None = None
    for node in nodes:
        made = replace(target, node=node)
        why = _not_scheduled(pod, made, bound)
        if why is None:
            return made, None
        first = first or (made, why)
    return first or (target, why)


def _not_scheduled(pod: Mapping[str, Any], target: Target, bound: bool) -> str | None:
    """Why the pod's node selector, required affinity or tolerations keep it off the target (None: they do not); a
    `bound` pod's kubelet checks only NoExecute taints."""
    why = RequiredNodeAffinity.from_pod(pod).explain(target.node)
    if why is not None:
        return why
    if bound:
        tolerations = (pod.get("spec") or {}).get("tolerations")
        taint = find_untolerated_taint(tolerations, target.node["spec"]["taints"], (NO_EXECUTE,))
        return None if taint is None else f"taint {taint_string(taint)} is not tolerated (the kubelet checks NoExecute)"
    verdict = taint_filter(pod, target.node)
    return None if verdict.admit else verdict.detail


def _not_resourced(pod: Mapping[str, Any], target: Target, claims: dra.ClaimDevices, bound: bool) -> str | None:
    """Why the pod's devices and resource claims keep it off the target (None: they do not)."""
    devices, unclaimable = _devices(pod, claims)
    if unclaimable:
        return f"its ResourceClaimTemplate {', '.join(unclaimable)} does not exist in its namespace"
    if bound and (pod.get("spec") or {}).get("resourceClaims"):
        return (
            "its resource claims are allocated by the scheduler, which spec.nodeName bypasses: the kubelet waits for "
            "them and does not start it"
        )
    allocatable = target.node.get("status", {}).get("allocatable")
    if allocatable is not None:  # resource fit on pool nodes (the control plane's hardware is unknown)
        missing = [r for r in devices if allocatable.get(r, "0") == "0"]
        return f"its nodes have no {', '.join(missing)} (Insufficient {missing[0]})" if missing else None
    return None


def placement_of(
    cluster: Cluster, pod: Mapping[str, Any], claims: dra.ClaimDevices = NO_CLAIMS
) -> list[tuple[str | None, bool, str | None]]:
    """(target, admitted, why not) of one pod on every pool and the control plane; `claims`: the ResourceClaimTemplates
    of the policy, which its resource claims are made from. A pod that names its node (spec.nodeName) bypasses the
    scheduler: only the target holding that node, as its kubelet admits the pod (target None: no such node)."""
    node = named_node(pod)
    if node is None:
        return [(t.name, admitted, why) for t in targets(cluster) for admitted, _, why in [_evaluate(pod, t, claims)]]
    every = targets(cluster)
    named = [t for t in every if node in t.nodes]
    by_size = [every[i] for i, p in enumerate(cluster.pools) if not p.named]  # targets: the pools, in order, first
    if not named and not by_size:
        return [(None, False, f"no node {node} in the policy's pools or control plane: where the cluster has no such "
                 "node either, no kubelet runs the pod and the pod garbage collector deletes it")]  # fmt: skip
    out = []
    for target in named or by_size:  # a name no pool lists may be a node of any pool by size
        bound = replace(target, node={**target.node, "metadata": {**target.node["metadata"], "name": node}})
        admitted, _, why = _evaluate(pod, bound, claims, bound=True)
        out.append((target.name, admitted, why))
    return out


def named_node(pod: Mapping[str, Any]) -> str | None:
    """The node a pod names (spec.nodeName), bypassing the scheduler; None when the scheduler places it."""
    return (pod.get("spec") or {}).get("nodeName") or None


def claim_templates(artifacts: list[Artifact]) -> dict[tuple[str, str], dict[str, int]]:
    """The ResourceClaimTemplates among the emitted objects (`policyc.gpu.dra.claim_devices`)."""
    return dra.claim_devices(m.obj for a in artifacts if not a.template for m in a.manifests)


def _verdicts(
    cluster: Cluster,
    kinds: Mapping[str, Kind],
    templates: Mapping[str, Mapping[str, Any]],
    all_targets: list[Target],
    claims: dra.ClaimDevices,
) -> dict[str, list[tuple[str, list[tuple[bool, int, str | None]]]]]:
    """Per workload, per pod role, the (admitted, score, reason) on each of `all_targets`; identical pod
    specs are evaluated once and share their list."""
    seen: dict[str, list[tuple[bool, int, str | None]]] = {}
    out = {}
    for workload in sorted(templates):
        roles = []
        namespace = (templates[workload].get("metadata") or {}).get("namespace", "")
        for role, _, template in pod_templates(kinds, templates[workload]):
            pod = {**template, "metadata": {**(template.get("metadata") or {}), "namespace": namespace}}
            spec = pod.get("spec") or {}
            key = json.dumps(
                [spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations"), _devices(pod, claims)],
                sort_keys=True,
            )
            if key not in seen:
                seen[key] = [_evaluate(pod, t, claims) for t in all_targets]
            roles.append((role, seen[key]))
        out[workload] = roles
    return out


def matrix(
    cluster: Cluster,
    kinds: Mapping[str, Kind],
    templates: Mapping[str, Mapping[str, Any]],
    claims: dra.ClaimDevices = NO_CLAIMS,
) -> list[Cell]:
    """Every (workload, pod role, target) verdict of the template objects (of `kinds`, the scheduler backend's)."""
    all_targets = targets(cluster)
    return [
        Cell(workload, role, target.name, admitted, score, why)
        for workload, roles in _verdicts(cluster, kinds, templates, all_targets, claims).items()
        for role, results in roles
        for target, (admitted, score, why) in zip(all_targets, results, strict=True)
    ]


def workload_templates(artifacts: list[Artifact]) -> dict[str, Mapping[str, Any]]:
    """Workload name → its template object, from the emitted artifacts."""
    return {
        a.path.removeprefix("templates/").removesuffix(".yaml"): a.manifests[0].obj for a in artifacts if a.template
    }


def prove(cluster: Cluster, artifacts: list[Artifact], kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    """Diagnostics for every template (of `kinds`, the scheduler backend's) that can land where its policy forbids,
    or nowhere.

    Only the cells the rules read are materialised (admitted ones, and the rejections by the workload's
    own pools when a role is admitted nowhere), so the cost stays near workloads + pools, not their product.
    """
    templates = workload_templates(artifacts)
    all_targets, fresh = targets(cluster), fresh_targets(cluster)
    claims = claim_templates(artifacts)
    verdicts = _verdicts(cluster, kinds, templates, all_targets, claims)
    on_fresh = _verdicts(cluster, kinds, templates, fresh, claims)
    by_target = {t.name: t for t in all_targets}
    out = []
    for w in cluster.workloads:
        out.extend(_fresh_nodes(cluster, w, fresh, on_fresh[w.name], pod_templates(kinds, templates[w.name])))
        cells, roles = [], []
        for role, results in verdicts[w.name]:
            roles.append(role)
            admitted = [Cell(w.name, role, t.name, True, score, None)
                        for t, (ok, score, _) in zip(all_targets, results, strict=True) if ok]  # fmt: skip
            if not admitted:
                admitted = [Cell(w.name, role, t.name, False, 0, why)
                            for t, (_, _, why) in zip(all_targets, results, strict=True)
                            if t.tier == w.tier.name and t.usage in (w.type, "hybrid")]  # fmt: skip
            cells.extend(admitted)
        out.extend(_forbidden(cluster, w, cells, by_target, pod_templates(kinds, templates[w.name])))
        out.extend(_nowhere(cluster, w, cells, roles))
        out.extend(_prefers_hybrid(w, cells, by_target))
    return out


def _fresh_nodes(
    cluster: Cluster,
    w: Workload,
    fresh: list[Target],
    roles: list[tuple[str, list[tuple[bool, int, str | None]]]],
    template_pods: PodTemplates,
) -> Iterator[Diagnostic]:
    """One diagnostic for the fresh nodes of pools the workload cannot use that its pods can land on."""
    pods = {role: pod for role, _, pod in template_pods}
    own = {FRESH.format(p.name) for p in reachable_pools(cluster, w)}
    landed = [(role, t) for role, results in roles for t, (ok, _, _) in zip(fresh, results, strict=True)
              if ok and t.name not in own]  # fmt: skip
    if not landed:
        return
    role, first = landed[0]
    names = listing(sorted({f"'{t.name}'" for _, t in landed}))
    yield diag(
        "placement-fresh-node",
        f"template '{w.name}' (templates/{w.name}.yaml) can land on a node as it registers, before its pool's labels "
        f"and taints are set: {names}; on '{first.name}', {_why_admitted(cluster, pods[role], first)}",
        _location(w),
        hint="drop the tolerations that tolerate what those nodes carry as they register",
    )


def _why_admitted(cluster: Cluster, pod: Mapping[str, Any], target: Target) -> str:
    """What lets the pods onto a target they should not reach: the affinity that does not exclude it and
    the tolerations that tolerate its taints."""
    spec = pod.get("spec") or {}
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    parts = ["no required node affinity excludes it" if required is None else "its required node affinity allows it"]
    for taint in target.node["spec"]["taints"]:
        if taint["effect"] == "PreferNoSchedule":
            continue
        tolerations = spec.get("tolerations") or []
        by = next((t for t in tolerations if tolerates_taint(t, taint)), None)
        if by is not None:
            shown = ", ".join(f"{k}: {v}" for k, v in by.items())
            value = f"={taint['value']}" if taint.get("value") else ""
            parts.append(f"toleration {{{shown}}} tolerates its taint {taint['key']}{value}:{taint['effect']}")
    return "; ".join(parts)


def _location(w: Workload) -> tuple:
    if w.placement == "preferred":
        return (*w.path, "placement")
    return (*w.path, "tolerations") if w.tolerations else (*w.path, "name")


def _forbidden(
    cluster: Cluster, w: Workload, cells: list[Cell], by_target: dict[str, Target], template_pods: PodTemplates
) -> Iterator[Diagnostic]:
    """One diagnostic per kind of violation, naming every pool it concerns and why the first one admits; of its
    template's pods, `template_pods`."""
    pods = {role: pod for role, _, pod in template_pods}
    found: dict[str, list[tuple[Cell, Target]]] = {}
    for cell in cells:
        target = by_target[cell.target]
        if not cell.admitted or any(t is target for group in found.values() for _, t in group):
            continue
        if target.name == CONTROL_PLANE:
            rule = "placement-control-plane"
        elif target.usage not in (w.type, "hybrid"):
            rule = "placement-wrong-usage"
        elif target.tier != w.tier.name:
            rule = "placement-wrong-tier"
        else:
            continue
        found.setdefault(rule, []).append((cell, target))
    for rule, group in found.items():
        cell, first = group[0]
        names = ", ".join(f"'{t.name}'" for _, t in group)
        plural = "s" if len(group) > 1 else ""
        if rule == "placement-control-plane":
            what = f"the control-plane nodes ({', '.join(first.nodes)})"
        elif rule == "placement-wrong-usage":
            what = f"{' and '.join(sorted({t.usage for _, t in group}))} pool{plural} {names}"
        else:
            tiers = sorted({f"'{t.tier}'" for _, t in group})
            what = f"pool{plural} {names} of GPU tier{'s' if len(tiers) > 1 else ''} {', '.join(tiers)}"
        why = _why_admitted(cluster, pods[cell.role], first)
        if len(group) > 1:
            why = f"on '{first.name}', {why}"
        yield diag(
            rule,
            f"{w.type} template '{w.name}' (templates/{w.name}.yaml) can land on {what}: {why}",
            _location(w),
            hint=_forbidden_hint(cluster, w, rule),
        )


def _forbidden_hint(cluster: Cluster, w: Workload, rule: str) -> str:
    taints = (
        f"the toleration of {cluster.keys.control_plane}"
        if rule == "placement-control-plane"
        else "the tolerations that tolerate policyc's usage and product taints"
    )
    return f"use placement: strict, or drop {taints}" if w.placement == "preferred" else f"drop {taints}"


def _nowhere(cluster: Cluster, w: Workload, cells: list[Cell], roles: list[str]) -> Iterator[Diagnostic]:
    """`cells` holds, for a role admitted nowhere, its rejections by the pools of its tier and usage."""
    for role in roles:
        if any(c.admitted for c in cells if c.role == role):
            continue
        own = [c for c in cells if c.role == role]
        pods = f"{role} pods of " if len(roles) > 1 else ""
        if not own:
            article = "an" if w.type == "inference" else "a"
            cpu = w.tier.resource is None
            pools = "CPU-only pool" if cpu else f"pool of GPU tier '{w.tier.name}'"
            yield diag(
                "placement-nowhere",
                f"{pods}template '{w.name}' can land nowhere: no {pools} has usage {w.type} or hybrid",
                (*w.path, "name" if cpu else "gpuTier"),
                hint=f"add {article} {w.type} or hybrid pool "
                + ("without gpu (CPU-only nodes)" if cpu else f"with a GPU of tier '{w.tier.name}'"),
            )
            continue
        by_reason: dict[str, list[str]] = {}
        for c in own:
            by_reason.setdefault(c.reason or "", []).append(f"'{c.target}'")
        reasons = "; ".join(f"pool{'s' if len(p) > 1 else ''} {', '.join(p)}: {r}" for r, p in by_reason.items())
        where, hint = _nowhere_hint(cluster, w, {c.target for c in own})
        yield diag("placement-nowhere", f"{pods}template '{w.name}' can land nowhere: {reasons}", where, hint=hint)


def _nowhere_hint(cluster: Cluster, w: Workload, pools: set[str]) -> tuple[tuple, str]:
    """(where, hint) of a workload whose pods `pools`, its own, all reject: the taints it must tolerate, else the label
    of its nodeSelector none of them can carry, at that label."""
    untolerated = _untolerated_taints(cluster, w, pools)
    if untolerated:
        add = ", ".join(_toleration_of(t) for t in untolerated)
        return (*w.path, "name"), f"tolerate the pools' own taints: add tolerations: [{add}] to the workload"
    selected = _selector_hint(cluster, w, pools)
    if selected is not None:
        key, hint = selected
        return (*w.path, "nodeSelector", key), hint
    hint = "tolerate the pools' own taints (tolerations), or drop the nodeSelector they do not match"
    return (*w.path, "name"), hint


def _selector_hint(cluster: Cluster, w: Workload, pools: set[str]) -> tuple[str, str] | None:
    """(key, hint) for the first label of the workload's nodeSelector that none of `pools` can carry: a value the
    provisioner of the first of them that chooses its value may choose, or, where none of them has the label at all,
    to give it the label. None: each label is one some pool can carry."""
    own = [p for p in cluster.pools if p.name in pools]
    for key, value in w.node_selector.items():
        if any(p.may_carry(key, value) for p in own):
            continue
        for p in own:
            for label in (label for label in p.chosen_labels if label.key == key):
                allowed = [v for op, values in label.requirements if op == "In" for v in values if label.allows(v)]
                if allowed:
                    chosen = f"select a value {p.provisioning} may give the nodes of pool '{p.name}' ({label})"
                    return key, f"{chosen}: nodeSelector {{{key}: {allowed[0]}}}, or drop {key} from the nodeSelector"
        if not any(key in p.labels or any(c.key == key for c in p.chosen_labels) for p in own):
            return key, (f"give pool '{own[0].name}' the label (labels: {{{key}: {value}}}), or drop {key} from the "
                         "workload's nodeSelector")  # fmt: skip
    return None


def _untolerated_taints(cluster: Cluster, w: Workload, pools: set[str]) -> list[Taint]:
    """The NoSchedule and NoExecute taints of the policy's own on `pools` that the workload does not tolerate (not
    the Slurm-only taint, which no workload may tolerate)."""
    tolerated = tolerations(cluster, w)
    out: list[Taint] = []
    for p in cluster.pools:
        for t in p.taints if p.name in pools else ():
            blocks = t.effect in (NO_SCHEDULE, NO_EXECUTE) and t.key != cluster.keys.slurm_only
            if blocks and t not in out and not any(tolerates_taint(x, t.to_dict()) for x in tolerated):
                out.append(t)
    return out


def _toleration_of(t: Taint) -> str:
    """The toleration of exactly taint `t`, as a policy writes it."""
    value = f"operator: Equal, value: {t.value}" if t.value else "operator: Exists"
    return f"{{key: {t.key}, {value}, effect: {t.effect}}}"


def _prefers_hybrid(w: Workload, cells: list[Cell], by_target: dict[str, Target]) -> Iterator[Diagnostic]:
    admitted = [c for c in cells if c.admitted and by_target[c.target].tier == w.tier.name]
    dedicated = [c for c in admitted if by_target[c.target].usage == w.type]
    hybrid = [c for c in admitted if by_target[c.target].usage == "hybrid"]
    if dedicated and hybrid and max(c.score for c in hybrid) > max(c.score for c in dedicated):
        best = max(hybrid, key=lambda c: c.score)
        yield diag(
            "placement-prefers-hybrid",
            f"template '{w.name}' prefers hybrid pool '{best.target}' (score {best.score}) to its dedicated "
            f"{w.type} pools (score {max(c.score for c in dedicated)})",
            (*w.path, "name"),
            hint="hybrid pools are the overflow; give the dedicated usage the highest preference",
        )

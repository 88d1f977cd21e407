"""`policyc explain`: the placement matrix with a reason per cell, how each pool's nodes come to be, and where each
emitted object comes from.

Data first (`placement_rows`, `provenance_rows`), rendering second (text or JSON), so that other front ends
can reuse the data.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

from policyc.compiler import Compilation
from policyc.diagnostics import Path, where
from policyc.ir import node_range
from policyc.proof.placement import (
    CONTROL_PLANE,
    Cell,
    claim_templates,
    matrix,
    named_node,
    placement_of,
    targets,
    workload_templates,
)


@dataclass(frozen=True, eq=False)
class PlacementRow:
    workload: str
    role: str
    pool: str
    usage: str | None
    tier: str | None
    verdict: str
    """preferred (admitted, and scored highest among the admitting pools), admitted, or rejected."""
    score: int
    reason: str | None


@dataclass(frozen=True, eq=False)
class PoolRow:
    pool: str
    provisioning: str
    """Its node provisioner."""
    min_nodes: int
    max_nodes: int
    how: str
    """What makes its nodes and gives them its labels and taints (the provisioner's `describe`)."""


@dataclass(frozen=True, eq=False)
class ProvenanceRow:
    file: str
    kind: str
    """Empty for a text file (a script, data)."""
    name: str
    namespace: str | None
    sources: list[str]
    """Policy locations the object was built from: 'FILE:LINE:COL path'."""


def placement_rows(
    compilation: Compilation, workload: str | None = None, pool: str | None = None
) -> list[PlacementRow]:
    cluster = compilation.cluster
    assert cluster is not None
    info = {t.name: t for t in targets(cluster)}
    assert compilation.backend is not None
    artifacts = compilation.artifacts
    cells = matrix(cluster, compilation.backend.KINDS, workload_templates(artifacts), claim_templates(artifacts))
    best: dict[tuple[str, str], int] = {}
    for c in cells:
        if c.admitted:
            best[(c.workload, c.role)] = max(best.get((c.workload, c.role), 0), c.score)
    rows = []
    for c in cells:
        if (workload and c.workload != workload) or (pool and c.target != pool):
            continue
        rows.append(PlacementRow(c.workload, c.role, c.target, info[c.target].usage, info[c.target].tier,
                                 _verdict(c, best), c.score, c.reason))  # fmt: skip
    return rows


def pool_rows(compilation: Compilation, pool: str | None = None) -> list[PoolRow]:
    """How each pool's nodes come to be (or pool `pool`'s), and its size."""
    cluster = compilation.cluster
    assert cluster is not None
    return [PoolRow(p.name, p.provisioning, p.min_nodes, p.max_nodes,
                    compilation.provisioners[p.provisioning].describe(cluster, p))
            for p in cluster.pools if pool in (None, p.name)]  # fmt: skip


def _verdict(cell: Cell, best: dict[tuple[str, str], int]) -> str:
    if not cell.admitted:
        return "rejected"
    return "preferred" if cell.score == best[(cell.workload, cell.role)] and cell.score > 0 else "admitted"


def provenance_rows(compilation: Compilation, selector: str) -> list[ProvenanceRow]:
    """Objects matching `selector` (an output file, Kind/name, Kind/namespace/name, or 'all')."""
    report = compilation.report

    def located(paths: Sequence[Path]) -> list[str]:
        """'FILE:LINE:COL path' of each, in the order they stand in their files (a policy directory's: the file each
        was written in)."""
        source_map = report.source_map
        places = []
        for p in paths:
            origin = source_map.file_of(p) if source_map else None
            line, column = source_map.locate(p) if source_map else (1, 1)
            own = (*origin[2], *p[len(origin[1]) :]) if origin else p  # its place in its own file
            places.append(((origin[0] if origin else report.file, line, column), own))
        return [f"{file}:{line}:{column} {where(p)}" for (file, line, column), p in sorted(places, key=lambda x: x[0])]

    rows = []
    for artifact in compilation.artifacts:
        if artifact.text is not None and selector in ("all", artifact.path):
            rows.append(ProvenanceRow(artifact.path, "", "", None, located(artifact.sources)))
        for m in artifact.manifests:
            meta = m.obj.get("metadata") or {}
            kind, name, namespace = m.obj["kind"], meta.get("name", ""), meta.get("namespace")
            ids = {"all", artifact.path, f"{kind}/{name}", f"{kind}/{namespace}/{name}"}
            if selector not in ids:
                continue
            rows.append(ProvenanceRow(artifact.path, kind, name, namespace, located(m.sources)))
    return rows


def render_placement_text(rows: Sequence[PlacementRow]) -> str:
    """A matrix (P preferred, A admitted, . rejected), then one line per cell with its reason."""
    pools = list(dict.fromkeys(r.pool for r in rows))
    keys = list(dict.fromkeys((r.workload, r.role) for r in rows))
    multi_role = len({r.role for r in rows}) > 1
    label = {k: f"{k[0]} ({k[1]})" if multi_role else k[0] for k in keys}
    first = max([len("workload"), *(len(v) for v in label.values())])
    mark = {"preferred": "P", "admitted": "A", "rejected": "."}
    cell = {(r.workload, r.role, r.pool): mark[r.verdict] for r in rows}
    lines = ["Placement (P preferred, A admitted, . rejected):", "",
             " ".join(["workload".ljust(first), *pools])]  # fmt: skip
    for k in keys:
        lines.append(" ".join([label[k].ljust(first), *(cell[(*k, p)].center(len(p)) for p in pools)]))
    lines.append("")
    for r in rows:
        where_ = f"{r.usage}, {r.tier}" if r.pool != CONTROL_PLANE else "control plane"
        why = r.reason if r.verdict == "rejected" else f"preferred-affinity score {r.score}"
        lines.append(f"{label[(r.workload, r.role)]} -> {r.pool} ({where_}): {r.verdict}: {why}")
    return "\n".join(lines)


def render_pools_text(rows: Sequence[PoolRow]) -> str:
    """A line per pool: its provisioning, its size, and what makes its nodes."""
    lines = ["Pools (how their nodes come to be):"]
    lines += [f"  {r.pool}: {r.provisioning}, {node_range(r.min_nodes, r.max_nodes)}: {r.how}" for r in rows]
    return "\n".join(lines)


def render_provenance_text(rows: Sequence[ProvenanceRow]) -> str:
    lines = []
    for r in rows:
        ident = f": {r.kind} {r.namespace + '/' if r.namespace else ''}{r.name}" if r.kind else ""
        lines.append(f"{r.file}{ident} <- {'; '.join(r.sources) or 'the policy as a whole'}")
    return "\n".join(lines)


def render_json(
    placement: Sequence[PlacementRow], pools: Sequence[PoolRow], provenance: Sequence[ProvenanceRow], diagnostics: str
) -> str:
    """One document: the placement rows, the pool rows, the object provenance rows, and the diagnostics (a `to_json`
    text)."""
    doc = {
        "version": 1,
        "placement": [asdict(r) for r in placement],
        "pools": [asdict(r) for r in pools],
        "objects": [asdict(r) for r in provenance],
        "diagnostics": json.loads(diagnostics)["diagnostics"],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


# --- one pod or workload manifest -----------------------------------------------------------------------------


VERDICTS = {
    "deny": "refused",
    "warn": "admitted with warnings",
    "audit": "admitted (the refusals are recorded in the audit log)",
}


@dataclass(frozen=True, eq=False)
class PodExplanation:
    """What admission does with one manifest, and where its pods can land."""

    kind: str
    name: str
    namespace: str
    tenant: str | None
    mode: str
    """The tenant's admission mode (off where no tenant owns the namespace)."""
    injected: str | None
    """The workload class whose placement admission injected into the pod (None: no injection)."""
    verdict: str
    """admitted, refused, or admitted with warnings / audited."""
    refusals: list[dict]
    """{rule, message} of every rule it breaks."""
    placement: list[dict]
    """{role, node, pool, admitted, reason} of each of its pods on each pool and the control plane; for a pod that
    names its node (spec.nodeName, which bypasses the scheduler), on that node's pool only, as its kubelet admits it
    (pool None: no node of that name in the policy). `node` is None for a pod the scheduler places."""
    as_pods: bool = False
    """The policies do not match the object's kind: this is what they do with the pods it creates."""


class ManifestError(ValueError):
    """The manifest is not one policyc can explain."""


def explain_manifest(compilation: Compilation, obj: object) -> PodExplanation:
    """Admission by the tenant's policies (`policyc.tenancy.contract.admit`) and placement (`policyc.proof.placement`)
    of a pod, or of a workload object of a kind the policy matches."""
    from policyc.tenancy.contract import admit, contracts, tenant_of

    cluster, backend = compilation.cluster, compilation.backend
    assert cluster is not None and backend is not None
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict) or not isinstance(obj.get("spec"), dict):
        raise ManifestError("not a Kubernetes object with metadata and spec")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    group = str(api_version or "").rpartition("/")[0]
    matched = {(k.group, k.kind): k for k in backend.KINDS.values()}
    namespace = obj["metadata"].get("namespace")
    if not isinstance(namespace, str) or not namespace:
        raise ManifestError("metadata.namespace is not set: the namespace decides the tenant and its rules")
    if (api_version, kind) != ("v1", "Pod") and (group, kind) not in matched:
        return _explain_pods_of(compilation, obj, namespace, matched)
    tenant = tenant_of(cluster, namespace)
    contract = contracts(cluster, backend).get(tenant.name) if tenant else None
    injected = None
    try:
        broken = []
        if contract is not None:
            admission = admit(contract, obj)
            obj, injected, broken = dict(admission.obj), admission.injected, admission.refusals
        if (api_version, kind) == ("v1", "Pod"):
            pods = [("pod", obj)]
        else:
            pods = [(role, template) for role, _, template in matched[(group, kind)].pods(obj["spec"])]
        placement = _placement(compilation, pods, namespace)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise ManifestError(f"malformed {kind}: {type(e).__name__} {e}") from None
    mode = contract.mode if contract else "off"
    verdict = VERDICTS[mode] if broken else "admitted"
    return PodExplanation(
        kind=str(kind), name=str(obj["metadata"].get("name", "")), namespace=namespace,
        tenant=tenant.name if tenant else None, mode=mode, injected=injected, verdict=verdict,
        refusals=[{"rule": r.rule, "message": r.message} for r in broken], placement=placement,
    )  # fmt: skip


def _explain_pods_of(compilation: Compilation, obj: dict, namespace: str, matched: dict) -> PodExplanation:
    """Another controller's object (StatefulSet, ReplicaSet ...), which the policies do not match: what they do with
    the pods of its template."""
    from policyc.proof.admitted import as_pod

    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    template = obj["spec"].get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        known = ", ".join(["v1 Pod", *sorted(f"{k.group} {k.kind}" for k in matched.values())])
        raise ManifestError(f"{api_version} {kind} is not a kind policyc's admission policies match ({known}), "
                            "and it has no pod template (spec.template) whose pods they would")  # fmt: skip
    pods = explain_manifest(compilation, as_pod(template, str(obj["metadata"].get("name", "")), namespace))
    return replace(pods, kind=str(kind), as_pods=True)


def _placement(compilation: Compilation, pods: list[tuple[str, dict]], namespace: str) -> list[dict]:
    """{role, node, pool, admitted, reason} of each of the (role, pod) `pods` of namespace `namespace` on each pool."""
    assert compilation.cluster is not None
    claims = claim_templates(compilation.artifacts)  # what its resource claims are made from
    return [
        {"role": role, "node": named_node(pod), "pool": target, "admitted": admitted, "reason": reason}
        for role, pod in pods
        for target, admitted, reason in placement_of(
            compilation.cluster, {**pod, "metadata": {**(pod.get("metadata") or {}), "namespace": namespace}}, claims
        )
    ]


def render_manifest_text(e: PodExplanation) -> str:
    owner = f"tenant {e.tenant}, admission mode {e.mode}" if e.tenant else "no tenant: no admission policy applies"
    lines = [f"{e.kind} {e.namespace}/{e.name} ({owner})"]
    if e.as_pods:
        lines.append("the admission policies do not match this kind; its pods, as they would be created:")
    if e.injected:
        lines.append(f"injected: the placement of workload class {e.injected}")
    lines.append(f"admission: {e.verdict}")
    lines += [f"  - {r['message']}" for r in e.refusals]
    lines.append("placement:")
    for p in e.placement:
        if p["node"] is None:
            verdict = "admitted" if p["admitted"] else f"rejected: {p['reason']}"
            lines.append(f"  {p['role']} -> {p['pool']}: {verdict}")
            continue
        where_ = f"{p['pool']}, node {p['node']}" if p["pool"] else f"node {p['node']}"
        verdict = "admitted by its kubelet" if p["admitted"] else f"not run: {p['reason']}"
        lines.append(f"  {p['role']} -> {where_} (spec.nodeName, no scheduler): {verdict}")
    return "\n".join(lines)

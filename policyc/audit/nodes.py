"""The cluster's nodes against the policy's pools and control plane: labels, taints, shape, nodes in no pool, nodes
the policy names that the cluster lacks.

A node is of a named pool by its name, of a pool by size by its pool label (`LabelKeys.pool`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from policyc.codes import Severity
from policyc.diagnostics import Diagnostic, ObjectRef, Path, diag
from policyc.gpu.accelerators import VENDORS
from policyc.ir import MIG_CONFIG, Cluster, Pool, Taint
from policyc.k8s.quantity import Quantity, QuantityError
from policyc.pods import devices_per_node


@dataclass(frozen=True, slots=True)
class Node:
    """What the audit keeps of a Node."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    capacity: Mapping[str, str]
    allocatable: Mapping[str, str]

    @classmethod
    def of(cls, obj: dict) -> Node:
        meta, status = obj.get("metadata") or {}, obj.get("status") or {}
        taints = tuple(
            Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
            for t in (obj.get("spec") or {}).get("taints") or ()
        )
        return cls(
            str(meta.get("name", "")),
            meta.get("labels") or {},
            taints,
            status.get("capacity") or {},
            status.get("allocatable") or {},
        )

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef("v1", "Node", None, self.name)


def pool_of(cluster: Cluster, nodes: Iterable[Node]) -> dict[str, Pool]:
    """Node name -> its pool, for the nodes of a pool."""
    named = {n: p for p in cluster.pools if p.named for n in p.nodes}
    sized = {p.name: p for p in cluster.pools if not p.named}
    out = {}
    for node in nodes:
        pool = named.get(node.name) or sized.get(node.labels.get(cluster.keys.pool, ""))
        if pool is not None:
            out[node.name] = pool
    return out


def check(cluster: Cluster, nodes: list[Node], pools: Mapping[str, Pool], strict: bool) -> Iterator[Diagnostic]:
    control_plane = set(cluster.control_plane_nodes)
    cp_path: Path = ("spec", "controlPlane", "nodes")
    for node in nodes:
        pool = pools.get(node.name)
        if pool is not None:
            where: Path = (*pool.path, "nodes") if pool.named else pool.path
            yield from _labels(cluster, node, pool.labels, f"of pool {pool.name}", where)
            yield from _taints(cluster, node, pool.taints, f"of pool {pool.name}", where)
            yield from _shape(cluster, node, pool)
        elif node.name in control_plane:
            yield from _labels(cluster, node, {}, "of the control plane", cp_path)
            yield from _taints(cluster, node, (cluster.control_plane_taint,), "of the control plane", cp_path)
        elif _gpu_node(cluster, node):
            yield _unmanaged(cluster, node)
    present = {n.name for n in nodes}
    named = [(n, f"pool {p.name}", (*p.path, "nodes")) for p in cluster.pools if p.named for n in p.nodes]
    for name, owner, path in [*named, *((n, "the control plane", cp_path) for n in cluster.control_plane_nodes)]:
        if name not in present:
            d = diag(
                "node-missing",
                f"Node {name}: {owner} names it, the cluster has no such node",
                path,
                hint=f"join node {name} to the cluster (then run the build's nodes/apply.sh), or remove it from "
                f"{owner} in the policy",
                subject=ObjectRef("v1", "Node", None, name),
            )
            yield replace(d, severity=Severity.ERROR) if strict else d


def _under_domain(cluster: Cluster, key: str) -> bool:
    return key.startswith(cluster.keys.domain + "/")


def _labels(cluster: Cluster, node: Node, wanted: Mapping[str, str], owner: str, path: Path) -> Iterator[Diagnostic]:
    wrong = [(k, v) for k, v in wanted.items() if node.labels.get(k) != v]
    stale = sorted(k for k in node.labels if _under_domain(cluster, k) and k not in wanted)
    if not wrong and not stale:
        return
    said = [
        f"lacks {k}={v}" if k not in node.labels else f"has {k}={node.labels[k]}, the policy says {v}" for k, v in wrong
    ]
    said += [f"carries {k}={node.labels[k]}, which its pool does not set" for k in stale]
    command = " ".join([*(f"{k}={v}" for k, v in wrong), *(f"{k}-" for k in stale)])
    overwrite = " --overwrite" if any(k in node.labels for k, _ in wrong) else ""
    yield diag(
        "node-labels",
        f"Node {node.name} {owner}: {'; '.join(said)}",
        path,
        hint=f"run `kubectl label node {node.name} {command}{overwrite}` (the build's nodes/apply.sh does the same)",
        subject=node.ref,
    )


def _taints(cluster: Cluster, node: Node, wanted: Iterable[Taint], owner: str, path: Path) -> Iterator[Diagnostic]:
    wanted = tuple(wanted)
    missing = [t for t in wanted if t not in node.taints]
    stale = [t for t in node.taints if _under_domain(cluster, t.key) and t not in wanted]
    if not missing and not stale:
        return
    said = [f"lacks taint {t}" for t in missing] + [f"carries taint {t}, which it should not" for t in stale]
    command = " ".join([*(str(t) for t in missing), *(f"{t}-" for t in stale)])
    yield diag(
        "node-taints",
        f"Node {node.name} {owner}: {'; '.join(said)}",
        path,
        hint=f"run `kubectl taint node {node.name} {command}` (the build's nodes/apply.sh does the same)",
        subject=node.ref,
    )


def _count(value: str | None) -> Quantity | None:
    try:
        return Quantity.from_json(value) if value is not None else Quantity.from_value(0)
    except (QuantityError, TypeError):
        return None


def _shape(cluster: Cluster, node: Node, pool: Pool) -> Iterator[Diagnostic]:
    said = []
    for resource in cluster.accelerators:  # as the build counts them: MIG devices, time-slicing replicas
        wanted = devices_per_node(pool, resource)
        if not wanted and resource != pool.resource:
            continue
        have = {field: _count(getattr(node, field).get(resource)) for field in ("capacity", "allocatable")}
        if any(q != Quantity.from_value(wanted) for q in have.values()):
            figures = ", ".join(f"{field} {node_value(getattr(node, field), resource)}" for field in have)
            said.append(f"reports {resource} {figures}, the pool declares {wanted} per node")
    product = node.labels.get(pool.product_key)
    if pool.discovered_product and product is not None and product != pool.product:
        said.append(f"GPU Feature Discovery labels it {pool.product_key}={product}, the pool declares {pool.product}")
    if said:
        yield diag(
            "node-shape",
            f"Node {node.name} of pool {pool.name}: {'; '.join(said)}",
            (*pool.path, "gpu"),
            hint=f"check the node's GPUs and device plugin (`kubectl describe node {node.name}`), or move it to "
            "a pool of its shape in the policy",
            subject=node.ref,
        )


def node_value(values: Mapping[str, str], resource: str) -> str:
    return str(values[resource]) if resource in values else "none"


def _gpu_node(cluster: Cluster, node: Node) -> bool:
    """A GPU resource in its capacity, or a vendor's feature discovery labels."""
    resources = {*cluster.accelerators, *(v.resource for v in VENDORS.values())}
    discovered = {MIG_CONFIG, *(v.product_label for v in VENDORS.values() if v.product_label)}
    return any(r in node.capacity and _count(node.capacity[r]) != Quantity.from_value(0) for r in resources) or any(
        k in node.labels for k in discovered
    )


def _unmanaged(cluster: Cluster, node: Node) -> Diagnostic:
    product = next((node.labels[v.product_label] for v in VENDORS.values() if v.product_label in node.labels), None)
    what = f" ({product})" if product else ""
    return diag(
        "unmanaged-node",
        f"Node {node.name}: a GPU node{what} in no pool of the policy, nothing keeps other pods off it",
        ("spec", "nodePools"),
        hint=f"list {node.name} in the nodes of a pool of its GPUs in the policy, build, and run the build's "
        f"nodes/apply.sh; or take it out of the cluster (`kubectl delete node {node.name}`)",
        subject=node.ref,
    )

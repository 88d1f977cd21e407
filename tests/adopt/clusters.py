"""The cluster a build describes, as a kubectl dump: what the recorded dumps of
`$POLICYC_SHARED/testdata/cluster-dumps` hold (their README, "How they were recorded"), made without a server: every
synced object of the build, and one Node per node of `nodes/plan.json` with the labels and taints its node script
sets; capacity and allocatable from the pool (cpu and memory 128 and 1Ti where the pool states none, pods 110, the
GPU resource: the pool's GPUs, its MIG devices or its shares of cards; its RDMA devices), and the labels GPU Feature
Discovery publishes where it runs (product; count, the cards, on pools not cut into MIG devices)."""

from __future__ import annotations

import json
from pathlib import Path

from policyc.compiler import Compilation
from policyc.gpu.accelerators import VENDORS


def synced_objects(build: Compilation) -> dict[tuple[str, str, str | None, str], dict]:
    """(apiVersion, kind, namespace, name) -> object, for every object Argo CD applies."""
    out = {}
    for artifact in build.artifacts:
        if artifact.synced:
            for manifest in artifact.manifests:
                obj, metadata = manifest.obj, manifest.obj["metadata"]
                out[(obj["apiVersion"], obj["kind"], metadata.get("namespace"), metadata["name"])] = obj
    return out


def nodes(build: Compilation) -> list[dict]:
    plan = json.loads(next(a.text for a in build.artifacts if a.path == "nodes/plan.json"))
    pools = {p.name: p for p in build.cluster.pools}
    out = []
    for entry in plan.get("pools", []):
        pool = pools[entry["name"]]
        shares = pool.sharing[1] if pool.sharing else 1
        capacity = {
            "cpu": str(pool.allocatable.get("cpu", "128")),
            "memory": str(pool.allocatable.get("memory", "1Ti")),
            "pods": "110",
        }
        if entry["gpuResource"]:  # none for a DRA tier's pool: its devices are claimed, not counted as a resource
            capacity[entry["gpuResource"]] = str(pool.gpus_per_node)  # MIG devices or shares, where cards are split
        if pool.rdma_resource:  # the RDMA device plugin's devices
            capacity[pool.rdma_resource] = str(pool.allocatable[pool.rdma_resource])
        labels = dict(entry["labels"])
        vendor = VENDORS.get(entry.get("gpuVendor") or "")
        if entry["gpuFeatureDiscovery"] and vendor is not None and vendor.product_label:
            labels.setdefault(vendor.product_label, entry["gpuProduct"])
            if vendor.count_label and pool.mig is None:
                labels.setdefault(vendor.count_label, str(pool.gpus_per_node // shares))  # the cards
        for name in entry.get("nodes", ()):  # a pool sized by count has no nodes until its provisioner makes them
            out.append(_node(name, {**labels, "kubernetes.io/hostname": name}, entry["taints"], capacity))
    control = plan.get("controlPlane") or {}
    for name in control.get("nodes", []):
        out.append(_node(name, {"kubernetes.io/hostname": name}, control["taints"], {"cpu": "16", "memory": "64Gi"}))
    return out


def _node(name: str, labels: dict, taints: list[dict], capacity: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def write_dump(build: Compilation, path: Path) -> Path:
    """The build's cluster as `kubectl get ... -A -o json` prints it."""
    items = [*synced_objects(build).values(), *nodes(build)]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path

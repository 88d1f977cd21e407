"""Slurm partitions from the pools that name one (`nodePools[].slurm`), for Slurm 22.05 and later (`policyc.gpu.slurm`).

`spec.slurm.operator: none` (slurmd runs on the nodes themselves):

- `slurm/slurm.conf`: a fragment for the site's slurm.conf to `include` (which keeps ClusterName, SlurmctldHost,
  `GresTypes=gpu` and the rest): a `NodeName` line per pool (CPUs and RealMemory from its allocatable, rounded down,
  so that no node registers with less than configured and is set DOWN; its GPUs as `Gres=gpu:<type>:<count>`; the
  pool name as a feature; `State=CLOUD`: a node is in service once its slurmd registers, and slurmctld resolves no
  address before) and a `PartitionName` line per partition (its pools' nodes, Default, MaxTime, PriorityTier from
  its priority class, `State=UP`).
- `slurm/gres.conf`: the GPUs of each pool as NVIDIA's device files (`File=/dev/nvidia[0-7]`), the whole file, read
  by slurmd on each node (and by slurmctld).

Neither is a Kubernetes object: Argo CD does not apply them.

`spec.slurm.operator: slinky` (Slinky's slurm-operator runs slurmd in pods, and writes slurm.conf itself): a
`NodeSet` (`slinky.slurm.net/v1beta1`) per partition, named after it, in the Controller's namespace, in `slinky/`.
Slinky makes one partition per NodeSet, named after the NodeSet, with the NodeSet as its nodes and
`spec.partition.config` as the rest of its line; the checks keep a partition to one pool there (PC469). Its pods
are selected by the pool label and tolerate the pool's taints; slurmd requests every GPU the node advertises, so that
Kubernetes hands them to Slurm (Slinky's documented set-up), and `extraConf` gives the node its `Gres`. A Slurm-only
pool runs one pod on each of its nodes (`scalingMode: DaemonSet`); a shared pool starts with one per node
(`StatefulSet`, `replicas`), which can be scaled down to lend nodes, and their GPUs, to Kubernetes workloads.
"""

from __future__ import annotations

import math

from policyc.artifacts import Artifact, Manifest
from policyc.diagnostics import Path
from policyc.gpu import slurm
from policyc.ir import Cluster, Pool, SlurmPartition, slurm_partitions
from policyc.k8s.objects import metadata
from policyc.output.write import header

API_VERSION = "slinky.slurm.net/v1beta1"


def node_line(p: Pool) -> str:
    """The pool's `NodeName` line."""
    assert p.slurm is not None
    cpus = math.floor(p.allocatable["cpu"].value)
    memory = math.floor(p.allocatable["memory"].value / slurm.MEBIBYTE)
    gres = f" Gres=gpu:{p.slurm.gres_type}:{p.slurm.cards}" if p.slurm.cards else ""
    return f"NodeName={slurm.hostlist(p.nodes)} CPUs={cpus} RealMemory={memory}{gres} Features={p.name} State=CLOUD"


def partition_settings(cluster: Cluster, part: SlurmPartition) -> str:
    """What a `PartitionName` line says besides its name and nodes."""
    s = part.settings
    values = {c.name: c.value for c in cluster.priority_classes}
    words = [f"Default={'YES' if s.default else 'NO'}", f"MaxTime={slurm.time_text(s.max_time)}"]
    if s.priority_class in values:
        words.append(f"PriorityTier={slurm.priority_tier(values[s.priority_class])}")
    return " ".join([*words, "State=UP"])


def partition_line(cluster: Cluster, part: SlurmPartition) -> str:
    return f"PartitionName={part.name} Nodes={slurm.hostlist(part.nodes)} {partition_settings(cluster, part)}"


def gres_line(p: Pool) -> str:
    assert p.slurm is not None
    files = slurm.device_files(p.slurm.cards)
    return f"NodeName={slurm.hostlist(p.nodes)} Name=gpu Type={p.slurm.gres_type} File={files}"


def _sources(cluster: Cluster, pools: list[Pool]) -> tuple[Path, ...]:
    classes = {p.slurm.priority_class for p in pools if p.slurm}
    return (*(p.path for p in pools), *(c.path for c in cluster.priority_classes if c.name in classes))


def emit(cluster: Cluster) -> list[Artifact]:
    settings, parts = cluster.slurm, slurm_partitions(cluster)
    if settings is None or not parts:  # spec.slurm without a partition: nothing to write (PC493 says so)
        return []
    if settings.operator == "slinky":
        return [_node_sets(cluster, settings)]
    pools = [p for part in parts for p in part.pools]
    top = header(cluster.name, cluster.source)
    conf = (
        top + "# slurm.conf lines (Slurm 22.05 and later) for the policy's partitions: include this file from your\n"
        "# slurm.conf, which sets ClusterName, SlurmctldHost and GresTypes=gpu. CPUs and RealMemory (MiB) are each\n"
        "# pool's allocatable; State=CLOUD: a node is in service once its slurmd registers.\n"
        + "".join(f"{node_line(p)}\n" for p in sorted(pools, key=lambda p: p.name))
        + "".join(f"{partition_line(cluster, part)}\n" for part in parts)
    )
    out = [Artifact("slurm/slurm.conf", text=conf, sources=_sources(cluster, pools))]
    with_gpus = sorted((p for p in pools if p.slurm and p.slurm.cards), key=lambda p: p.name)
    if with_gpus:
        text = top + "# gres.conf (Slurm 22.05 and later) for the policy's partitions: the GPUs of each pool's nodes.\n"
        text += "".join(f"{gres_line(p)}\n" for p in with_gpus)
        out.append(Artifact("slurm/gres.conf", text=text, sources=tuple(p.path for p in with_gpus)))
    return out


def node_set(cluster: Cluster, settings: slurm.SlurmSettings, part: SlurmPartition) -> dict:
    """The NodeSet of a partition of one pool."""
    p = part.pools[0]
    assert p.slurm is not None
    tolerations = [
        {"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
        if t.value
        else {"key": t.key, "operator": "Exists", "effect": t.effect}
        for t in p.taints
    ]
    pod: dict = {"nodeSelector": {cluster.keys.pool: p.name}, "tolerations": tolerations}
    if p.slurm.priority_class is not None:
        pod["priorityClassName"] = p.slurm.priority_class
    spec: dict = {
        "controllerRef": {"name": settings.controller},
        "partition": {"enabled": True, "config": partition_settings(cluster, part)},
        "scalingMode": "DaemonSet",
        "template": {"spec": pod},
    }
    if p.slurm.shared:  # one pod per node to start with; fewer lend nodes to Kubernetes (Slinky keeps one per node)
        spec |= {"scalingMode": "StatefulSet", "replicas": len(p.nodes)}
    if p.slurm.cards and p.resource:
        gpus = {p.resource: str(p.gpus_per_node)}
        spec["slurmd"] = {"resources": {"limits": gpus, "requests": gpus}}
        spec["extraConf"] = f"Gres=gpu:{p.slurm.gres_type}:{p.slurm.cards}"
    return {
        "apiVersion": API_VERSION,
        "kind": "NodeSet",
        "metadata": metadata(part.name, cluster.name, namespace=settings.namespace),
        "spec": dict(sorted(spec.items())),
    }


def _node_sets(cluster: Cluster, settings: slurm.SlurmSettings) -> Artifact:
    manifests = tuple(
        Manifest(
            node_set(cluster, settings, part), (*_sources(cluster, list(part.pools)), *filter(None, [settings.path]))
        )
        for part in slurm_partitions(cluster)
    )
    return Artifact("slinky/nodesets.yaml", manifests, synced=True)

"""The sized provisioner's objects: a ConfigMap per pool, standing for a node-making object."""

from __future__ import annotations

from policyc.artifacts import Artifact, Manifest
from policyc.ir import Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.provisioners import chooses_no_labels

NAME = "sized"
REFERENCES: tuple[Reference, ...] = ()


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    settings = cluster.provisioning[NAME]
    manifests = tuple(
        Manifest(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"sized-{p.name}", "namespace": "default"},
                "data": {"class": settings.class_name, "min": str(p.min_nodes), "max": str(p.max_nodes)},
            },
            (p.path,),
        )
        for p in pools
    )
    return [Artifact("sized/pools.yaml", manifests)]


def describe(cluster: Cluster, pool: Pool) -> str:
    return f"sized/pools.yaml ConfigMap sized-{pool.name}"


chosen_labels = chooses_no_labels

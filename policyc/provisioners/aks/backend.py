"""The AKS provisioner's output: `terraform/aks-node-pools.tf.json`, each pool's size and fields for the user's
`azurerm_kubernetes_cluster_node_pool` (`policyc.provisioners.terraform`)."""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.ir import Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.provisioners import chooses_no_labels, terraform

NAME = "aks"
REFERENCES: tuple[Reference, ...] = ()
FIELDS_TYPE = "node_labels = map(string), node_taints = list(string)"
"""The Terraform type of `node_pool`'s fields."""


def node_pool(pool: Pool) -> dict:
    """The pool's node-pool fields: node_labels, node_taints (each `key=value:Effect`, or `key:Effect`)."""
    return {"node_labels": dict(pool.labels), "node_taints": [str(t) for t in pool.taints]}


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    return [terraform.variables(cluster, pools, NAME, node_pool, FIELDS_TYPE)]


def describe(cluster: Cluster, pool: Pool) -> str:
    return terraform.describe(cluster, NAME, pool)


chosen_labels = chooses_no_labels

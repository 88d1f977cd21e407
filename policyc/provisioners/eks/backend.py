"""The EKS provisioner's output: `terraform/eks-node-pools.tf.json`, each pool's size and fields for the user's
`aws_eks_node_group` (`policyc.provisioners.terraform`)."""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.ir import Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.provisioners import chooses_no_labels, terraform

NAME = "eks"
REFERENCES: tuple[Reference, ...] = ()
FIELDS_TYPE = f"labels = map(string), taint = {terraform.TAINT_TYPE}"
"""The Terraform type of `node_group`'s fields."""


def node_group(pool: Pool) -> dict:
    """The pool's node-group fields: labels, taint."""
    return {"labels": dict(pool.labels), "taint": terraform.upper_taints(pool)}


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    return [terraform.variables(cluster, pools, NAME, node_group, FIELDS_TYPE)]


def describe(cluster: Cluster, pool: Pool) -> str:
    return terraform.describe(cluster, NAME, pool)


chosen_labels = chooses_no_labels

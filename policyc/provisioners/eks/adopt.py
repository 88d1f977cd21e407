"""The EKS provisioner on a running cluster, for `policyc import`: its node groups are Terraform's
(`terraform/eks-node-pools.tf.json`), outside the Argo CD tree; the nodes they have made are read as pools of named
nodes."""

from __future__ import annotations

from policyc.provisioners import reads_no_pools

UNSEEN = (
    "its node groups and their sizes: "
    "Terraform makes them (terraform/eks-node-pools.tf.json), not the cluster; the nodes they made are read by name"
)
read_pools = reads_no_pools

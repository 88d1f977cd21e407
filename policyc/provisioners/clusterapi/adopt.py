"""The Cluster API provisioner on a running cluster, for `policyc import`: its fragments (`clusterapi/pools.yaml`)
go into MachineDeployments on the management cluster, not this one; the nodes they have made are read as pools of
named nodes."""

from __future__ import annotations

from policyc.provisioners import reads_no_pools

UNSEEN = (
    "its MachineDeployments and their sizes: "
    "they are on the management cluster (clusterapi/pools.yaml is merged there); the nodes they made are read by name"
)
read_pools = reads_no_pools

"""The static provisioner on a running cluster, for `policyc import`: its pools are the cluster's nodes by name,
which the import reads from the nodes (and their NodeFeatureRules, which match the node names); nothing to read
here."""

from __future__ import annotations

from policyc.provisioners import reads_no_pools

UNSEEN = "nothing: its pools are the cluster's nodes, read by name"
read_pools = reads_no_pools

"""The static provisioner: pools of nodes listed by name (`nodes`), as they always were in policyc.

Its nodes get their pool's labels and taints two ways:

- `nodes/apply.sh` (the shared node script, `policyc.backends.nodes`), one `kubectl` call per node, run by hand;
- a Node Feature Discovery NodeFeatureRule per pool (`nfd/static-pools.yaml`, synced by Argo CD), whose rule matches
  the pool's node names (the `system.name` feature's `nodename`, `InRegexp` with an anchored regex that matches
  exactly the names of the pool) and gives them the pool's labels and taints, so that the labels follow every change
  of the policy and a node that joins later under one of the names gets them without the script. Keys NFD refuses
  to set (any under kubernetes.io but feature.node.kubernetes.io, profile.node.kubernetes.io and their subdomains;
  unprefixed keys, which it would put under feature.node.kubernetes.io) stay with the script (`rules` says where).
  `spec.provisioning.static.nodeFeatureRules: false` leaves the rules out, for a cluster without NFD.

A node of a static pool registers with policyc's registration taint (its kubelet's `registerWithTaints`,
`nodes/kubelet-config.yaml`) and keeps it, closed to every pod but the node agents, until `nodes/release.sh` finds
it carrying its pool's label and every taint of its pool (set by the rule or by the script) and removes it.
"""

"""The nfd provisioner: pools matched by their hardware, not their names. Node Feature Discovery (NFD) gives a node
the labels and taints of the pool whose hardware it has: a NodeFeatureRule per pool (`nfd/pools.yaml`, synced by Argo
CD) whose one rule matches the `pci.device` feature (the PCI vendor of the pool's accelerators, their device IDs and
class, as the policy states them or as policyc knows them for the vendor) and any further terms the pool states.

Its pools are pools by size (`count`, or `minNodes` and `maxNodes`): nothing names their nodes. A node registers with
policyc's registration taint (NFD labels a node only after its worker has run there) and keeps it until
`nodes/release.sh` finds it carrying its pool's label and taints.

NFD matches a term when any one device of the node matches it, so it cannot count a node's GPUs: two pools of one
device that differ only in their GPU count are an overlap (`rules`), as are any two pools whose matches nothing tells
apart, since a node would get both pools' labels.
"""

"""The Karpenter provisioner: pools by size whose nodes Karpenter makes, one `karpenter.sh/v1` NodePool per pool
(`karpenter/nodepools.yaml`, synced by Argo CD before anything that makes pods).

Each NodePool carries the pool's labels as its template's labels and the pool's taints as its taints, so every node
Karpenter makes for it registers with them (Karpenter writes them into the node's kubelet configuration and onto the
Node; until it has, the node carries Karpenter's own `karpenter.sh/unregistered:NoExecute`): no node of the pool is
ever open to every pod, and no registration taint or release script is needed. Its requirements say which instances
(instance types, or the GPU name and count Karpenter labels EC2 instances with), which capacity (on-demand, spot,
reserved) and which zones; its limits stop it at the pool's most nodes; its disruption follows the pool's usage
(`backend.disruption`); its nodeClassRef names the node class the cluster's owners write (an EC2NodeClass on EKS).

`rules` refuses what the NodePool CRD accepts but Karpenter refuses, and what would make Karpenter never make a node
for a workload (a label a workload selects on that no NodePool of its pools gives).
"""

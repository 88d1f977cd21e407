"""The EKS provisioner: pools that are EKS managed node groups (`aws_eks_node_group`), which the user's Terraform
makes. policyc writes `terraform/eks-node-pools.tf.json` (`policyc.provisioners.terraform`): per pool, its size and
the node group's `labels` and `taint` (effects `NO_SCHEDULE`, `NO_EXECUTE`, `PREFER_NO_SCHEDULE`). EKS gives a node
its group's labels and taints as it creates it. Its limits are rules: a label's key 1 to 63 characters in total
(prefix included), its value 1 to 63; at most 50 taints per node group. (eksctl and Karpenter spell effects as
Kubernetes does; this is the EKS API's and Terraform's spelling.)"""

"""The AKS provisioner: pools that are AKS node pools (`azurerm_kubernetes_cluster_node_pool`), which the user's
Terraform makes. policyc writes `terraform/aks-node-pools.tf.json` (`policyc.provisioners.terraform`): per pool, its
size and the node pool's `node_labels` and `node_taints`, each taint one string as Kubernetes writes it
(`key=value:NoSchedule`, `key:NoSchedule` without a value). AKS gives a node its pool's labels and taints as it
creates it; it does not taint GPU nodes by itself, so a GPU pool's taints are all policyc's."""

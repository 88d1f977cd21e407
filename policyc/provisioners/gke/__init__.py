"""The GKE provisioner: pools that are GKE node pools (`google_container_node_pool`), which the user's Terraform
makes. policyc writes `terraform/gke-node-pools.tf.json` (`policyc.provisioners.terraform`): per pool, its size and
its `node_config` fields `labels`, `taint` (effects `NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE`) and, where
the pool names its accelerator type, `guest_accelerator` (type, and the pool's cards per node as count). An NVIDIA
pool's labels also turn GKE's own driver and device plugin off (`gke-no-default-nvidia-gpu-device-plugin=true`):
NVIDIA's GPU Operator, which policyc configures, brings its own. GKE gives a node its pool's labels and taints as it
creates it, and reserves label keys under `kubernetes.io/` and `k8s.io/`."""

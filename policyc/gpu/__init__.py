"""What policyc knows of a shared GPU cluster beyond Kubernetes: accelerator vendors and their labels
(`accelerators`), NVIDIA MIG profiles (`mig`), Dynamic Resource Allocation of GPUs (`dra`), Slurm's formats on GPU
pools (`slurm`), and the DCGM exporter's metrics with a scan of PromQL for the GPU alerts (`promql`).

Facts and formats only: nothing here reads the policy or the cluster IR.
"""

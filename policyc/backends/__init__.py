"""Backends: pure functions from the cluster IR to artifacts (files to write). No I/O here.

The shared emitters (`kubernetes`, `nodes`, `node_agents`, `gpu_operator`, `monitoring`, `slurm`, `autoscaling`,
`workloads`) are the same for every scheduler and name none. Each scheduler backend is a package registered in
`policyc.registry`, with the faces `interface` describes; the pipeline passes the selected one to what needs it.
`policyc.emit` runs them all.
"""

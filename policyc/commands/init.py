"""`policyc init`: a commented starter policy that builds cleanly, and the schema editors validate it with."""

from __future__ import annotations

from policyc.registry import SCHEDULERS

SCHEMA_FILE = "policy.schema.json"

_STARTER = """\
# yaml-language-server: $schema=policy.schema.json
#
# A starter policy written by `policyc init`. Build it with:
#   policyc build cluster-policy.yaml -o manifests/
# Every field is described in policy.schema.json (editors with the YAML language server show the
# descriptions on hover). Replace the example names, nodes and numbers with your cluster's.
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata:
  name: my-cluster
spec:
  kubernetesVersion: "1.33"        # the output is verified against this version's API schemas
  domain: ai.example.com           # policyc owns the node labels and taints under this prefix
  gpuResource: nvidia.com/gpu      # what `gpu` means below

  # Control-plane nodes get a NoSchedule taint so that no GPU workload lands on them.
  controlPlane:
    nodes: ["cp-[1-3]"]

  # A tier is a set of GPU products, named as GPU Feature Discovery writes nvidia.com/gpu.product.
  gpuTiers:
    - name: large
      products: [NVIDIA-H100-80GB]
    - name: small
      products: [NVIDIA-L4]

  # Pools: nodes of one GPU product and one usage (training, inference, or hybrid: the overflow for both).
  nodePools:
    - name: train
      usage: training
      nodes: ["gpu-[01-08]"]       # a leading zero fixes the width: gpu-01 ... gpu-08
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "96", memory: 1000Gi}
    - name: serve
      usage: inference
      nodes: ["l4-[01-04]"]
      gpu: {product: NVIDIA-L4, count: 4}
      allocatable: {cpu: "48", memory: 192Gi}

  priorityClasses:
    - {name: serving, value: 2000, preemptionPolicy: Never, description: Online inference}
    - {name: training, value: 1000, globalDefault: true, description: Batch training}

  scheduler:
    backend: @BACKEND@
    placement: binpack             # binpack or spread, weighted on the GPU

  # Tenants: their namespaces, their scheduler queue, and a ResourceQuota per namespace.
  tenants:
    - name: research
      namespaces: [research]
      priorityClasses: [training]  # pods of other classes are refused in these namespaces
      queue: {weight: 2, guarantee: {gpu: 16}, capability: {gpu: 48}}
      quota: {requests: {cpu: "600", memory: 6000Gi, gpu: 48}}   # holds the 3 pretrain jobs its queue admits
    - name: product
      namespaces: [product]
      queue: {weight: 1, guarantee: {gpu: 8}, capability: {gpu: 16}}
      quota: {requests: {cpu: "100", memory: 400Gi, gpu: 16}}

  # Workload classes: each becomes templates/<name>.yaml with the right affinity and tolerations.
  workloads:
    - {name: pretrain, type: training, tenant: research, gpuTier: large, gpus: 8, replicas: 2}
    - {name: chat, type: inference, tenant: product, gpuTier: small, gpus: 1, replicas: 4, kind: Deployment,
       priorityClass: serving}
"""
_default, *_others = SCHEDULERS
STARTER = _STARTER.replace("@BACKEND@", f"{_default:<22}# or {' or '.join(_others)}: each has its own settings")
"""The starter policy, naming the registered scheduler backends."""


def team_file(team: str) -> str:
    """A commented team document (`policyc init --team NAME`): one tenant and one workload, for a policy directory."""
    return f"""\
# The file of team '{team}' in a policy directory (docs/teams.md), written by `policyc init --team {team}`.
# The team owns this file (CODEOWNERS); the platform team owns the platform file (kind ClusterPolicy), whose
# spec.teams says which priority classes and GPU tiers a team may use and the most quota it may take.
# Check it alone with: policyc validate THIS_FILE --platform POLICY_DIR; the whole policy: policyc validate POLICY_DIR
apiVersion: policyc.io/v1alpha1
kind: Tenant
metadata:
  name: {team}
spec:
  tenants:                      # the team's own tenants: names and namespaces no other team claims
    - name: {team}
      namespaces: [{team}]
      priorityClasses: [training]   # classes the platform grants teams (spec.teams.priorityClasses)
      queue: {{weight: 1, capability: {{gpu: 8}}}}
      quota: {{requests: {{cpu: "64", memory: 512Gi, gpu: 8}}}}   # within spec.teams.maxQuota
  workloads:                    # each runs as one of the tenants above
    - name: {team}-training
      type: training
      tenant: {team}
      gpuTier: large            # a tier the platform grants teams (spec.teams.gpuTiers)
      gpus: 8
      cpu: "32"                 # requests per pod, within the tenant's quota
      memory: 256Gi
      priorityClass: training
"""

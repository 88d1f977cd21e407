"""Generate a fleet for the benchmark: a policy directory of a platform file, TEAMS team files and CLUSTERS cluster
files (docs/teams.md, "A fleet of clusters").

    python bench/generate_fleet.py DIR [--teams 2000] [--clusters 5]

The platform has a training and an inference pool (the default scheduler backend); each team file declares one
tenant (its namespace, a queue capped at 16 GPUs and a quota of 16) and, for one team in ten, a training workload.
Each cluster has its own destination and Kubernetes version; the second and later clusters replace the training pool
with a smaller one and halve the quotas, every other one hosts half of the teams. Every cluster builds without
errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path

PLATFORM = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: fleet-bench}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: training, products: [NVIDIA-H100-80GB]}
    - {name: inference, products: [NVIDIA-L4]}
  nodePools:
    - {name: train, usage: training, nodes: ["gpu-[0001-4000]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
    - {name: serve, usage: inference, nodes: ["l4-[001-500]"], gpu: {product: NVIDIA-L4, count: 4},
       allocatable: {cpu: "48", memory: 192Gi}}
  priorityClasses:
    - {name: training, value: 100, globalDefault: true}
  teams: {priorityClasses: [training], gpuTiers: [training], maxQuota: {gpu: 16}}
"""

TEAM = """\
apiVersion: policyc.io/v1alpha1
kind: Tenant
metadata: {{name: team-{i:04d}}}
spec:
  tenants:
    - name: team-{i:04d}
      namespaces: [team-{i:04d}]
      priorityClasses: [training]
      queue: {{capability: {{gpu: 16}}}}
      quota: {{requests: {{gpu: 16}}}}
"""
WORKLOAD = """\
  workloads:
    - {{name: train-{i:04d}, type: training, tenant: team-{i:04d}, gpuTier: training, gpus: 8, priorityClass: training}}
"""

CLUSTER = """\
apiVersion: policyc.io/v1alpha1
kind: Cluster
metadata: {{name: cluster-{c}}}
spec:
  destination: {{server: "https://cluster-{c}.example.com:6443"}}
  kubernetesVersion: "1.3{version}"
"""
CLUSTER_OVERRIDES = """\
  nodePools:
    - {{name: train, usage: training, nodes: ["c{c}-gpu-[0001-2000]"], gpu: {{product: NVIDIA-H100-80GB, count: 8}},
       allocatable: {{cpu: "96", memory: 1000Gi}}}}
  quotaScale: 0.5
"""


def write(directory: Path, teams: int, clusters: int) -> None:
    (directory / "teams").mkdir(parents=True, exist_ok=True)
    (directory / "clusters").mkdir(exist_ok=True)
    (directory / "platform.yaml").write_text(PLATFORM)
    for i in range(teams):
        text = TEAM.format(i=i) + (WORKLOAD.format(i=i) if i % 10 == 0 else "")
        (directory / "teams" / f"team-{i:04d}.yaml").write_text(text)
    for c in range(clusters):
        text = CLUSTER.format(c=c, version=4 + c % 3)
        if c:
            text += CLUSTER_OVERRIDES.format(c=c)
        if c % 2:
            text += f"  hostedTeams: [{', '.join(f'team-{i:04d}' for i in range(0, teams, 2))}]\n"
        (directory / "clusters" / f"cluster-{c}.yaml").write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--teams", type=int, default=2000)
    parser.add_argument("--clusters", type=int, default=5)
    args = parser.parse_args()
    write(args.directory, args.teams, args.clusters)


if __name__ == "__main__":
    main()

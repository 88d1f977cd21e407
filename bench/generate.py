"""Generate a valid policy of a given size for the benchmark.

    python bench/generate.py --nodes 5000 --pools 100 --tenants 500 --workloads 200 [--backend kueue]
        [--provisioning NAME] > big.yaml

Pools cycle through three GPU tiers and the three usages; every tenant owns two namespaces, a queue with a
guarantee and a quota; workloads spread over tenants and tiers, half training, half inference. The
guarantees and quotas are sized to fit the cluster, so the policy compiles without errors.

The scheduler backend is volcano unless `backend` names another (`spec.scheduler: {backend: ...}`; the
volcano policy leaves it out, as it always has). Only volcano runs VolcanoJobs: for the others the training
workloads are batch/v1 Jobs and PyTorchJobs.

The pools are static, their nodes listed as ranges, unless `provisioning` names another node provisioner: its pools
are pools by size (`provisioning: NAME`, `count`), whose nodes are not listed, and which have no node-count cap;
Karpenter's name their instance type.
"""

from __future__ import annotations

import argparse
import sys

TIERS = (("high", "NVIDIA-H100-80GB"), ("mid", "NVIDIA-A40"), ("low", "NVIDIA-L4"))
INSTANCE_TYPES = {"NVIDIA-H100-80GB": "p5.48xlarge", "NVIDIA-A40": "g5.48xlarge", "NVIDIA-L4": "g6.48xlarge"}
"""A Karpenter pool's instance type, by its product (the benchmark's pools have 8 cards a node)."""
USAGES = ("training", "inference", "hybrid")


def policy(
    nodes: int, pools: int, tenants: int, workloads: int, backend: str = "volcano", provisioning: str = "static"
) -> str:
    per_pool = max(1, nodes // pools)
    width = len(str(per_pool))
    out = [
        "apiVersion: policyc.io/v1alpha1",
        "kind: ClusterPolicy",
        "metadata: {name: bench}",
        "spec:",
        '  kubernetesVersion: "1.33"',
        "  domain: ai.example.com",
        *([] if backend == "volcano" else [f"  scheduler: {{backend: {backend}}}"]),
        '  controlPlane: {nodes: ["cp-[1-3]"]}',
        "  gpuTiers:",
        *(f"    - {{name: {name}, products: [{product}]}}" for name, product in TIERS),
        "  priorityClasses:",
        "    - {name: serving, value: 2000, preemptionPolicy: Never}",
        "    - {name: prod, value: 1000}",
        # KAI runs priority >= 100 as non-preemptible, only within quota (PC804): batch stays preemptible there.
        f"    - {{name: batch, value: {50 if backend == 'kai' else 100}, globalDefault: true}}",
        "  nodePools:",
    ]
    for p in range(pools):
        tier, product = TIERS[p % 3]
        usage = USAGES[(p // 3) % 3]
        size = (
            [f'      nodes: ["p{p:03d}-n[{1:0{width}d}-{per_pool:0{width}d}]"]']
            if provisioning == "static"
            else [f"      provisioning: {provisioning}", f"      count: {per_pool}"]
        )
        if provisioning == "karpenter":
            size.append(f"      karpenter: {{instanceTypes: [{INSTANCE_TYPES[product]}]}}")
        out += [
            f"    - name: pool-{p:03d}",
            f"      usage: {usage}",
            *size,
            f"      gpu: {{product: {product}, count: 8, memory: 80Gi}}",
            '      allocatable: {cpu: "96", memory: 1000Gi}',
        ]
    gpus = pools * per_pool * 8
    guarantee = max(1, gpus // (tenants * 4))
    out.append("  tenants:")
    for t in range(tenants):
        weight = "" if backend == "yunikorn" else f"weight: {1 + t % 4}, "  # YuniKorn queues have none (a warning)
        out += [
            f"    - name: team-{t:04d}",
            f"      namespaces: [team-{t:04d}, team-{t:04d}-dev]",
            "      priorityClasses: [prod, batch, serving]",
            f"      queue: {{{weight}guarantee: {{gpu: {guarantee}}}, capability: {{gpu: {guarantee * 4}}}}}",
            f'      quota: {{requests: {{cpu: "256", memory: 2000Gi, gpu: {guarantee}}}, limits: {{cpu: "512"}}}}',
            "      limitRange: {defaultRequest: {cpu: 500m, memory: 1Gi}, default: {cpu: '1', memory: 2Gi}}",
        ]
    out.append("  workloads:")
    training = ("VolcanoJob" if backend == "volcano" else "Job", "PyTorchJob")
    kinds = {"training": training, "inference": ("Deployment",)}
    for w in range(workloads):
        kind_type = "training" if w % 2 == 0 else "inference"
        tier = TIERS[w % 3][0]
        kind = kinds[kind_type][(w // 2) % len(kinds[kind_type])]
        out.append(f"    - {{name: wl-{w:04d}, type: {kind_type}, tenant: team-{w % tenants:04d}, gpuTier: {tier}, "
                   f"gpus: {8 if kind_type == 'training' else 1}, replicas: 2, kind: {kind}}}")  # fmt: skip
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pools", type=int, default=100)
    parser.add_argument("--tenants", type=int, default=500)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--backend", default="volcano", help="scheduler backend (spec.scheduler.backend)")
    parser.add_argument(
        "--provisioning", default="static", help="node provisioner of the pools (pools by size but static)"
    )
    args = parser.parse_args()
    sys.stdout.write(policy(args.nodes, args.pools, args.tenants, args.workloads, args.backend, args.provisioning))


if __name__ == "__main__":
    main()

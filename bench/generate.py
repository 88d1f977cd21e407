"""Generate a valid policy of a given size for the benchmark.

    python bench/generate.py --nodes 5000 --pools 100 --tenants 500 --workloads 200 [--backend NAME]
        [--provisioning NAME] > big.yaml

Pools cycle through three GPU tiers and the three usages; every tenant owns two namespaces, a queue with a
guarantee and a quota; workloads spread over tenants and tiers, half training, half inference. The
guarantees and quotas are sized to fit the cluster, so the policy compiles without errors.

The scheduler backend is the default one (the registry's first, `policyc.registry.SCHEDULERS`) unless `backend`
names another (`spec.scheduler: {backend: ...}`; the default backend's policy leaves it out). What differs by backend
is asked of its settings (`policyc.registry.settings`), never decided by its name: the training workloads are of its
default training kind and PyTorchJobs. The rest is what every backend takes as it is: the tenants' queues state no
weight (a backend whose queues have none warns of one), and the batch priority class is below 100 (a backend runs
priority 100 and up as non-preemptible, only within quota).

The pools are static, their nodes listed as ranges, unless `provisioning` names another node provisioner: its pools
are pools by size (`provisioning: NAME`, `count`), whose nodes are not listed, and which have no node-count cap.
Karpenter pools state `maxNodes` instead (Karpenter keeps no node idle, so a count it would not keep warns), name
their GPU as Karpenter labels instances (`karpenter: {gpuName: h100}`), and a backend with an enqueue action runs
without it (it would hold back a job whose nodes do not exist yet, and Karpenter makes nodes only for pods that wait);
their tenants' queues have no guarantee, which would wait for scale-up.
"""

from __future__ import annotations

import argparse
import sys

from policyc.registry import SCHEDULERS, settings

TIERS = (("high", "NVIDIA-H100-80GB"), ("mid", "NVIDIA-A40"), ("low", "NVIDIA-L4"))
KARPENTER_GPU_NAMES = {"NVIDIA-H100-80GB": "h100", "NVIDIA-A40": "a40", "NVIDIA-L4": "l4"}
"""karpenter.k8s.aws/instance-gpu-name of each product."""
USAGES = ("training", "inference", "hybrid")


def policy(
    nodes: int, pools: int, tenants: int, workloads: int, backend: str | None = None, provisioning: str = "static"
) -> str:
    backend = backend or next(iter(SCHEDULERS))
    per_pool = max(1, nodes // pools)
    width = len(str(per_pool))
    out = [
        "apiVersion: policyc.io/v1alpha1",
        "kind: ClusterPolicy",
        "metadata: {name: bench}",
        "spec:",
        '  kubernetesVersion: "1.33"',
        "  domain: ai.example.com",
        *_scheduler(backend, provisioning),
        '  controlPlane: {nodes: ["cp-[1-3]"]}',
        "  gpuTiers:",
        *(f"    - {{name: {name}, products: [{product}]}}" for name, product in TIERS),
        "  priorityClasses:",
        "    - {name: serving, value: 2000, preemptionPolicy: Never}",
        "    - {name: prod, value: 1000}",
        "    - {name: batch, value: 50, globalDefault: true}",
        "  nodePools:",
    ]
    for p in range(pools):
        tier, product = TIERS[p % 3]
        usage = USAGES[(p // 3) % 3]
        size = (
            [f'      nodes: ["p{p:03d}-n[{1:0{width}d}-{per_pool:0{width}d}]"]']
            if provisioning == "static"
            else [
                f"      provisioning: {provisioning}",
                f"      {'maxNodes' if provisioning == 'karpenter' else 'count'}: {per_pool}",
                *_pool_settings(provisioning, product),
            ]
        )
        out += [
            f"    - name: pool-{p:03d}",
            f"      usage: {usage}",
            *size,
            f"      gpu: {{product: {product}, count: 8}}",
            '      allocatable: {cpu: "96", memory: 1000Gi}',
        ]
    gpus = pools * per_pool * 8
    guarantee = max(1, gpus // (tenants * 4))
    capability = guarantee * 2  # a namespace quota holds what the queue admits; two namespaces a tenant
    # Karpenter keeps no node idle: a guarantee would wait for scale-up (a warning), so its tenants have none.
    guaranteed = "" if provisioning == "karpenter" else f"guarantee: {{gpu: {guarantee}}}, "
    out.append("  tenants:")
    for t in range(tenants):
        out += [
            f"    - name: team-{t:04d}",
            f"      namespaces: [team-{t:04d}, team-{t:04d}-dev]",
            "      priorityClasses: [prod, batch, serving]",
            f"      queue: {{{guaranteed}capability: {{gpu: {capability}}}}}",
            f'      quota: {{requests: {{cpu: "{capability * 11}", memory: {capability * 115}Gi, gpu: {capability}}}, '
            f'limits: {{cpu: "{capability * 12}"}}}}',
            "      limitRange: {defaultRequest: {cpu: 500m, memory: 1Gi}, default: {cpu: '1', memory: 2Gi}}",
        ]
    out.append("  workloads:")
    training = (settings(backend).DEFAULT_KINDS["training"], "PyTorchJob")
    kinds = {"training": training, "inference": ("Deployment",)}
    for w in range(workloads):
        kind_type = "training" if w % 2 == 0 else "inference"
        tier = TIERS[w % 3][0]
        kind = kinds[kind_type][(w // 2) % len(kinds[kind_type])]
        out.append(f"    - {{name: wl-{w:04d}, type: {kind_type}, tenant: team-{w % tenants:04d}, gpuTier: {tier}, "
                   f"gpus: {8 if kind_type == 'training' else 1}, replicas: 2, kind: {kind}}}")  # fmt: skip
    return "\n".join(out) + "\n"


def _scheduler(backend: str, provisioning: str) -> list[str]:
    """`spec.scheduler`: none for the default backend, unless its actions must leave out enqueue (with Karpenter)."""
    actions = settings(backend).Settings.model_fields.get("actions")
    defaults = actions.get_default(call_default_factory=True) if actions is not None else []
    if provisioning == "karpenter" and "enqueue" in defaults:
        return [f"  scheduler: {{backend: {backend}, actions: [{', '.join(a for a in defaults if a != 'enqueue')}]}}"]
    return [] if backend == next(iter(SCHEDULERS)) else [f"  scheduler: {{backend: {backend}}}"]


def _pool_settings(provisioning: str, product: str) -> list[str]:
    return [f"      karpenter: {{gpuName: {KARPENTER_GPU_NAMES[product]}}}"] if provisioning == "karpenter" else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pools", type=int, default=100)
    parser.add_argument("--tenants", type=int, default=500)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--backend", help="scheduler backend (spec.scheduler.backend; default: the default backend)")
    parser.add_argument(
        "--provisioning", default="static", help="node provisioner of the pools (pools by size but static)"
    )
    args = parser.parse_args()
    sys.stdout.write(policy(args.nodes, args.pools, args.tenants, args.workloads, args.backend, args.provisioning))


if __name__ == "__main__":
    main()

"""What lets the cluster's own node agents run on nodes policyc taints.

Every GPU node carries `<domain>/node.usage=<usage>:NoSchedule` and `nvidia.com/gpu.product=<product>:NoSchedule`
(and a pool's own taints). The GPU Operator's DaemonSets tolerate only `nvidia.com/gpu` by default, so without more
a new node never gets its driver or device plugin and advertises no GPU. policyc writes, next to the node plan:

- `nodes/agent-tolerations.yaml`: the tolerations any node agent needs on the policy's nodes, for the DaemonSets
  of other operators (RDMA, network, monitoring, the scheduler's node agents);
- `nodes/gpu-operator-values.yaml`: Helm values for the GPU Operator chart giving that list to all its operands
  (`daemonsets.tolerations`) and to its node-feature-discovery worker. Helm replaces a list value whole, so the list
  keeps the chart's own default toleration of `nvidia.com/gpu`. Where the output holds NodeFeatureRules that taint
  nodes, they also turn on the taints of its node-feature-discovery master (`enableTaints`, off by default).

The list covers what a node carries as it registers too (policyc's registration taint): the agents set the node up
before it is released.

Neither is a Kubernetes object: they sit under `nodes/`, which Argo CD does not apply.
"""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.backends import gpu_operator
from policyc.backends.nodes import node_plan_sources
from policyc.gpu.accelerators import GFD_PRODUCT
from policyc.ir import Cluster
from policyc.output import yaml_emitter
from policyc.output.write import header

GPU_OPERATOR_DEFAULT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
"""The GPU Operator chart's default `daemonsets.tolerations` entry."""


def agent_tolerations(cluster: Cluster) -> list[dict]:
    """Tolerations of every taint the node plan puts on pool nodes: policyc's usage and product keys (any value),
    each pool's own taints exactly, what its nodes carry as they register, and the GPU Operator's default."""
    out = [
        GPU_OPERATOR_DEFAULT,
        {"key": cluster.keys.usage, "operator": "Exists", "effect": "NoSchedule"},
        {"key": GFD_PRODUCT, "operator": "Exists", "effect": "NoSchedule"},
        *({"key": key, "operator": "Exists", "effect": "NoSchedule"}
          for key in sorted({p.product_key for p in cluster.pools} - {GFD_PRODUCT})),
    ]  # fmt: skip
    covered = {(t["key"], t["effect"]) for t in out}
    own = {taint for p in cluster.pools for taint in (*p.taints, *p.registration_taints)
           if (taint.key, taint.effect) not in covered}  # fmt: skip
    for taint in sorted(own, key=lambda t: (t.key, t.value, t.effect)):
        entry = {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
        if not taint.value:
            entry = {"key": taint.key, "operator": "Exists", "effect": taint.effect}
        out.append(entry)
    return out


def emit(cluster: Cluster, *, nfd_taints: bool = False) -> list[Artifact]:
    """`nfd_taints`: the output holds NodeFeatureRules that taint nodes."""
    tolerations = agent_tolerations(cluster)
    top = header(cluster.name, cluster.source)
    nfd: dict = {"master": {"config": {"enableTaints": True}}} if nfd_taints else {}
    values: dict = {
        "daemonsets": {"tolerations": tolerations},
        "node-feature-discovery": {**nfd, "worker": {"tolerations": tolerations}},
    }
    values.update(gpu_operator.helm_values(cluster))  # shared or partitioned cards: policyc's configurations
    sources = (*node_plan_sources(cluster), *(a.path for a in cluster.node_agents if a.path != ("spec",)))
    return [
        Artifact(
            "nodes/agent-tolerations.yaml",
            sources=sources,
            text=top + "# Tolerations a DaemonSet needs to run on every node of the policy's pools: add them to its pod"
            "\n# template (or its chart's tolerations value).\n" + yaml_emitter.dump(tolerations),
        ),
        Artifact(
            "nodes/gpu-operator-values.yaml",
            sources=sources,
            text=top + "# Helm values for the NVIDIA GPU Operator chart, so that its operands run on the policy's GPU"
            " nodes:\n#   helm upgrade gpu-operator nvidia/gpu-operator -n gpu-operator --reuse-values"
            " -f nodes/gpu-operator-values.yaml\n" + yaml_emitter.dump(values),
        ),
    ]

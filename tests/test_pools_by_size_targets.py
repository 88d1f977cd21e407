"""Issue 26, "Done when": a policy that names no node proves placement, capacity and the fresh-node case, for each
target of pools by size. One policy, one pool of 1 to 4 nodes of 8 GPUs (8 to 32 GPUs; Karpenter's 0 to 4, it keeps
no node idle), the settings each target needs."""

from __future__ import annotations

import pytest

from policyc.proof import placement
from policyc.tenancy import contract
from policyc.tenancy.proof import fresh_node_landings
from tests.test_provisioning import _pod_of

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: sized}
spec:
  kubernetesVersion: "1.36"
  domain: DOMAIN
  scheduler: {backend: volcano, actions: [allocate, preempt, reclaim, backfill]}
  provisioning: {default: TARGET}
  gpuTiers:
    - {name: big, products: [NVIDIA-H100-80GB]}
  nodePools:
    - {name: h100, usage: training, SIZE, gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "128", memory: 1000Gi}EXTRA}
  tenants:
    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: GUARANTEE}}}
  workloads:
    - {name: train, type: training, tenant: ml, gpuTier: big, gpus: 8, cpu: "8", memory: 64Gi}
"""
NR = "ai.example.com.node-restriction.kubernetes.io"
TARGETS = {
    # target: (domain, size, the pool's own block, its GPUs at its fewest nodes)
    "karpenter": ("ai.example.com", "maxNodes: 4", ", karpenter: {gpuName: h100}", 0),
    "nfd": ("ai.example.com", "minNodes: 1, maxNodes: 4", ', nfd: {devices: ["2330"]}', 8),
    "clusterapi": (NR, "minNodes: 1, maxNodes: 4", "", 8),
    "gke": ("ai.example.com", "minNodes: 1, maxNodes: 4", "", 8),
    "eks": ("ai.example.com", "minNodes: 1, maxNodes: 4", "", 8),
    "aks": ("ai.example.com", "minNodes: 1, maxNodes: 4", "", 8),
}
CAPACITY = ("PC414", "meaning/guarantee-waits-for-scale-up")


def policy(target: str, guarantee: int) -> str:
    domain, size, extra, _ = TARGETS[target]
    text = POLICY.replace("DOMAIN", domain).replace("TARGET", target).replace("SIZE", size)
    return text.replace("EXTRA", extra).replace("GUARANTEE", str(guarantee))


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_capacity_counts_what_can_exist(compile_text, target: str) -> None:
    fewest = TARGETS[target][3]

    def capacity(guarantee: int) -> list[str]:
        return [d.code for d in compile_text(policy(target, guarantee)).report.diagnostics if d.code in CAPACITY]

    assert capacity(40) == ["PC414"]  # above the 4 nodes x 8 GPUs the pool can have
    assert capacity(32) == ["meaning/guarantee-waits-for-scale-up"]  # all of it, above its fewest nodes' 8 (or 0)
    assert capacity(fewest or 8) == ([] if fewest else ["meaning/guarantee-waits-for-scale-up"])


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_placement_and_the_fresh_node_are_proved_without_a_node_name(compile_text, target: str) -> None:
    result = compile_text(policy(target, 8))
    assert result.ok, [(d.code, d.message) for d in result.report.errors]
    cluster = result.cluster
    assert [p.nodes for p in cluster.pools] == [()]  # no node named
    # the training template lands on the pool's node template, as labelled, and on no fresh node (it requires the
    # pool's labels, which a node has not as it registers)
    pod = _pod_of(result, "train")
    assert {t for t, ok, _ in placement.placement_of(cluster, pod) if ok} == {"h100"}
    assert {t for t, ok, _ in placement.fresh_placement_of(cluster, pod) if ok} == set()
    fresh = {t.name: t for t in placement.fresh_targets(cluster)}
    node = fresh["h100 (registering)"].node
    assert node["metadata"]["labels"] == {}  # none of the policy's labels as it registers
    assert node["spec"]["taints"], "a fresh node of every target registers tainted"
    assert list(fresh_node_landings(cluster, contract.contracts(cluster, result.backend)["ml"])) == []

"""Pods sized from their nodes, and workloads that cannot fit: one row per rule, figures worked out by hand.

The pools of every policy below:
  big    training  4 nodes x 8 GPUs, 192 cpu, 1536Gi per node   (a pod of 8 GPUs fits once per node)
  small  hybrid    2 nodes x 4 GPUs,  48 cpu,  384Gi per node
"""

from __future__ import annotations

import pytest

from policyc.pods import pod_resources

BASE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: sizing}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  gpuTiers: [{name: high, products: [NVIDIA-H100-80GB, NVIDIA-H20]}]
  nodePools:
    - {name: big, usage: training, nodes: ["b-[1-4]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "192", memory: 1536Gi}}
    - {name: small, usage: hybrid, nodes: ["s-[1-2]"], gpu: {product: NVIDIA-H20, count: 4},
       allocatable: {cpu: "48", memory: 384Gi}}
  tenants:
    - {name: team, namespaces: [team], queue: {QUEUE}LIMITRANGE}
  workloads:
    - {name: job, type: training, tenant: team, gpuTier: high, WORKLOAD}
"""


def policy(workload: str, queue: str = "", limit_range: str = "") -> str:
    lr = f", limitRange: {{{limit_range}}}" if limit_range else ""
    return BASE.replace("QUEUE", queue).replace("LIMITRANGE", lr).replace("WORKLOAD", workload)


SIZED = [
    # 4 GPUs: 'big' gives 192 x 4/8 = 96 cpu, 'small' 48 x 4/4 = 48 cpu: the smaller share, 48, less a tenth = 43.2
    # -> 43 cpu; memory 384Gi -> 345.6Gi -> 345Gi. Limits (Burstable): memory = request, cpu = the whole share, 48.
    pytest.param("gpus: 4", {"cpu": "43", "memory": "345Gi"}, {"cpu": "48", "memory": "345Gi"}, id="smallest-share"),
    # 8 GPUs fit only on 'big' nodes ('small' has 4 a node, so its share does not count): 192 -> 172.8 -> 172 cpu;
    # 1536Gi -> 1382.4Gi -> 1382Gi.
    pytest.param("gpus: 8", {"cpu": "172", "memory": "1382Gi"}, {"cpu": "192", "memory": "1382Gi"}, id="eight-gpus"),
    # Guaranteed: limits equal the requests.
    pytest.param(
        "gpus: 4, qos: Guaranteed", {"cpu": "43", "memory": "345Gi"}, {"cpu": "43", "memory": "345Gi"}, id="guaranteed"
    ),
    # Stated requests are kept; the cpu limit is the whole share (48), the memory limit the request.
    pytest.param(
        "gpus: 4, cpu: '10', memory: 64Gi",
        {"cpu": "10", "memory": "64Gi"},
        {"cpu": "48", "memory": "64Gi"},
        id="stated-requests",
    ),
    # A stated request above the share keeps its own cpu limit no lower than the request.
    pytest.param(
        "gpus: 4, cpu: '60'",
        {"cpu": "60", "memory": "345Gi"},
        {"cpu": "60", "memory": "345Gi"},
        id="request-above-share",
    ),
    # Stated limits win.
    pytest.param(
        "gpus: 4, cpu: '10', limits: {cpu: '20', memory: 400Gi}",
        {"cpu": "10", "memory": "345Gi"},
        {"cpu": "20", "memory": "400Gi"},
        id="stated-limits",
    ),
]


@pytest.mark.parametrize(("workload", "requests", "limits"), SIZED)
def test_pods_are_sized_from_their_smallest_node_share(compile_text, workload, requests, limits) -> None:
    result = compile_text(policy(workload))
    assert result.ok, [d.message for d in result.report.diagnostics]
    [w] = result.cluster.workloads
    pods = pod_resources(result.cluster, w)
    assert {r: str(q) for r, q in pods.requests.items()} == {**requests, "nvidia.com/gpu": str(w.gpus)}
    assert {r: str(q) for r, q in pods.limits.items()} == {**limits, "nvidia.com/gpu": str(w.gpus)}


def test_sized_requests_stay_within_the_limit_range(compile_text) -> None:
    # 43 cpu sized, raised to the min of 50; 345Gi sized, lowered to the max of 100Gi (the limit too).
    result = compile_text(policy("gpus: 4", limit_range="min: {cpu: '50'}, max: {cpu: '64', memory: 100Gi}"))
    assert result.ok, [d.message for d in result.report.diagnostics]
    pods = pod_resources(result.cluster, result.cluster.workloads[0])
    assert (str(pods.requests["cpu"]), str(pods.requests["memory"])) == ("50", "100Gi")
    assert (str(pods.limits["cpu"]), str(pods.limits["memory"])) == ("50", "100Gi")


def test_small_shares_round_down_to_millicores_and_mebibytes(compile_text) -> None:
    text = policy("gpus: 1").replace('allocatable: {cpu: "48", memory: 384Gi}', "allocatable: {cpu: '2', memory: 3Gi}")
    result = compile_text(text)
    pods = pod_resources(result.cluster, result.cluster.workloads[0])
    # 'small': 2 x 1/4 = 0.5 cpu -> 450m; 3Gi / 4 = 768Mi -> 691.2Mi -> 691Mi.
    assert (str(pods.requests["cpu"]), str(pods.requests["memory"])) == ("450m", "691Mi")


FAILURES = [
    # 16 GPUs per pod; the nodes have 8 and 4.
    pytest.param(policy("gpus: 16"), "PC413", ("asks for 16 GPUs per pod", "at most 8 (big 8, small 4)"), id="gpus"),
    # 400 cpu per pod on nodes of 192 and 48.
    pytest.param(
        policy("gpus: 4, cpu: '400'"),
        "PC425",
        ("asks for 400 cpu per pod", "at most 192 allocatable (big 192, small 48)"),
        id="cpu-per-pod",
    ),
    # 8-GPU pods: 'big' holds 4 nodes x 1, 'small' (4 GPUs a node) none: 4 pods at most; 5 do not fit.
    pytest.param(
        policy("gpus: 8, replicas: 5"),
        "PC426",
        ("runs 5 pods at once", "hold at most 4 such pods (big 4 nodes x 1, small 2 nodes x 0)"),
        id="gang-on-pools",
    ),
    # 2-GPU pods with 100 cpu: 'big' fits 1 per node by cpu (192 / 100), 'small' none (48 cpu): 4 pods at most.
    pytest.param(policy("gpus: 2, cpu: '100', replicas: 5"), "PC426", ("hold at most 4 such pods",), id="gang-by-cpu"),
    # 4 pods x 8 GPUs = 32 > a capability of 16.
    pytest.param(
        policy("gpus: 8, replicas: 4", queue="capability: {gpu: 16}"),
        "PC427",
        ("needs 4 pods x 8 nvidia.com/gpu = 32 nvidia.com/gpu at once", "caps nvidia.com/gpu at 16"),
        id="gang-in-queue",
    ),
    # The queue caps cpu too: 4 pods x 43 cpu = 172 > 100.
    pytest.param(
        policy("gpus: 4, replicas: 4", queue="capability: {cpu: '100'}"),
        "PC427",
        ("4 pods x 43 cpu = 172 cpu", "caps cpu at 100"),
        id="gang-cpu-in-queue",
    ),
    pytest.param(
        policy("gpus: 4, cpu: '10', limits: {cpu: '5'}"),
        "PC429",
        ("limits cpu to 5 per pod, below its request of 10",),
        id="limit-below-request",
    ),
    pytest.param(
        policy("gpus: 4, cpu: '10', limits: {cpu: '20'}, qos: Guaranteed"),
        "PC429",
        ("asks for qos Guaranteed, but limits cpu to 20",),
        id="guaranteed-limit-differs",
    ),
    pytest.param(
        policy("gpus: 4").replace(", memory: 1536Gi", "").replace(", memory: 384Gi", ""),
        "PC428",
        ("states no memory request per pod", "no pool it can use ('big', 'small') states its allocatable memory"),
        id="unsized",
    ),
]


@pytest.mark.parametrize(("text", "code", "fragments"), FAILURES)
def test_workloads_that_cannot_fit(compile_text, text: str, code: str, fragments: tuple[str, ...]) -> None:
    result = compile_text(text)
    found = [d for d in result.report.diagnostics if d.code == code]
    assert len(found) == 1, [f"{d.code} {d.message}" for d in result.report.diagnostics]
    for fragment in fragments:
        assert fragment in found[0].message, found[0].message

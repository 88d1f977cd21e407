"""The distributed-training shape of a workload (issue 13's seed): RDMA devices from the pool's device plugin, a
memory-backed /dev/shm, NCCL's interface, host networking, one pod per node, one zone, a gang's minimum."""

from __future__ import annotations

import pytest

import policyc
from policyc.proof.placement import placement_of, workload_templates

SEED = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: llm-training}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: h100, products: [NVIDIA-H100-80GB]}
  nodePools:
    - name: h100-ib
      usage: training
      nodes: ["h100-[01-16]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
      rdma: {resource: rdma/ib, perNode: 8, interfaces: [ib0]}
    - name: h100-eth
      usage: training
      nodes: ["h100e-[01-04]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
  tenants:
    - name: llm
      namespaces: [llm]
      queue: {guarantee: {gpu: 72}}
  workloads:
    - name: llama-70b
      type: training
      tenant: llm
      gpuTier: h100
      gpus: 8
      replicas: 9
      kind: PyTorchJob
      rdma: 8
      hostNetwork: true
      shm: 16Gi
      onePerNode: true
"""
"""A 70B PyTorchJob: 1 master and 8 workers of 8 H100 each, RDMA over InfiniBand, NCCL on ib0, 16Gi of shared
memory, on a 16-node H100 pool with RDMA beside 4 H100 nodes without it."""


def _compile(text: str = SEED, backend: str | None = None):
    if backend:
        text = text.replace("  tenants:", f"  scheduler: {{backend: {backend}}}\n  tenants:", 1)
    return policyc.compile(text, name="seed.yaml")


@pytest.mark.parametrize("backend", ["volcano", "kueue", "kai"])
def test_the_70b_seed_compiles_verified_admitted_and_placed_for_every_backend(backend: str) -> None:
    comp = _compile(backend=backend)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]  # strict schemas, admission and placement proofs
    job = workload_templates(comp.artifacts)["llama-70b"]
    replicas = job["spec"]["pytorchReplicaSpecs"]
    assert (replicas["Master"]["replicas"], replicas["Worker"]["replicas"]) == (1, 8)
    for role in ("Master", "Worker"):
        spec = replicas[role]["template"]["spec"]
        (container,) = spec["containers"]
        for side in ("requests", "limits"):
            assert container["resources"][side]["nvidia.com/gpu"] == "8"
            assert container["resources"][side]["rdma/ib"] == "8"
        assert container["env"] == [{"name": "NCCL_SOCKET_IFNAME", "value": "ib0"}]
        assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
        assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
        assert spec["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]
        assert (spec["hostNetwork"], spec["dnsPolicy"]) == (True, "ClusterFirstWithHostNet")
        assert spec["affinity"]["podAntiAffinity"] == {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": "llama-70b"}},
                 "topologyKey": "kubernetes.io/hostname"}
            ]
        }  # fmt: skip
        # kube-scheduler's filters keep every pod on the RDMA pool, never on the H100 nodes without RDMA.
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": role, "namespace": "llm"}, "spec": spec}
        assert {t for t, admitted, _ in placement_of(comp.cluster, pod) if admitted} == {"h100-ib"}
    # One pod per node: the 9 pods need 9 distinct nodes of the 16 RDMA ones; the gang is all 9.
    assert job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] == 9


def test_one_pod_per_node_needs_as_many_nodes_as_pods() -> None:
    comp = _compile(SEED.replace("replicas: 9", "replicas: 17"))
    (d,) = [d for d in comp.report.diagnostics if d.severity == "error"]
    assert d.code == "PC426" and d.path == ("spec", "workloads", 0, "replicas")
    assert "at most 16 such pods (h100-ib 16 nodes x 1)" in d.message
    # 16 pods fit, one on each RDMA node.
    assert not _compile(SEED.replace("replicas: 9", "replicas: 16")).report.failed


def test_the_gang_minimum_reaches_every_backend() -> None:
    text = SEED.replace("      onePerNode: true\n", "      onePerNode: true\n      minMember: 5\n")
    assert _compile(text).ok
    job = workload_templates(_compile(text).artifacts)["llama-70b"]
    assert job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] == 5
    volcano = text.replace("kind: PyTorchJob", "kind: VolcanoJob")
    assert workload_templates(_compile(volcano).artifacts)["llama-70b"]["spec"]["minAvailable"] == 5
    kai = _compile(text.replace("kind: PyTorchJob", "kind: Job"), backend="kai")
    annotations = workload_templates(kai.artifacts)["llama-70b"]["metadata"]["annotations"]
    assert annotations["kai.scheduler/batch-min-member"] == "5"
    too_many = _compile(text.replace("minMember: 5", "minMember: 10"))
    assert [(d.code, d.path) for d in too_many.report.errors] == [("PC104", ("spec", "workloads", 0, "minMember"))]


def test_rdma_errors_are_located_at_the_workload() -> None:
    no_rdma = _compile(SEED.replace("      rdma: {resource: rdma/ib, perNode: 8, interfaces: [ib0]}\n", ""))
    assert [(d.code, d.path) for d in no_rdma.report.errors] == [("PC440", ("spec", "workloads", 0, "rdma"))]
    assert "(h100-eth, h100-ib have none)" in no_rdma.report.errors[0].message
    two = SEED.replace(
        '      allocatable: {cpu: "192", memory: 1800Gi}\n  tenants:',
        '      allocatable: {cpu: "192", memory: 1800Gi}\n      rdma: {resource: rdma/roce, perNode: 8}\n  tenants:',
    )
    assert [(d.code, d.path) for d in _compile(two).report.errors] == [("PC441", ("spec", "workloads", 0, "rdma"))]


def test_a_shared_memory_above_the_memory_limit_is_an_error() -> None:
    text = SEED.replace("      shm: 16Gi\n", "      shm: 2000Gi\n")
    assert [(d.code, d.path) for d in _compile(text).report.errors] == [("PC442", ("spec", "workloads", 0, "shm"))]


def test_one_zone_is_a_required_pod_affinity() -> None:
    comp = _compile(SEED.replace("      onePerNode: true\n", "      sameZone: true\n"))
    assert comp.ok
    spec = workload_templates(comp.artifacts)["llama-70b"]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == (
        "topology.kubernetes.io/zone"
    )
    assert "podAntiAffinity" not in spec["affinity"]


ELASTIC = SEED.replace(
    "      onePerNode: true\n", "      onePerNode: true\n      elastic: {minReplicas: 4, maxReplicas: 12}\n"
)


def test_an_elastic_pytorchjob_runs_workers_between_its_bounds() -> None:
    comp = _compile(ELASTIC)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    spec = workload_templates(comp.artifacts)["llama-70b"]["spec"]
    assert spec["elasticPolicy"] == {"rdzvBackend": "c10d", "minReplicas": 4, "maxReplicas": 12}
    assert list(spec["pytorchReplicaSpecs"]) == ["Worker"] and spec["pytorchReplicaSpecs"]["Worker"]["replicas"] == 9
    assert spec["runPolicy"]["schedulingPolicy"]["minAvailable"] == 4  # the gang is the minimum


def test_an_elastic_job_must_fit_its_maximum_and_keep_its_bounds() -> None:
    # 17 workers, one per node, on 16 RDMA nodes: located at maxReplicas.
    found = [(d.code, d.path) for d in _compile(ELASTIC.replace("maxReplicas: 12", "maxReplicas: 17")).report.errors]
    assert found == [("PC426", ("spec", "workloads", 0, "elastic", "maxReplicas"))]
    for text in (
        ELASTIC.replace("minReplicas: 4", "minReplicas: 10"),  # above replicas
        ELASTIC.replace("kind: PyTorchJob", "kind: Job"),  # not a PyTorchJob
        ELASTIC.replace("      onePerNode: true\n", "      onePerNode: true\n      minMember: 3\n"),  # two gangs
    ):
        assert [(d.code, d.path) for d in _compile(text).report.errors] == [
            ("PC104", ("spec", "workloads", 0, "elastic"))
        ], text

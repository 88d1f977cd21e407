"""Quotas per priority class (`quota.perPriorityClass`): a ResourceQuota scoped to one class in each of the tenant's
namespaces, within the tenant's total, enforced by the API server's ResourceQuota admission (the model in
`policyc.k8s.admission`, held to a real v1.36 server's verdicts by tests/k8s/test_admission_vectors.py)."""

from __future__ import annotations

import policyc
from policyc.k8s.admission import admit_pod
from policyc.k8s.quantity import Quantity
from policyc.proof.admitted import namespace_objects, priority_classes

SEED = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: hybrid}
spec:
  kubernetesVersion: "1.36"
  domain: gpu.example.org
  gpuTiers:
    - {name: h100, products: [NVIDIA-H100-80GB]}
  nodePools:
    - name: train
      usage: training
      nodes: ["gpu-[1-16]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
  priorityClasses:
    - {name: slurm-high-priority, value: 100000}
    - {name: batch, value: 100, globalDefault: true}
  tenants:
    - name: research
      namespaces: [research, research-slurm]
      queue: {guarantee: {gpu: 64}}
      quota:
        requests: {gpu: 128}
        perPriorityClass:
          slurm-high-priority: {gpu: 64}
  workloads:
    - {name: slurm-burst, type: training, tenant: research, gpuTier: h100, gpus: 8, replicas: 8,
       priorityClass: slurm-high-priority, kind: Job}
"""


def _compile(text: str = SEED):
    return policyc.compile(text, name="hybrid.yaml")


def _pod(gpus: int, priority_class: str | None, namespace: str = "research") -> dict:
    spec: dict = {
        "containers": [
            {"name": "c", "image": "registry.k8s.io/pause:3.10",
             "resources": {"requests": {"nvidia.com/gpu": str(gpus), "cpu": "1", "memory": "1Gi"},
                           "limits": {"nvidia.com/gpu": str(gpus), "cpu": "1", "memory": "1Gi"}}}
        ]
    }  # fmt: skip
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": namespace}, "spec": spec}


def test_the_seed_scenario_compiles_and_reserves_64_gpus_for_one_class_in_each_namespace() -> None:
    comp = _compile()
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    name = "tenant-priority-slurm-high-priority"
    scoped = [m.obj for a in comp.artifacts for m in a.manifests
              if m.obj["kind"] == "ResourceQuota" and m.obj["metadata"]["name"] == name]  # fmt: skip
    assert sorted(q["metadata"]["namespace"] for q in scoped) == ["research", "research-slurm"]
    for q in scoped:
        assert q["spec"] == {
            "hard": {"requests.nvidia.com/gpu": "64"},
            "scopeSelector": {
                "matchExpressions": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["slurm-high-priority"]}
                ]
            },
        }
    # The workload of that class takes all 64 at once: it fits, as the proof found (the build is ok).


def test_the_api_server_counts_only_that_class_against_it() -> None:
    comp = _compile()
    objects = namespace_objects(comp.artifacts)["research"]
    classes = priority_classes(comp.artifacts)

    def admitted(pod: dict, used: dict) -> bool:
        return admit_pod(pod, quotas=objects.quotas, priority_classes=classes, used=used).refusal is None

    full = {"tenant-priority-slurm-high-priority": {"requests.nvidia.com/gpu": Quantity.parse("64")}}
    # With the class's 64 GPUs in use, one more GPU of that class is refused ...
    assert not admitted(_pod(1, "slurm-high-priority"), full)
    # ... while the default class (batch) still has the rest of the tenant's 128.
    assert admitted(_pod(8, None), full)
    assert admitted(_pod(8, "batch"), full)
    assert admitted(_pod(8, "slurm-high-priority"), {})


def test_a_workload_of_the_class_beyond_its_quota_fails_the_proof() -> None:
    comp = _compile(SEED.replace("replicas: 8,", "replicas: 9,"))
    d = next(d for d in comp.report.diagnostics if d.code == "PC507")
    assert "tenant-priority-slurm-high-priority" in d.message and d.path[:3] == ("spec", "workloads", 0)


def test_located_errors_for_a_class_quota_above_the_total_an_unknown_class_and_a_forbidden_one() -> None:
    text = SEED.replace("slurm-high-priority: {gpu: 64}", "slurm-high-priority: {gpu: 256}\n          batchy: {gpu: 1}")
    found = {(d.code, d.path) for d in _compile(text).report.diagnostics}
    quota = ("spec", "tenants", 0, "quota", "perPriorityClass")
    assert ("PC439", (*quota, "slurm-high-priority", "gpu")) in found
    assert ("PC304", (*quota, "batchy")) in found
    text = SEED.replace(
        "      queue: {guarantee: {gpu: 64}}", "      priorityClasses: [batch]\n      queue: {guarantee: {gpu: 64}}"
    )
    text = text.replace("       priorityClass: slurm-high-priority, kind: Job}", "       kind: Job}")
    found = {(d.code, d.path) for d in _compile(text).report.diagnostics}
    assert ("PC311", (*quota, "slurm-high-priority")) in found, found


def test_gpus_per_class_must_be_whole() -> None:
    text = SEED.replace("slurm-high-priority: {gpu: 64}", "slurm-high-priority: {gpu: 1500m}")
    paths = {d.path for d in _compile(text).report.diagnostics if d.severity == "error"}
    assert ("spec", "tenants", 0, "quota", "perPriorityClass", "slurm-high-priority", "gpu") in paths

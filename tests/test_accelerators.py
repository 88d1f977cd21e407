"""Accelerator vendors per pool (gpu.vendor, gpu.resource), CPU-only pools and workloads, and what 'gpu' means in a
tenant's maps: the resources templates request, the labels and taints nodes get, and PC447-PC450 (and PC104 for
a GPU tier named 'cpu')."""

from __future__ import annotations

import json

import pytest

import policyc
from policyc.commands.explain import placement_rows
from policyc.compiler import Compilation

HEAD = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: acc}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
"""

NVIDIA_AND_AMD = (
    HEAD
    + """\
  gpuTiers:
    - {name: h100, products: [NVIDIA-H100-80GB]}
    - {name: mi300x, products: [AMD-Instinct-MI300X]}
  nodePools:
    - name: h100
      usage: training
      nodes: ["h100-[01-04]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
    - name: mi300x
      usage: training
      nodes: ["mi300x-[01-04]"]
      gpu: {vendor: amd, product: AMD-Instinct-MI300X, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
"""
)

AMD_ONLY = (
    HEAD
    + """\
  gpuTiers:
    - {name: mi300x, products: [AMD-Instinct-MI300X]}
  nodePools:
    - name: mi300x
      usage: training
      nodes: ["mi300x-[01-04]"]
      gpu: {vendor: amd, product: AMD-Instinct-MI300X, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
"""
)

H100_AND_CPU = (
    HEAD
    + """\
  gpuTiers:
    - {name: h100, products: [NVIDIA-H100-80GB]}
  nodePools:
    - name: h100
      usage: training
      nodes: ["h100-[01-04]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
    - name: cpu
      usage: hybrid
      nodes: ["cpu-[01-08]"]
      allocatable: {cpu: "64", memory: 256Gi}
"""
)


def _compile(text: str) -> Compilation:
    return policyc.compile(text, name="x.yaml")


def _ok(text: str) -> Compilation:
    comp = _compile(text)
    assert comp.ok, [f"{d.line}:{d.column} {d.code} {d.message}" for d in comp.report.diagnostics]
    return comp


def _errors(comp: Compilation) -> list:
    return [d for d in comp.report.diagnostics if d.severity.name == "ERROR"]


def _line_of(text: str, needle: str) -> int:
    """The 1-based line of the only line of `text` holding `needle` (worked out here, not by policyc)."""
    lines = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(lines) == 1, f"{needle!r} is on lines {lines}"
    return lines[0]


def _column_of(text: str, needle: str) -> int:
    line = text.splitlines()[_line_of(text, needle) - 1]
    return line.index(needle) + 1


def _objects(comp: Compilation, path: str) -> list[dict]:
    return [m.obj for a in comp.artifacts if a.path == path for m in a.manifests]


def _pod_spec(comp: Compilation, workload: str) -> dict:
    """The pod spec of the workload's template (whatever its kind: the first dict holding containers)."""
    found: list[dict] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if "containers" in node:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(_objects(comp, f"templates/{workload}.yaml"))
    assert found, f"no pod spec in templates/{workload}.yaml"
    return found[0]


def _quota_hard(comp: Compilation, tenant: str) -> dict:
    quotas = [o for o in _objects(comp, f"tenants/{tenant}.yaml") if o["metadata"]["name"] == "tenant-quota"]
    assert len(quotas) == 1
    return quotas[0]["spec"]["hard"]


def _queue(comp: Compilation, tenant: str) -> dict:
    queues = [o for o in _objects(comp, "volcano/queues.yaml") if o["metadata"]["name"] == tenant]
    assert len(queues) == 1
    return queues[0]["spec"]


def _plan_pool(comp: Compilation, pool: str) -> dict:
    plan = json.loads(comp.files["nodes/plan.json"].data)
    (found,) = [p for p in plan["pools"] if p["name"] == pool]
    return found


def _required_expressions(spec: dict) -> list[dict]:
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 1
    return terms[0]["matchExpressions"]


# --- a. AMD -----------------------------------------------------------------------------------------------------


AMD_POLICY = (
    AMD_ONLY
    + """\
  tenants:
    - name: research
      namespaces: [research]
      queue: {guarantee: {cpu: "96", memory: 900Gi}}
      quota: {requests: {gpu: 8}}
  workloads:
    - {name: finetune, type: training, tenant: research, gpuTier: mi300x, gpus: 8, replicas: 1, kind: Job}
"""
)


def test_an_amd_pool_is_requested_as_amd_gpu_tolerated_by_its_product_name_and_gpu_in_the_quota_is_amd() -> None:
    comp = _ok(AMD_POLICY)
    spec = _pod_spec(comp, "finetune")
    resources = spec["containers"][0]["resources"]
    assert resources["requests"]["amd.com/gpu"] == "8"
    assert resources["limits"]["amd.com/gpu"] == "8"
    assert not any(r.startswith("nvidia.com/") for part in resources.values() for r in part)
    assert {
        "key": "amd.com/gpu.product-name",
        "operator": "Equal",
        "value": "AMD-Instinct-MI300X",
        "effect": "NoSchedule",
    } in spec["tolerations"]
    assert not any(t["key"] == "nvidia.com/gpu.product" for t in spec["tolerations"])
    assert _quota_hard(comp, "research") == {"requests.amd.com/gpu": "8"}
    # AMD's node labeller writes the product label: policyc taints by it and leaves the label alone.
    pool = _plan_pool(comp, "mi300x")
    assert pool["gpuVendor"] == "amd"
    assert pool["gpuResource"] == "amd.com/gpu"
    assert {"key": "amd.com/gpu.product-name", "value": "AMD-Instinct-MI300X", "effect": "NoSchedule"} in pool["taints"]
    assert "amd.com/gpu.product-name" not in pool["labels"]


def test_without_amds_node_labeller_policyc_sets_the_amd_product_label() -> None:
    text = AMD_POLICY.replace(
        '      allocatable: {cpu: "192", memory: 1800Gi}\n',
        '      allocatable: {cpu: "192", memory: 1800Gi}\n      gpuFeatureDiscovery: false\n',
    )
    assert "gpuFeatureDiscovery: false" in text
    pool = _plan_pool(_ok(text), "mi300x")
    assert pool["labels"]["amd.com/gpu.product-name"] == "AMD-Instinct-MI300X"
    assert not any(key.startswith("nvidia.com/") for key in pool["labels"])


def test_an_amd_pool_with_its_own_resource_name_is_requested_by_that_name() -> None:
    text = AMD_POLICY.replace(
        "gpu: {vendor: amd, product:", "gpu: {vendor: amd, resource: amd.com/gpu-partition, product:"
    )
    comp = _ok(text)
    requests = _pod_spec(comp, "finetune")["containers"][0]["resources"]["requests"]
    assert requests["amd.com/gpu-partition"] == "8"
    assert "amd.com/gpu" not in requests
    assert _quota_hard(comp, "research") == {"requests.amd.com/gpu-partition": "8"}


# --- b. Huawei Ascend ---------------------------------------------------------------------------------------------


ASCEND_POLICY = (
    HEAD
    + """\
  gpuTiers:
    - {name: ascend, products: [Ascend910B3]}
  nodePools:
    - name: ascend
      usage: inference
      nodes: ["ascend-[01-02]"]
      gpu: {vendor: huawei-ascend, resource: huawei.com/Ascend910B3, product: Ascend910B3, count: 8}
      allocatable: {cpu: "192", memory: 1500Gi}
  tenants:
    - name: search
      namespaces: [search]
      queue: {guarantee: {cpu: "96", memory: 700Gi}}
      quota: {requests: {gpu: 16}}
  workloads:
    - {name: ranker, type: inference, tenant: search, gpuTier: ascend, gpus: 1, replicas: 8, kind: Deployment}
"""
)


def test_an_ascend_pool_gets_policycs_product_label_and_taint() -> None:
    comp = _ok(ASCEND_POLICY)
    pool = _plan_pool(comp, "ascend")
    assert pool["labels"]["ai.example.com/gpu.product"] == "Ascend910B3"
    assert pool["labels"]["ai.example.com/gpu.tier"] == "ascend"
    assert {"key": "ai.example.com/gpu.product", "value": "Ascend910B3", "effect": "NoSchedule"} in pool["taints"]
    assert not any(t["key"].startswith("nvidia.com/") for t in pool["taints"])
    assert pool["gpuResource"] == "huawei.com/Ascend910B3"
    script = comp.files["nodes/apply.sh"].data.decode()
    assert '"ai.example.com/gpu.product":"Ascend910B3"' in script
    assert "ai.example.com/gpu.product=Ascend910B3:NoSchedule" in script

    spec = _pod_spec(comp, "ranker")
    resources = spec["containers"][0]["resources"]
    assert resources["requests"]["huawei.com/Ascend910B3"] == "1"
    assert resources["limits"]["huawei.com/Ascend910B3"] == "1"
    assert {
        "key": "ai.example.com/gpu.product",
        "operator": "Equal",
        "value": "Ascend910B3",
        "effect": "NoSchedule",
    } in spec["tolerations"]
    assert _quota_hard(comp, "search") == {"requests.huawei.com/Ascend910B3": "16"}


def test_an_ascend_pool_without_a_resource_uses_the_ascend910_default() -> None:
    text = ASCEND_POLICY.replace("resource: huawei.com/Ascend910B3, ", "")
    comp = _ok(text)
    assert _pod_spec(comp, "ranker")["containers"][0]["resources"]["requests"]["huawei.com/Ascend910"] == "1"
    assert _quota_hard(comp, "search") == {"requests.huawei.com/Ascend910": "16"}


def test_the_ascend_product_label_is_reserved_like_a_discovery_label() -> None:
    text = ASCEND_POLICY.replace(
        '      allocatable: {cpu: "192", memory: 1500Gi}\n',
        '      allocatable: {cpu: "192", memory: 1500Gi}\n      labels: {ai.example.com/gpu.product: other}\n',
    )
    comp = _compile(text)
    assert [d.code for d in _errors(comp)] == ["PC207"]


def test_a_gaudi_pool_requests_habana_gaudi() -> None:
    text = (
        HEAD
        + """\
  gpuTiers:
    - {name: gaudi, products: [Gaudi3]}
  nodePools:
    - name: gaudi
      usage: training
      nodes: ["gaudi-[01-02]"]
      gpu: {vendor: intel-gaudi, product: Gaudi3, count: 8}
      allocatable: {cpu: "160", memory: 1000Gi}
  tenants:
    - name: t
      namespaces: [t]
      queue: {guarantee: {gpu: 8}}
  workloads:
    - {name: w, type: training, tenant: t, gpuTier: gaudi, gpus: 8, replicas: 1, kind: Job}
"""
    )
    comp = _ok(text)
    assert _pod_spec(comp, "w")["containers"][0]["resources"]["requests"]["habana.ai/gaudi"] == "8"
    assert _queue(comp, "t")["guarantee"]["resource"] == {"habana.ai/gaudi": "8"}
    assert _plan_pool(comp, "gaudi")["labels"]["ai.example.com/gpu.product"] == "Gaudi3"


# --- c. CPU pools and workloads ------------------------------------------------------------------------------------


CPU_POLICY = (
    H100_AND_CPU
    + """\
  tenants:
    - name: data
      namespaces: [data]
      queue: {guarantee: {gpu: 8, cpu: "128", memory: 512Gi}}
  workloads:
    - {name: train, type: training, tenant: data, gpuTier: h100, gpus: 8, replicas: 1, kind: Job}
    - {name: data-prep, type: training, tenant: data, cpu: "16", memory: 64Gi, replicas: 8, kind: Job}
"""
)


def test_a_cpu_workload_requests_no_extended_resource_and_lands_only_on_the_cpu_pool() -> None:
    comp = _ok(CPU_POLICY)
    spec = _pod_spec(comp, "data-prep")
    resources = spec["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "16", "memory": "64Gi"}
    assert resources["limits"] == {"cpu": "16", "memory": "64Gi"}
    assert {"key": "ai.example.com/gpu.tier", "operator": "In", "values": ["cpu"]} in _required_expressions(spec)
    assert not any("product" in t["key"] for t in spec["tolerations"])

    landed = {(r.workload, r.pool) for r in placement_rows(comp) if r.verdict != "rejected"}
    assert landed == {("data-prep", "cpu"), ("train", "h100")}


def test_a_cpu_pool_is_labelled_tier_cpu_and_has_no_product_taint() -> None:
    pool = _plan_pool(_ok(CPU_POLICY), "cpu")
    assert pool["gpuTier"] == "cpu"
    assert pool["gpuProduct"] is None
    assert pool["labels"] == {
        "ai.example.com/gpu.tier": "cpu",
        "ai.example.com/node.pool": "cpu",
        "ai.example.com/node.usage": "hybrid",
    }
    assert {"key": "ai.example.com/node.usage", "value": "hybrid", "effect": "NoSchedule"} in pool["taints"]
    product_keys = {"nvidia.com/gpu.product", "amd.com/gpu.product-name", "ai.example.com/gpu.product"}
    assert not product_keys & {t["key"] for t in pool["taints"]}
    assert not product_keys & set(pool["labels"])


# --- d. PC448 ---------------------------------------------------------------------------------------------------


CROSS_VENDOR = (
    NVIDIA_AND_AMD
    + """\
  tenants:
    - name: research
      namespaces: [research]
      queue: {guarantee: {gpu: 16}}
  workloads:
    - {name: nv-train, type: training, tenant: research, gpuTier: h100, gpus: 8, replicas: 1, kind: Job}
    - {name: amd-train, type: training, tenant: research, gpuTier: mi300x, gpus: 8, replicas: 1, kind: Job}
"""
)


def test_gpu_in_the_guarantee_of_a_tenant_on_two_vendors_is_ambiguous() -> None:
    comp = _compile(CROSS_VENDOR)
    assert not comp.ok
    (d,) = _errors(comp)
    assert d.code == "PC448"
    assert "amd.com/gpu" in d.message and "nvidia.com/gpu" in d.message
    assert "h100 (nvidia.com/gpu)" in d.message and "mi300x (amd.com/gpu)" in d.message
    assert "amd.com/gpu: <count>, nvidia.com/gpu: <count>" in d.hint
    # At the `gpu` key of `queue: {guarantee: {gpu: 16}}`.
    assert (d.line, d.column) == (_line_of(CROSS_VENDOR, "gpu: 16"), _column_of(CROSS_VENDOR, "gpu: 16"))
    assert (d.line, d.column) == (24, 27)


def test_following_the_pc448_hint_compiles_and_guarantees_each_resource() -> None:
    comp = _ok(CROSS_VENDOR.replace("gpu: 16", "nvidia.com/gpu: 8, amd.com/gpu: 8"))
    assert _queue(comp, "research")["guarantee"]["resource"] == {"amd.com/gpu": "8", "nvidia.com/gpu": "8"}
    assert _pod_spec(comp, "nv-train")["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == "8"
    assert _pod_spec(comp, "amd-train")["containers"][0]["resources"]["requests"]["amd.com/gpu"] == "8"


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("quota", 'queue: {guarantee: {cpu: "8"}}\n      quota: {requests: {gpu: 16}}'),
        ("limitRange", 'queue: {guarantee: {cpu: "8"}}\n      limitRange: {max: {gpu: 8}}'),
    ],
)
def test_gpu_is_ambiguous_in_the_quota_and_limit_range_too(field: str, text: str) -> None:
    policy = CROSS_VENDOR.replace("queue: {guarantee: {gpu: 16}}", text)
    (d,) = _errors(_compile(policy))
    assert d.code == "PC448"
    needle = "gpu: 16" if field == "quota" else "gpu: 8}"
    assert (d.line, d.column) == (_line_of(policy, needle), _column_of(policy, needle))


def test_a_tenant_on_one_vendor_of_a_mixed_cluster_may_say_gpu() -> None:
    text = CROSS_VENDOR.replace(
        "    - {name: nv-train, type: training, tenant: research, gpuTier: h100, gpus: 8, replicas: 1, kind: Job}\n",
        "",
    ).replace("gpu: 16", "gpu: 8")
    comp = _ok(text)
    assert _queue(comp, "research")["guarantee"]["resource"] == {"amd.com/gpu": "8"}


# --- e. PC447, PC449, PC450, PC104 ----------------------------------------------------------------------------------


def test_a_tier_of_nvidia_and_amd_pools_is_pc447_at_the_later_pools_gpu() -> None:
    text = (
        NVIDIA_AND_AMD.replace(
            "    - {name: h100, products: [NVIDIA-H100-80GB]}\n    - {name: mi300x, products: [AMD-Instinct-MI300X]}\n",
            "    - {name: big, products: [NVIDIA-H100-80GB, AMD-Instinct-MI300X]}\n",
        )
        + """\
  tenants:
    - name: r
      namespaces: [r]
      queue: {guarantee: {cpu: "96", memory: 900Gi}}
"""
    )
    (d,) = _errors(_compile(text))
    assert d.code == "PC447"
    assert d.line == _line_of(text, "gpu: {vendor: amd")
    assert "'mi300x'" in d.message and "'h100'" in d.message and "'big'" in d.message


def test_one_vendor_with_two_resource_names_in_a_tier_is_pc447() -> None:
    text = (
        HEAD
        + """\
  gpuTiers:
    - {name: asc, products: [Ascend910B3, Ascend910B4]}
  nodePools:
    - name: a
      usage: inference
      nodes: ["a-[01-02]"]
      gpu: {vendor: huawei-ascend, resource: huawei.com/Ascend910B3, product: Ascend910B3, count: 8}
      allocatable: {cpu: "192", memory: 1500Gi}
    - name: b
      usage: inference
      nodes: ["b-[01-02]"]
      gpu: {vendor: huawei-ascend, product: Ascend910B4, count: 8}
      allocatable: {cpu: "192", memory: 1500Gi}
  tenants:
    - name: t
      namespaces: [t]
      queue: {guarantee: {cpu: "8", memory: 8Gi}}
"""
    )
    (d,) = _errors(_compile(text))
    assert d.code == "PC447"
    assert d.line == _line_of(text, "product: Ascend910B4")
    assert "huawei.com/Ascend910B3" in d.message and "huawei.com/Ascend910 " in d.message


@pytest.mark.parametrize(
    ("vendor", "product", "feature", "field"),
    [
        ("amd", "AMD-Instinct-MI300X", "mig: {devices: {1g.10gb: 7}}", "mig"),
        ("amd", "AMD-Instinct-MI300X", "sharing: {strategy: time-slicing, replicas: 4}", "sharing"),
        ("intel-gaudi", "Gaudi3", "sharing: {strategy: time-slicing, replicas: 4}", "sharing"),
    ],
)
def test_mig_or_sharing_on_a_non_nvidia_pool_is_pc449(vendor: str, product: str, feature: str, field: str) -> None:
    text = (
        AMD_ONLY.replace("vendor: amd", f"vendor: {vendor}")
        .replace("AMD-Instinct-MI300X", product)
        .replace("count: 8}", f"count: 8, {feature}}}")
        + """\
  tenants:
    - name: r
      namespaces: [r]
      queue: {guarantee: {cpu: "96", memory: 900Gi}}
"""
    )
    (d,) = _errors(_compile(text))
    assert d.code == "PC449"
    assert d.line == _line_of(text, f"{field}: {{")
    assert d.column == _column_of(text, feature[len(field) + 2 :])
    assert f"gpu.{field}" in d.message and vendor in d.message


PC450_BASE = (
    H100_AND_CPU
    + """\
  tenants:
    - name: data
      namespaces: [data]
      queue: {guarantee: {cpu: "128", memory: 512Gi}}
  workloads:
    - name: prep
      type: training
      tenant: data
      replicas: 2
      kind: Job
"""
)


@pytest.mark.parametrize(
    ("extra", "at", "words"),
    [
        ("      gpus: 8\n", "gpus: 8", "8 GPUs per pod but names no gpuTier"),
        ("      gpuTier: h100\n", "gpuTier: h100", "names GPU tier 'h100' but not how many GPUs"),
        ('      migProfile: 1g.10gb\n      cpu: "4"\n      memory: 16Gi\n', "migProfile", "MIG devices (1g.10gb)"),
        ('      cpu: "4"\n', "name: prep", "does not state its memory per pod"),
        ("      memory: 16Gi\n", "name: prep", "does not state its cpu per pod"),
        ("", "name: prep", "does not state its cpu and memory"),
    ],
    ids=["gpus-without-tier", "tier-without-gpus", "mig-without-tier", "no-memory", "no-cpu", "neither"],
)
def test_an_incomplete_cpu_workload_is_pc450(extra: str, at: str, words: str) -> None:
    text = PC450_BASE + extra
    errors = _errors(_compile(text))
    assert [d.code for d in errors] == ["PC450"]
    (d,) = errors
    assert d.line == _line_of(text, at)
    assert "'prep'" in d.message and words in d.message


def test_a_gpu_tier_named_cpu_is_pc104() -> None:
    text = (
        HEAD
        + """\
  gpuTiers:
    - {name: cpu, products: [NVIDIA-H100-80GB]}
  nodePools:
    - name: h100
      usage: training
      nodes: ["h100-[01-04]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
  tenants:
    - name: r
      namespaces: [r]
      queue: {guarantee: {cpu: "8", memory: 8Gi}}
"""
    )
    comp = _compile(text)
    assert not comp.ok
    pc104 = [d for d in comp.report.diagnostics if d.code == "PC104"]
    assert len(pc104) == 1
    assert pc104[0].line == _line_of(text, "name: cpu,")
    assert pc104[0].column == _column_of(text, "cpu, products")
    assert "'cpu'" in pc104[0].message


# --- f. 'gpu' for a tenant without workloads -----------------------------------------------------------------------


def test_gpu_means_amd_gpu_for_a_tenant_without_workloads_in_an_amd_cluster() -> None:
    text = (
        AMD_ONLY
        + """\
  tenants:
    - name: spare
      namespaces: [spare]
      queue: {guarantee: {gpu: 8, cpu: "96", memory: 900Gi}}
      quota: {requests: {gpu: 16}}
"""
    )
    comp = _ok(text)
    assert _quota_hard(comp, "spare") == {"requests.amd.com/gpu": "16"}
    assert _queue(comp, "spare")["guarantee"]["resource"] == {"amd.com/gpu": "8", "cpu": "96", "memory": "900Gi"}


def test_gpu_for_a_tenant_without_workloads_in_a_mixed_cluster_is_pc448() -> None:
    text = (
        NVIDIA_AND_AMD
        + """\
  tenants:
    - name: spare
      namespaces: [spare]
      queue: {guarantee: {cpu: "96", memory: 900Gi}}
      quota: {requests: {gpu: 16}}
"""
    )
    (d,) = _errors(_compile(text))
    assert d.code == "PC448"
    assert "names no workload" in d.message
    assert (d.line, d.column) == (_line_of(text, "gpu: 16"), _column_of(text, "gpu: 16"))


# --- g. backward compatibility ------------------------------------------------------------------------------------


NVIDIA_POLICY = (
    HEAD
    + """\
  gpuTiers:
    - {name: h100, products: [NVIDIA-H100-80GB]}
  nodePools:
    - name: h100
      usage: training
      nodes: ["h100-[01-04]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
  tenants:
    - name: llm
      namespaces: [llm]
      queue: {guarantee: {gpu: 16}}
      quota: {requests: {gpu: 32}}
  workloads:
    - {name: train, type: training, tenant: llm, gpuTier: h100, gpus: 8, replicas: 2, kind: Job}
"""
)


def test_gpu_resource_nvidia_with_nvidia_pools_requests_nvidia_gpu_as_before() -> None:
    text = NVIDIA_POLICY.replace(
        "  domain: ai.example.com\n", "  domain: ai.example.com\n  gpuResource: nvidia.com/gpu\n"
    )
    assert "gpuResource: nvidia.com/gpu" in text
    comp = _ok(text)
    spec = _pod_spec(comp, "train")
    resources = spec["containers"][0]["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == "8"
    assert resources["limits"]["nvidia.com/gpu"] == "8"
    assert {
        "key": "nvidia.com/gpu.product",
        "operator": "Equal",
        "value": "NVIDIA-H100-80GB",
        "effect": "NoSchedule",
    } in spec["tolerations"]
    assert _quota_hard(comp, "llm") == {"requests.nvidia.com/gpu": "32"}
    assert _queue(comp, "llm")["guarantee"]["resource"] == {"nvidia.com/gpu": "16"}
    pool = _plan_pool(comp, "h100")
    assert {"key": "nvidia.com/gpu.product", "value": "NVIDIA-H100-80GB", "effect": "NoSchedule"} in pool["taints"]

    # Stating the default (gpuResource, or vendor: nvidia) changes no output file.
    default = _ok(NVIDIA_POLICY)
    explicit_vendor = _ok(text.replace("gpu: {product:", "gpu: {vendor: nvidia, product:"))
    assert {p: f.data for p, f in comp.files.items()} == {p: f.data for p, f in default.files.items()}
    assert {p: f.data for p, f in explicit_vendor.files.items()} == {p: f.data for p, f in default.files.items()}


def test_a_custom_gpu_resource_still_names_nvidia_pools_resource() -> None:
    text = NVIDIA_POLICY.replace(
        "  domain: ai.example.com\n", "  domain: ai.example.com\n  gpuResource: example.com/gpu\n"
    )
    comp = _ok(text)
    assert _pod_spec(comp, "train")["containers"][0]["resources"]["requests"]["example.com/gpu"] == "8"
    assert _quota_hard(comp, "llm") == {"requests.example.com/gpu": "32"}


def test_a_cpu_workload_without_a_cpu_pool_is_told_to_add_one() -> None:
    text = (
        H100_AND_CPU.replace(
            '    - name: cpu\n      usage: hybrid\n      nodes: ["cpu-[01-08]"]\n'
            '      allocatable: {cpu: "64", memory: 256Gi}\n',
            "",
        )
        + """\
  tenants:
    - {name: ml, namespaces: [ml]}
  workloads:
    - {name: prep, type: training, tenant: ml, cpu: "4", memory: 16Gi, kind: Job}
"""
    )
    [d] = [d for d in _compile(text).report.diagnostics if d.code == "PC504"]
    assert d.message == "template 'prep' can land nowhere: no CPU-only pool has usage training or hybrid"
    assert d.hint == "add a training or hybrid pool without gpu (CPU-only nodes)"


def test_gpu_for_a_tenant_whose_workloads_use_no_gpu_names_that_reason() -> None:
    text = (
        NVIDIA_AND_AMD
        + """\
  tenants:
    - {name: data, namespaces: [data], quota: {requests: {gpu: 0}}}
  workloads:
    - {name: prep, type: training, tenant: data, cpu: "4", memory: 16Gi, kind: Job}
"""
    )
    [d] = [d for d in _compile(text).report.diagnostics if d.code == "PC448"]
    assert d.message == (
        "'gpu' could mean amd.com/gpu or nvidia.com/gpu: the tenant's workloads use no GPU, and the pools have "
        "several accelerators"
    )

"""Fields that do nothing where they stand (PC493): the registry, docs/language.md's table and the invalid cases agree;
each condition warns exactly where the field has no effect, and only where the policy writes the field; memory in
decimal units warns with both figures (PC494)."""

from __future__ import annotations

import re

import pytest

from policyc.checks.no_effect import REGISTRY
from policyc.compiler import Compilation, compile_file, compile_text
from policyc.registry import SCHEDULERS, settings
from tests.conftest import REPO
from tests.test_invalid_cases import CASES, expected_codes

BASE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: idle}
spec:
  kubernetesVersion: "VERSION"
  domain: gpu.example.org
SPEC
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-40GB]}
  nodePools:
    - name: train
      usage: hybrid
      nodes: ["gpu-[1-4]"]
      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8GPU}
      allocatable: {cpu: "128", memory: 1000Gi}
POOL
POOLS
  tenants:
    - name: ml
      namespaces: [ml]
TENANT
  workloads:
    - name: w
      type: training
      tenant: ml
      gpuTier: a100
      gpus: 8
WORKLOAD
"""


def policy(
    spec: str = "",
    pool: str = "",
    pools: str = "",
    tenant: str = "",
    workload: str = "",
    gpu: str = "",
    version: str = "1.33",
) -> str:
    """The base policy with lines added: under spec, in the first pool, more pools, in the tenant, in the workload
    (each indented as its place needs), and in the first pool's gpu mapping."""

    def indented(text: str, by: int) -> str:
        return "\n".join(" " * by + line for line in text.splitlines())

    text = BASE.replace("VERSION", version).replace("GPU}", gpu + "}")
    for marker, lines, by in (("SPEC", spec, 2), ("POOL", pool, 6), ("POOLS", pools, 4), ("TENANT", tenant, 6),
                              ("WORKLOAD", workload, 6)):  # fmt: skip
        text = re.sub(rf"^{marker}\n", indented(lines, by) + "\n" if lines else "", text, flags=re.M)
    return text


def idle(result: Compilation) -> list[tuple[str, ...]]:
    """The fields PC493 reports, by their path under spec."""
    return [tuple(str(p) for p in d.path[1:]) for d in result.report.diagnostics if d.code == "PC493"]


def built(text: str) -> Compilation:
    result = compile_text(text)
    assert result.ok, [(d.code, d.message) for d in result.report.diagnostics]
    return result


# --- the registry, the docs and the cases ----------------------------------------------------------------------


def test_the_documented_table_is_the_registry() -> None:
    readme = (REPO / "docs" / "language.md").read_text(encoding="utf-8")
    section = readme.split("## Fields that do nothing\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows == [f"| `{e.field}` | {e.when} | {e.instead} |" for e in REGISTRY]
    assert [e.field for e in REGISTRY] == sorted(e.field for e in REGISTRY)


def _field(path: tuple) -> str:
    """A diagnostic's path as the registry names its field: ('spec', 'workloads', 3, 'minMember') ->
    'workloads[].minMember'."""
    parts = path[1:]
    if len(parts) > 1 and isinstance(parts[1], int):
        return f"{parts[0]}[]." + ".".join(parts[2:])
    return ".".join(parts)


def test_every_row_has_an_invalid_case() -> None:
    covered = set()
    for case in CASES:
        if "PC493" in expected_codes(case):
            covered |= {_field(d.path) for d in compile_file(case).report.diagnostics if d.code == "PC493"}
    assert covered == {e.field for e in REGISTRY}


# --- each condition, where it holds and where it does not -------------------------------------------------------


def test_an_unwritten_default_is_no_mistake() -> None:
    """gpuFeatureDiscovery defaults to true, and does nothing on a CPU-only pool: said only where written."""
    cpu_pool = '- {name: cpu, usage: hybrid, nodes: ["cpu-1"], allocatable: {cpu: "8", memory: 32Gi}}'
    assert idle(built(policy(pools=cpu_pool))) == []
    written = cpu_pool.replace("}}", "}, gpuFeatureDiscovery: true}")
    assert idle(built(policy(pools=written))) == [("nodePools", "1", "gpuFeatureDiscovery")]


def test_feature_discovery_of_a_vendor_without_one() -> None:
    gaudi = (
        "- {name: gaudi, usage: hybrid, nodes: [g-1], gpu: {vendor: intel-gaudi, product: HL-225, count: 8}, "
        "gpuFeatureDiscovery: false}"
    )
    text = policy(pools=gaudi).replace("NVIDIA-A100-SXM4-40GB]}", "NVIDIA-A100-SXM4-40GB]}\n    - {name: g, "
                                       "products: [HL-225]}")  # fmt: skip
    result = compile_text(text)
    assert idle(result) == [("nodePools", "1", "gpuFeatureDiscovery")]
    assert "policyc labels the product of pool 'gaudi' itself" in result.report.diagnostics[0].message
    # On NVIDIA's nodes false means: policyc writes GFD's labels.
    assert idle(built(policy(pool="gpuFeatureDiscovery: false"))) == []


def test_gpu_memory_does_something_where_a_label_or_an_alert_states_it() -> None:
    assert idle(built(policy(gpu=", memory: 40Gi"))) == [("nodePools", "0", "gpu", "memory")]
    # Without GPU Feature Discovery the node script writes nvidia.com/gpu.memory from it.
    assert idle(built(policy(gpu=", memory: 40Gi", pool="gpuFeatureDiscovery: false"))) == []
    # The memory-use alert states it ("... of the card's 40 GiB") ...
    assert idle(built(policy(gpu=", memory: 40Gi", spec="monitoring: {}"))) == []
    # ... unless that alert is off.
    off = "monitoring: {thresholds: {memoryUsed: false}}"
    assert idle(built(policy(gpu=", memory: 40Gi", spec=off))) == [("nodePools", "0", "gpu", "memory")]


def _scheduler(backend: str) -> str:
    """The backend, and a default priority class below 100, so that KAI runs the pods preemptible (beyond the queue's
    quota, which this policy does not give)."""
    return f"scheduler: {{backend: {backend}}}\npriorityClasses: [{{name: low, value: 50, globalDefault: true}}]"


@pytest.mark.parametrize(
    ("backend", "kind", "warned"),
    [
        ("volcano", "VolcanoJob", False),
        ("volcano", "PyTorchJob", False),
        ("volcano", "Job", True),  # placed pod by pod: Volcano's own Job kind is its gang
        ("volcano", "Deployment", True),
        ("kueue", "Job", False),  # partial admission
        ("kueue", "Deployment", True),
        ("kai", "Job", False),  # kai.scheduler/batch-min-member
        ("kai", "Deployment", True),
    ],
)
def test_a_gang_minimum_does_something_only_where_the_kind_has_a_gang(backend: str, kind: str, warned: bool) -> None:
    text = policy(spec=_scheduler(backend), workload=f"kind: {kind}\nreplicas: 4\nminMember: 2")
    assert idle(built(text)) == ([("workloads", "0", "minMember")] if warned else [])


@pytest.mark.parametrize("backend", list(SCHEDULERS))
def test_the_gang_kinds_are_the_kinds_whose_template_carries_the_minimum(backend: str) -> None:
    """GANG_KINDS is what the templates do: minMember changes a kind's template exactly when the kind is one."""
    for kind in settings(backend).WORKLOAD_KINDS:
        spec = _scheduler(backend)
        plain = built(policy(spec=spec, workload=f"kind: {kind}\nreplicas: 4")).files["templates/w.yaml"]
        gang = built(policy(spec=spec, workload=f"kind: {kind}\nreplicas: 4\nminMember: 2")).files["templates/w.yaml"]
        assert (plain.data != gang.data) == (kind in settings(backend).GANG_KINDS), (backend, kind)


ZONE = "topology.kubernetes.io/zone"


def test_same_zone_needs_pools_in_several_known_zones() -> None:
    second = '- {name: more, usage: hybrid, nodes: ["more-[1-4]"], gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}, ' \
             'allocatable: {cpu: "128", memory: 1000Gi}LABELS}'  # fmt: skip
    workload = "replicas: 2\nsameZone: true"
    # No pool states a zone: policyc cannot keep the pods together.
    result = built(policy(workload=workload, pools=second.replace("LABELS", "")))
    assert idle(result) == [("workloads", "0", "sameZone")]
    assert "on nodes without that label a required pod affinity places no pod" in result.report.diagnostics[0].message
    # Both in zone a: one zone anyway.
    both_a = policy(workload=workload, pool=f"labels: {{{ZONE}: a}}", pools=second.replace("LABELS", f", labels: "
                    f"{{{ZONE}: a}}"))  # fmt: skip
    result = built(both_a)
    assert idle(result) == [("workloads", "0", "sameZone")]
    assert "is in zone 'a'" in result.report.diagnostics[0].message
    # Zones a and b: it chooses one.
    a_and_b = both_a.replace(f"{{{ZONE}: a}}}}", f"{{{ZONE}: b}}}}")
    assert idle(built(a_and_b)) == []
    # Only one pool states its zone: the pods go only where the label is (a required pod affinity needs it).
    one_stated = policy(workload=workload, pool=f"labels: {{{ZONE}: a}}", pools=second.replace("LABELS", ""))
    assert idle(built(one_stated)) == []


@pytest.mark.parametrize(
    ("version", "spec", "tenant", "warned", "why"),
    [
        ("1.33", "", "", True, "Kubernetes 1.33 has no MutatingAdmissionPolicy"),
        ("1.35", "", "", True, "v1beta1 where the API server turns it on"),
        ("1.35", "admission: {mutatingAdmissionPolicyBeta: true}", "", False, None),
        ("1.36", "", "", False, None),
        ("1.36", "", "admission: {mode: off}", True, "tenant 'ml' has admission mode off"),
        ("1.36", "admission: {mode: off}", "", True, "tenant 'ml' has admission mode off"),
    ],
)
def test_a_namespace_default_needs_injection(version: str, spec: str, tenant: str, warned: bool, why: str) -> None:
    result = built(policy(version=version, spec=spec, tenant=tenant, workload="namespaceDefault: true"))
    assert idle(result) == ([("workloads", "0", "namespaceDefault")] if warned else [])
    if why:
        assert why in result.report.diagnostics[0].message


def test_the_beta_switch_does_nothing_without_a_class_to_inject() -> None:
    beta = "admission: {mutatingAdmissionPolicyBeta: true}"
    assert idle(built(policy(version="1.35", spec=beta))) == []
    result = built(policy(version="1.35", spec=beta, tenant="admission: {mode: off}"))
    assert idle(result) == [("admission", "mutatingAdmissionPolicyBeta")]
    assert "no tenant whose admission mode is not off" in result.report.diagnostics[0].message
    # Before 1.34 there is no beta to turn on: an error, not this warning.
    early = compile_text(policy(version="1.33", spec=beta))
    assert [d.code for d in early.report.diagnostics] == ["PC437"]


def test_the_policys_admission_mode_is_idle_only_when_no_tenant_takes_it() -> None:
    two = policy(spec="admission: {mode: deny}", tenant="admission: {mode: warn}").replace(
        "  workloads:", "    - {name: other, namespaces: [other]}\n  workloads:"
    )
    assert idle(built(two)) == []
    alone = policy(spec="admission: {mode: deny}", tenant="admission: {mode: warn}")
    assert idle(built(alone)) == [("admission", "mode")]


def test_an_activation_threshold_needs_min_zero() -> None:
    def autoscaled(low: int) -> str:
        trigger = 'prometheus: {serverAddress: "http://p:9090", query: "sum(q)", threshold: 4, activationThreshold: 1}'
        return policy(
            spec="autoscaling: {keda: true}",
            workload=f"kind: Deployment\nautoscale: {{min: {low}, max: 4, {trigger}}}",
        ).replace("type: training", "type: inference")

    assert idle(built(autoscaled(0))) == []
    assert idle(built(autoscaled(1))) == [("workloads", "0", "autoscale", "prometheus", "activationThreshold")]


def test_nccl_interfaces_need_an_rdma_workload_on_the_pool() -> None:
    rdma = "rdma: {resource: rdma/ib, perNode: 8, interfaces: [ib0]}"
    assert idle(compile_text(policy(pool=rdma))) == [("nodePools", "0", "rdma", "interfaces")]
    assert idle(compile_text(policy(pool=rdma, workload="rdma: 1"))) == []


def test_slinky_settings_do_something_with_slinky() -> None:
    partition = "slurm: {partition: gpu, shared: true}"
    names = "slurm: {operator: OPERATOR, namespace: slurm-prod, controller: slurm-prod}"
    with_hosts = compile_text(policy(pool=partition, spec=names.replace("OPERATOR", "none")))
    assert sorted(idle(with_hosts)) == [("slurm", "controller"), ("slurm", "namespace")]
    assert idle(compile_text(policy(pool=partition, spec=names.replace("OPERATOR", "slinky")))) == []
    # A GPU pool's GRES type names its cards.
    assert idle(compile_text(policy(pool="slurm: {partition: gpu, shared: true, gresType: a100}"))) == []


# --- decimal memory units (PC494) -------------------------------------------------------------------------------


def decimal(result: Compilation) -> list[tuple[tuple, str, str | None]]:
    return [(d.path[1:], d.message, d.hint) for d in result.report.diagnostics if d.code == "PC494"]


def test_decimal_memory_warns_with_both_figures() -> None:
    [(path, message, hint)] = decimal(compile_text(policy(workload='cpu: "8"\nmemory: 32G')))
    assert path == ("workloads", 0, "memory")
    # 32G = 32 x 10^9 = 32,000,000,000 bytes; 32Gi = 32 x 2^30 = 34,359,738,368; 1 - 32e9/34359738368 = 6.9 %
    assert "is 32G = 32,000,000,000 bytes, 7 % less than 32Gi = 34,359,738,368 bytes" in message
    assert hint == "write 32Gi if binary was meant; if 32,000,000,000 bytes was, write 32e9"


@pytest.mark.parametrize(
    ("written", "figures"),
    [
        # 500 x 10^6 = 500,000,000; 500 x 2^20 = 524,288,000; 1 - 10^6/2^20 = 4.6 %
        ("500M", "500M = 500,000,000 bytes, 5 % less than 500Mi = 524,288,000 bytes"),
        # 1.5 x 10^9 = 1,500,000,000; 1.5 x 2^30 = 1,610,612,736
        ("1.5G", "1.5G = 1,500,000,000 bytes, 7 % less than 1.5Gi = 1,610,612,736 bytes"),
        # 2 x 10^12 = 2,000,000,000,000; 2 x 2^40 = 2,199,023,255,552; 1 - 10^12/2^40 = 9.1 %
        ("2T", "2T = 2,000,000,000,000 bytes, 9 % less than 2Ti = 2,199,023,255,552 bytes"),
    ],
)
def test_decimal_memory_figures(written: str, figures: str) -> None:
    [(_, message, _)] = decimal(compile_text(policy().replace("memory: 1000Gi", f"memory: {written}")))
    assert figures in message


@pytest.mark.parametrize("written", ["32Gi", "32e9", "32000000000", "32768Mi", "1k"])
def test_memory_that_says_what_it_means_is_not_warned(written: str) -> None:
    assert decimal(compile_text(policy(workload=f'cpu: "8"\nmemory: {written}'))) == []


def test_every_memory_amount_is_judged() -> None:
    """Pools' allocatable and GPU memory, quotas, queues, limit ranges, per-class quotas, a workload's limits and
    /dev/shm; not cpu, not storage (disks are sold in decimal units)."""
    text = policy(
        gpu=", memory: 40G",
        tenant="queue: {guarantee: {memory: 10G}}\n"
        "quota: {requests: {memory: 20G, storage: 100G}, limits: {memory: 30G}}\n"
        "limitRange: {max: {memory: 40G}}",
        workload='cpu: "8"\nmemory: 1G\nlimits: {memory: 2G}\nshm: 1G',
    )
    paths = {path for path, _, _ in decimal(compile_text(text))}
    assert paths == {
        ("nodePools", 0, "gpu", "memory"),
        ("tenants", 0, "queue", "guarantee", "memory"),
        ("tenants", 0, "quota", "requests", "memory"),
        ("tenants", 0, "quota", "limits", "memory"),
        ("tenants", 0, "limitRange", "max", "memory"),
        ("workloads", 0, "memory"),
        ("workloads", 0, "limits", "memory"),
        ("workloads", 0, "shm"),
    }

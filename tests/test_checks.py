"""Cluster-wide checks: their arithmetic, beyond the messages frozen in the bad-policy corpus."""

from __future__ import annotations

POLICY = """
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: checks}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  gpuTiers: [{name: a100, products: [NVIDIA-A100-SXM4-40GB]}]
  nodePools:
    - {name: p1, usage: training, nodes: ["a-[1-2]"], gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8},
       allocatable: {cpu: "64", memory: 512Gi}}
    - {name: p2, usage: hybrid, nodes: [b-1], gpu: {product: NVIDIA-A100-SXM4-40GB, count: 4},
       allocatable: {cpu: 32500m, memory: 256Gi}}
  scheduler: {queuePlugin: capacity}
  tenants:
"""


def codes(result) -> list[str]:
    return sorted(d.code for d in result.report.diagnostics)


def test_capacity_counts_gpus_and_stated_allocatable(compile_text) -> None:
    result = compile_text(POLICY + "    - {name: ml, namespaces: [ml]}\n")
    total = result.cluster.capacity(result.cluster.pools)
    assert {k: str(v) for k, v in total.items()} == {"nvidia.com/gpu": "20", "cpu": "160500m", "memory": "1280Gi"}


def test_cpu_guarantee_beyond_allocatable_is_an_error(compile_text) -> None:
    result = compile_text(POLICY + '    - {name: ml, namespaces: [ml], queue: {guarantee: {cpu: "161"}}}\n')
    [d] = result.report.errors
    assert d.code == "PC414" and "guaranteed 161 cpu" in d.message and "have 160500m (p1 128, p2 32500m)" in d.message


def test_a_guarantee_that_fits_exactly_passes(compile_text) -> None:
    result = compile_text(POLICY + "    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 20}}}\n")
    assert result.ok, [d.message for d in result.report.diagnostics]


def test_overcommit_ratio_counts_every_namespace(compile_text) -> None:
    result = compile_text(POLICY + "    - {name: ml, namespaces: [a, b, c], quota: {requests: {gpu: 10}}}\n")
    [d] = result.report.warnings
    assert d.code == "PC415" and "30 requests.nvidia.com/gpu" in d.message and "1.50x" in d.message


def test_five_levels_are_allowed_six_are_not(compile_text) -> None:
    chain = "    - {name: l1, namespaces: [l1]}\n" + "".join(
        f"    - {{name: l{i}, namespaces: [l{i}], queue: {{parent: l{i - 1}}}}}\n" for i in range(2, 6)
    )
    assert "PC417" not in codes(compile_text(POLICY + chain))
    six = chain + "    - {name: l6, namespaces: [l6], queue: {parent: l5}}\n"
    assert "PC417" in codes(compile_text(POLICY + six))


def test_a_child_may_not_guarantee_what_its_parent_does_not(compile_text) -> None:
    text = POLICY + (
        '    - {name: org, namespaces: [org], queue: {guarantee: {cpu: "8"}}}\n'
        "    - {name: team, namespaces: [team], queue: {parent: org, guarantee: {gpu: 2}}}\n"
    )
    result = compile_text(text)
    assert "PC418" in codes(result)
    [d] = [d for d in result.report.errors if d.code == "PC418"]
    assert "guarantee 2 nvidia.com/gpu" in d.message and "guarantee of 0" in d.message


def test_the_policy_language_names_exactly_the_kinds_policyc_templates() -> None:
    """Each backend templates exactly the kinds its settings declare, and the language names every one of them."""
    from typing import get_args

    from policyc.language.model.policy import policy_model
    from policyc.registry import SCHEDULERS, scheduler, settings

    for name in SCHEDULERS:
        assert list(scheduler(name).KINDS) == list(settings(name).WORKLOAD_KINDS), name
        assert set(settings(name).DEFAULT_KINDS.values()) <= set(settings(name).WORKLOAD_KINDS), name
    spec = policy_model().model_fields["spec"].annotation  # workloads[].kind, built from the registry
    [workload] = get_args(spec.model_fields["workloads"].annotation)
    [kinds] = [t for t in get_args(workload.model_fields["kind"].annotation) if t is not type(None)]
    assert set(get_args(kinds)) == {k for name in SCHEDULERS for k in settings(name).WORKLOAD_KINDS}


def test_a_mistake_that_leaves_nothing_out_hides_no_total(compile_text) -> None:
    """A reserved domain (PC412), an unsupported version (PC105) or a reserved label (PC207) leaves no item out of
    the cluster: the totals stay trustworthy, and a guarantee above them is reported beside it (p1 2 x 8 + p2 4 =
    20 GPUs, 21 guaranteed)."""
    tenant = "    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 21}}}\n"
    for mistake, code in (
        (("domain: ai.example.com", "domain: gpu.kubernetes.io"), "PC412"),
        (('kubernetesVersion: "1.33"', 'kubernetesVersion: "1.21"'), "PC105"),
        (("usage: hybrid,", "usage: hybrid, labels: {nvidia.com/mig.config: x},"), "PC207"),
    ):
        result = compile_text((POLICY + tenant).replace(*mistake))
        assert result.cluster.complete
        assert codes(result) == sorted([code, "PC414"]), (code, [d.message for d in result.report.diagnostics])

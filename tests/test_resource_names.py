"""Every resource a tenant's queue, quota and limit range name must be one something provides (PC488), or, for a device
plugin or DRA driver policyc cannot know, is warned about (PC489): `policyc.checks.resource_names`."""

from __future__ import annotations

import pytest

import policyc
from tests.conftest import REPO

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: names}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: h100, products: [NVIDIA-H100-80GB-HBM3], dra: true}
    - {name: a100, products: [NVIDIA-A100-SXM4-80GB]}
  nodePools:
    - name: h100
      usage: training
      nodes: ["h100-[01-04]"]
      gpu: {product: NVIDIA-H100-80GB-HBM3, count: 8}
      allocatable: {cpu: "192", memory: 1800Gi}
      rdma: {resource: rdma/ib, perNode: 8}
    - name: a100
      usage: inference
      nodes: ["a100-[01-02]"]
      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8, mig: {strategy: mixed, devices: {3g.40gb: 2}}}
      allocatable: {cpu: "128", memory: 1000Gi}
  tenants:
    - name: research
      namespaces: [research]
"""
H100_QUOTA = "h100.ai.example.com.deviceclass.resource.k8s.io/devices"


def _diagnostics(text: str) -> list[tuple[str, tuple, str, str | None]]:
    result = policyc.compile(text, name="names.yaml")
    return [(d.code, d.path, d.message, d.hint) for d in result.report.diagnostics]


def _with(key: str, quota_key: str = H100_QUOTA) -> str:
    """The policy with `key` in the tenant's queue guarantee and `quota_key` in its quota."""
    return (
        POLICY
        + f'      queue: {{guarantee: {{cpu: "96", {key}: 1}}}}\n      quota: {{requests: {{{quota_key}: 16}}}}\n'
    )


GUARANTEE = ("spec", "tenants", 0, "queue", "guarantee")


@pytest.mark.parametrize(
    "key",
    [
        "rdma/ib",  # a pool's RDMA resource
        "nvidia.com/mig-3g.40gb",  # the MIG devices of the mixed strategy
        "deviceclass.resource.kubernetes.io/h100.ai.example.com",  # the DRA tier's class, as an extended resource
        "deviceclass.resource.kubernetes.io/gpu.nvidia.com",  # NVIDIA's DRA driver's class: it runs for the tier
    ],
)
def test_what_the_policy_provides_is_taken(key: str) -> None:
    assert _diagnostics(_with(key)) == []


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("nvidia.com/gpus", "did you mean 'nvidia.com/gpu'? or, if nodes advertise it, state it in the allocatable"),
        ("amd.com/gpu", "did you mean 'nvidia.com/gpu'?"),  # AMD's device plugin: no pool has AMD cards
        ("nvidia.com/mig-1g.10gb", "did you mean 'nvidia.com/mig-3g.40gb'?"),  # a profile no layout has
        ("requests.nvidia.com/gpu", "write 'nvidia.com/gpu'"),  # the quota key, not the resource
        ("example.kubernetes.io/gpu", "remove it"),  # Kubernetes keeps the domain; it has no such resource
    ],
)
def test_a_resource_policyc_knows_nothing_provides_is_an_error(key: str, hint: str) -> None:
    ((code, path, message, found),) = _diagnostics(_with(key))
    assert (code, path) == ("PC488", (*GUARANTEE, key))
    assert key in message
    assert found is not None and found.startswith(hint)


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("rdma/hca_shared", "if nodes advertise it, state it in the allocatable of their pools"),
        ("vendor.example/thing", "if nodes advertise it, state it in the allocatable of their pools"),
        ("rdma/ibx", "did you mean 'rdma/ib'?"),
    ],
)
def test_a_resource_of_a_plugin_policyc_cannot_know_is_a_warning(key: str, hint: str) -> None:
    ((code, path, message, found),) = _diagnostics(_with(key))
    assert (code, path) == ("PC489", (*GUARANTEE, key))
    assert "only if one does" in message
    assert found is not None and found.startswith(hint)


def test_stating_the_resource_in_a_pools_allocatable_provides_it() -> None:
    # The warning's hint, followed: the H100 nodes advertise the site's rdma/hca_shared too.
    text = _with("rdma/hca_shared").replace("memory: 1800Gi}", 'memory: 1800Gi, rdma/hca_shared: "1000"}')
    assert _diagnostics(text) == []


QUOTA = ("spec", "tenants", 0, "quota", "requests")


@pytest.mark.parametrize(
    ("key", "code", "says", "hint"),
    [
        # One letter off the tier's class: under the policy's domain, only policyc makes classes.
        ("h10o.ai.example.com.deviceclass.resource.k8s.io/devices", "PC488", "which the policy does not emit",
         "did you mean 'h100.ai.example.com.deviceclass.resource.k8s.io/devices'?"),
        # The domain left out: a class some other driver could make.
        ("h100.deviceclass.resource.k8s.io/devices", "PC489", "only if a DRA driver or an administrator creates it",
         "did you mean 'h100.ai.example.com.deviceclass.resource.k8s.io/devices'?"),
        ("fpga.acme.io.deviceclass.resource.k8s.io/devices", "PC489", "only if a DRA driver",
         "check the DeviceClass's name: kubectl get deviceclasses"),
    ],
)  # fmt: skip
def test_dra_quota_keys_must_name_a_device_class(key: str, code: str, says: str, hint: str) -> None:
    ((found_code, path, message, found_hint),) = _diagnostics(_with("rdma/ib", key))
    assert (found_code, path) == (code, (*QUOTA, key))
    assert says in message
    assert found_hint == hint


def test_the_dra_drivers_classes_bind_nothing_without_a_dra_tier() -> None:
    key = "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"
    ((code, path, message, hint),) = _diagnostics(_with("rdma/ib", key).replace(", dra: true", ""))
    assert (code, path) == ("PC488", (*QUOTA, key))
    assert "no GPU tier has dra: true" in message and hint is not None and "dra: true" in hint


def test_an_invalid_class_name_in_the_extended_resource_form_is_an_error() -> None:
    key = "deviceclass.resource.kubernetes.io/H100_Big"  # a valid resource name, but no DeviceClass name
    ((code, path, message, _),) = _diagnostics(_with(key))
    assert (code, path) == ("PC488", (*GUARANTEE, key)) and "no DeviceClass can be named" in message


@pytest.mark.parametrize(
    ("tenant", "path"),
    [
        ("quota: {requests: {nvidia.com/gpus: 4}}", ("quota", "requests", "nvidia.com/gpus")),
        ("quota: {perPriorityClass: {high: {nvidia.com/gpus: 4}}}",
         ("quota", "perPriorityClass", "high", "nvidia.com/gpus")),
        ("limitRange: {max: {nvidia.com/gpus: 4}}", ("limitRange", "max", "nvidia.com/gpus")),
        ("queue: {capability: {nvidia.com/gpus: 4}}", ("queue", "capability", "nvidia.com/gpus")),
        ("queue: {guarantee: {nvidia.com/gpus: 4}}", ("queue", "guarantee", "nvidia.com/gpus")),
    ],
)  # fmt: skip
def test_every_place_a_tenant_names_resources_is_checked(tenant: str, path: tuple) -> None:
    text = POLICY + f"      {tenant}\n  priorityClasses: [{{name: high, value: 100}}]\n"
    assert [(code, p) for code, p, _, _ in _diagnostics(text)] == [("PC488", ("spec", "tenants", 0, *path))]


def test_nothing_is_said_when_a_pool_was_left_out_for_its_errors() -> None:
    # The pool left out may be the one advertising it: only the pool's own error is reported.
    text = _with("amd.com/gpu").replace("count: 8}\n", "count: 0}\n", 1)
    assert [code for code, *_ in _diagnostics(text)] == ["PC104"]


@pytest.mark.parametrize("name", ["ai-prod", "ai-dra", "ai-hetero", "ai-prod-kueue", "ai-prod-kai", "minimal"])
def test_the_shipped_policies_name_only_what_they_provide(name: str) -> None:
    result = policyc.compile((REPO / "policies" / f"{name}.yaml").read_text(), name=f"{name}.yaml")
    assert not [d for d in result.report.diagnostics if d.code in ("PC488", "PC489")]

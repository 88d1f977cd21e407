"""Hardware facts: a known product implies its vendor (PC490), a product as GPU Feature Discovery renames it on a MIG or
shared node is not a card (PC491), and a card without MIG is said to have none (PC444)."""

from __future__ import annotations

import pytest

import policyc
from policyc.gpu import accelerators, mig

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: hardware}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: accel, products: [PRODUCT]}
  nodePools:
    - name: accel
      usage: training
      nodes: ["accel-[01-04]"]
      gpu: {GPU}
      allocatable: {cpu: "192", memory: 1800Gi}
  tenants:
    - {name: research, namespaces: [research], queue: {guarantee: {gpu: 8}}}
  workloads:
    - {name: finetune, type: training, tenant: research, gpuTier: accel, gpus: 8, replicas: 2, kind: Job}
"""


def _policy(product: str, gpu: str) -> str:
    return POLICY.replace("PRODUCT", product).replace("GPU", gpu)


def _diagnostics(text: str) -> list[tuple[str, tuple, str, str | None]]:
    result = policyc.compile(text, name="hardware.yaml")
    return [(d.code, d.path, d.message, d.hint) for d in result.report.diagnostics]


GPU = ("spec", "nodePools", 0, "gpu")


@pytest.mark.parametrize(
    ("product", "vendor"),
    [
        ("AMD-Instinct-MI300X", "amd"),  # as in policies/ai-hetero.yaml
        ("AMD_Instinct_MI300X_OAM", "amd"),  # as AMD's node labeller writes it
        ("Ascend910B3", "huawei-ascend"),
        ("Gaudi3", "intel-gaudi"),
    ],
)
def test_an_omitted_vendor_of_another_vendors_product_is_an_error_whose_hint_works(product: str, vendor: str) -> None:
    text = _policy(product, f"product: {product}, count: 8")
    ((code, path, message, hint),) = _diagnostics(text)
    assert (code, path) == ("PC490", (*GPU, "product"))
    assert "nvidia when omitted" in message and "would not run" in message
    assert hint is not None and hint.startswith(f"add vendor: {vendor} ")
    # The hint, followed: the pool builds with its vendor's resource.
    fixed = policyc.compile(_policy(product, f"vendor: {vendor}, product: {product}, count: 8"), name="fixed.yaml")
    assert fixed.ok and not fixed.report.diagnostics, [str(d) for d in fixed.report.diagnostics]


def test_a_vendor_that_contradicts_the_product_is_an_error_whose_hint_works() -> None:
    text = _policy("NVIDIA-H100-80GB", "vendor: amd, product: NVIDIA-H100-80GB, count: 8")
    ((code, path, message, hint),) = _diagnostics(text)
    assert (code, path) == ("PC490", (*GPU, "vendor"))
    assert "gpu.vendor is amd" in message and "nvidia's" in message
    assert hint == "write vendor: nvidia"
    assert not _diagnostics(text.replace("vendor: amd", "vendor: nvidia"))


@pytest.mark.parametrize(
    "gpu",
    [
        "product: NVIDIA-H100-80GB, count: 8",  # NVIDIA, the default
        "vendor: amd, product: AMD-Instinct-MI300X, count: 8",
        "vendor: intel-gaudi, product: HL-225, count: 8",
        "vendor: amd, product: Site-Card-X, count: 8",  # a product policyc does not know: the vendor stands
    ],
)
def test_a_product_of_its_vendor_builds(gpu: str) -> None:
    product = gpu.split("product: ")[1].split(",")[0]
    assert _diagnostics(_policy(product, gpu)) == []


@pytest.mark.parametrize(
    ("product", "vendor"),
    [
        ("NVIDIA-H100-80GB-HBM3", "nvidia"),
        ("Tesla-T4", "nvidia"),
        ("A100-SXM4-40GB", "nvidia"),  # older drivers' names have no brand word
        ("NVIDIA-L4", "nvidia"),
        ("Radeon-PRO-W7900", "amd"),
        ("MI250X", "amd"),
        ("HL-225", "intel-gaudi"),
        ("Ascend310P", "huawei-ascend"),
        ("Site-Card-X", None),
        ("AMD-Ascend", None),  # claimed by two vendors: policyc does not guess
    ],
)
def test_the_maker_of_a_product(product: str, vendor: str | None) -> None:
    found = accelerators.maker(product)
    assert (found.name if found else None) == vendor


@pytest.mark.parametrize(
    ("renamed", "card", "says"),
    [
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "NVIDIA-A100-SXM4-40GB", "gpu.mig partitions the cards"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED", "NVIDIA-A100-SXM4-40GB", "gpu.mig partitions the cards"),
        ("NVIDIA-L4-SHARED", "NVIDIA-L4", "gpu.sharing shares the cards"),
    ],
)
def test_a_product_gfd_renamed_is_refused_with_the_cards_name(renamed: str, card: str, says: str) -> None:
    found = _diagnostics(_policy(renamed, f"product: {renamed}, count: 8"))
    assert [(code, path) for code, path, _, _ in found] == [
        ("PC491", ("spec", "gpuTiers", 0, "products", 0)),
        ("PC491", (*GPU, "product")),
    ]
    assert all(hint == f"did you mean '{card}'? ({says})" for *_, hint in found)
    assert not _diagnostics(_policy(card, f"product: {card}, count: 8"))


@pytest.mark.parametrize(
    ("product", "model"),
    [("NVIDIA-L4", "L4"), ("NVIDIA-L40S", "L40S"), ("Tesla-T4", "T4"), ("NVIDIA-A10G", "A10G"),
     ("Tesla-V100-SXM2-16GB", "V100")],
)  # fmt: skip
def test_a_card_without_mig_is_said_to_have_none(product: str, model: str) -> None:
    text = _policy(product, f"product: {product}, count: 8, mig: {{devices: {{1g.10gb: 7}}}}")
    ((_, path, message, hint),) = [d for d in _diagnostics(text) if d[0] == "PC444"]
    assert path == (*GPU, "mig")
    assert f"the {model} ({product}) has no MIG" in message and "does not know" not in message
    assert hint is not None and hint.startswith("remove gpu.mig")


@pytest.mark.parametrize(
    "product",
    # NVIDIA's MIG user guide, "Supported GPUs": these have MIG (B200's profiles are not in policyc's table).
    ["NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-PCIE-40GB", "NVIDIA-A30", "NVIDIA-H100-80GB-HBM3", "NVIDIA-H20",
     "NVIDIA-H200", "NVIDIA-B200"],
)  # fmt: skip
def test_cards_with_mig_are_not_said_to_have_none(product: str) -> None:
    assert mig.model_without_mig(product) is None

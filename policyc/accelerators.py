"""Accelerator vendors: the resource each vendor's device plugin advertises and the node labels its feature
discovery writes.

A pool's product taint (and the toleration of it in templates) uses the product label of the pool's vendor, so
that policyc's taint and the label describe the node with one key. Vendors whose discovery writes no product
label get policyc's own, `<domain>/gpu.product`, which the node script sets.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Vendor:
    name: str
    resource: str
    """The extended resource its device plugin advertises by default."""
    discovery: str | None
    """What labels its nodes (None: nothing does; policyc labels the product itself)."""
    product_label: str | None
    count_label: str | None = None
    memory_label: str | None = None
    """GPU memory in MiB."""


GFD_PRODUCT = "nvidia.com/gpu.product"
"""GPU Feature Discovery's product label."""

VENDORS = {
    v.name: v
    for v in (
        Vendor("nvidia", "nvidia.com/gpu", "GPU Feature Discovery", GFD_PRODUCT, "nvidia.com/gpu.count",
               "nvidia.com/gpu.memory"),
        Vendor("amd", "amd.com/gpu", "AMD's node labeller", "amd.com/gpu.product-name"),
        Vendor("intel-gaudi", "habana.ai/gaudi", None, None),
        Vendor("huawei-ascend", "huawei.com/Ascend910", None, None),
    )
}  # fmt: skip
"""Vendor name -> facts: NVIDIA's GPU Feature Discovery, AMD's k8s-device-plugin and node labeller, Intel Gaudi's
device plugin (habana.ai/gaudi), Huawei's Ascend device plugin (huawei.com/Ascend910; Ascend 910B and 310P cards are
advertised under their own names, set `gpu.resource`)."""
NVIDIA = VENDORS["nvidia"]

CPU_TIER = "cpu"
"""The tier of pools without accelerators and of workloads that ask for none (a name no GPU tier may take)."""


def product_key(vendor: Vendor, domain: str) -> str:
    """The node label (and taint) key that names a pool's product."""
    return vendor.product_label or f"{domain}/gpu.product"


def owned_labels(vendor: Vendor) -> dict[str, str]:
    """The vendor's discovery labels -> the field policyc sets it from when the pool says discovery does not run."""
    fields = {vendor.product_label: "gpu.product", vendor.count_label: "gpu.count", vendor.memory_label: "gpu.memory"}
    return {key: field for key, field in fields.items() if key}

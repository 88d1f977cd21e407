"""Accelerator vendors: the resource each vendor's device plugin advertises and the node labels its feature
discovery writes.

A pool's product taint (and the toleration of it in templates) uses the product label of the pool's vendor, so
that policyc's taint and the label describe the node with one key. Vendors whose discovery writes no product
label get policyc's own, `<domain>/gpu.product`, which the node script sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, eq=False)
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
    products: re.Pattern[str] | None = None
    """Product names known to be its (searched, ignoring case): a pool whose vendor contradicts them is refused."""


GFD_PRODUCT = "nvidia.com/gpu.product"
"""GPU Feature Discovery's product label."""
GPU_OPERATOR_NAMESPACE = "gpu-operator"
"""NVIDIA's GPU Operator's namespace, where its Helm chart is installed by its documented command."""

VENDORS = {
    v.name: v
    for v in (
        Vendor("nvidia", "nvidia.com/gpu", "GPU Feature Discovery", GFD_PRODUCT, "nvidia.com/gpu.count",
               "nvidia.com/gpu.memory", re.compile(
                   r"^(NVIDIA|Tesla|Quadro|GeForce|TITAN|GRID)([-_ ]|$)"
                   r"|^(A100|A30|A40|A10G?|A16|A2|H100|H200|H20|H800|GH200|GB200|B200|B300|L4|L40S?|L20|T4|V100|P100|P40"
                   r"|P4|K80)([-_ ]|$)", re.IGNORECASE)),
        Vendor("amd", "amd.com/gpu", "AMD's node labeller", "amd.com/gpu.product-name", products=re.compile(
            r"^AMD([-_ ]|$)|Instinct|Radeon|(^|[-_ ])MI[0-9]{3}[A-Z]?([-_ ]|$)", re.IGNORECASE)),
        Vendor("intel-gaudi", "habana.ai/gaudi", None, None, products=re.compile(r"Gaudi|Habana|^HL-[0-9]",
                                                                                 re.IGNORECASE)),
        Vendor("huawei-ascend", "huawei.com/Ascend910", None, None, products=re.compile(r"Ascend", re.IGNORECASE)),
    )
}  # fmt: skip
"""Vendor name -> facts: NVIDIA's GPU Feature Discovery, AMD's k8s-device-plugin and node labeller, Intel Gaudi's
device plugin (habana.ai/gaudi), Huawei's Ascend device plugin (huawei.com/Ascend910; Ascend 910B and 310P cards are
advertised under their own names, set `gpu.resource`). The product patterns: NVML's names of NVIDIA's cards as GPU
Feature Discovery labels them (`NVIDIA-H100-80GB-HBM3`, `Tesla-T4`, or the bare model, `A100-SXM4-40GB`, from older
drivers), AMD's node labeller's (`AMD_Instinct_MI300X_OAM`), Intel Gaudi's (`Gaudi2`, `HL-225`) and Ascend's
(`Ascend910B3`)."""
NVIDIA = VENDORS["nvidia"]

CPU_TIER = "cpu"
"""The tier of pools without accelerators and of workloads that ask for none (a name no GPU tier may take)."""


def maker(product: str) -> Vendor | None:
    """The vendor whose product names `product` is one of (None: policyc does not know it)."""
    makers = [v for v in VENDORS.values() if v.products is not None and v.products.search(product)]
    return makers[0] if len(makers) == 1 else None


def product_key(vendor: Vendor, domain: str) -> str:
    """The node label (and taint) key that names a pool's product."""
    return vendor.product_label or f"{domain}/gpu.product"


def owned_labels(vendor: Vendor) -> dict[str, str]:
    """The vendor's discovery labels -> the field policyc sets it from when the pool says discovery does not run."""
    fields = {vendor.product_label: "gpu.product", vendor.count_label: "gpu.count", vendor.memory_label: "gpu.memory"}
    return {key: field for key, field in fields.items() if key}

"""Extended resources no known device plugin advertises: a typo in `gpuResource` or a pool's `gpu.resource`
(`nvidia.com/gpus`) is a valid resource name, so nothing refuses it, and every pod asking for it stays Pending."""

from __future__ import annotations

import re
from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag, did_you_mean
from policyc.ir import Cluster
from policyc.registry import every_settings

DEVICE_RESOURCES = (
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
    "habana.ai/gaudi",
    "huawei.com/Ascend910",
    "huawei.com/Ascend310",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "google.com/tpu",
)
"""Resources device plugins advertise under these exact names (NVIDIA's, AMD's, Intel's, Habana's, Huawei's, AWS
Neuron's, GKE's TPU), and those of the scheduler backends' device plugins (their `settings.DEVICE_RESOURCES`)."""
DEVICE_PATTERNS = (
    re.compile(r"nvidia\.com/mig-[0-9]+g\.[0-9]+gb(\.me)?"),  # MIG devices under the mixed strategy
    re.compile(r"amd\.com/(cpx|dpx|qpx|spx)_nps[0-9]+"),  # AMD partitions under the mixed naming strategy
    re.compile(r"huawei\.com/Ascend(910[A-C0-9]*|310P?)"),
)


def known_devices() -> tuple[str, ...]:
    return (*DEVICE_RESOURCES, *(r for m in every_settings() for r in m.DEVICE_RESOURCES))


def is_known_device(resource: str) -> bool:
    return resource in known_devices() or any(p.fullmatch(resource) for p in DEVICE_PATTERNS)


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    for resource, at in cluster.accelerator_sources().items():
        if is_known_device(resource):
            continue
        suggestion = did_you_mean(resource, known_devices())
        yield diag(
            "unknown-device-resource",
            f"no known device plugin advertises '{resource}': pods asking for it would stay Pending",
            at,
            hint=suggestion
            if suggestion and suggestion.startswith("did you mean")
            else ("check the resource name on a GPU node (kubectl describe node: Allocatable)"),
        )

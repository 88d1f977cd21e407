"""Dynamic Resource Allocation (`resource.k8s.io/v1`, GA in Kubernetes 1.34) for GPU tiers that opt in: a quota per
GPU model, which extended resources cannot give (every NVIDIA card is `nvidia.com/gpu`).

A DRA tier gets a DeviceClass (`<tier>.<domain>`) selecting its products among the devices NVIDIA's DRA driver
publishes; each workload of the tier a ResourceClaimTemplate in its namespace asking for its GPUs of that class; its
pods claim them (`spec.resourceClaims`, `resources.claims`) instead of requesting `nvidia.com/gpu`; and a tenant's
`gpu` in `quota.requests` becomes the class's quota key, `<class>.deviceclass.resource.k8s.io/devices`, which the
API server counts per ResourceClaim.

Inside policyc that key stands for the tier's GPUs wherever a resource name does (pool capacity, pod requests of the
contract, quotas); only the pod templates write it as a claim.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from policyc.k8s.cel import literal

DRIVER = "gpu.nvidia.com"
"""NVIDIA's DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu): its devices' driver name and attribute domain."""
DEVICES_SUFFIX = ".deviceclass.resource.k8s.io/devices"
CLAIM = "gpus"
"""The name of the claim in the pod spec and of the request in the ResourceClaimTemplate."""
SELECTOR_MAX_LENGTH = 10 * 1024
"""`CELSelectorExpressionMaxLength` (resource/v1 types)."""


DRIVER_CLASSES = (
    "gpu.nvidia.com",
    "mig.nvidia.com",
    "vfio.gpu.nvidia.com",
    "compute-domain-daemon.nvidia.com",
    "compute-domain-default-channel.nvidia.com",
)
"""The DeviceClasses NVIDIA's DRA driver installs (its chart's `templates/deviceclass-*.yaml`)."""
EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"
"""A pod may request devices of any DeviceClass as the extended resource `<prefix><class>` (KEP-5004, DRA extended
resources, beta in 1.36): the scheduler claims them for it."""


def class_name(tier: str, domain: str) -> str:
    return f"{tier}.{domain}"


def devices_key(device_class: str) -> str:
    """The ResourceQuota key counting devices of `device_class` in a namespace's ResourceClaims."""
    return device_class + DEVICES_SUFFIX


def is_devices_key(resource: str) -> bool:
    return resource.endswith(DEVICES_SUFFIX)


def quota_key(resource: str) -> str:
    """The ResourceQuota key bounding `resource`: `requests.<resource>`, or a DRA tier's devices key itself."""
    return resource if is_devices_key(resource) else f"requests.{resource}"


def device_class_of(key: str) -> str:
    return key.removesuffix(DEVICES_SUFFIX)


def class_named(resource: str) -> str | None:
    """The DeviceClass a resource name counts the devices of: a quota's devices key, or the extended resource of the
    class (`EXTENDED_PREFIX`); None for any other resource."""
    if is_devices_key(resource):
        return device_class_of(resource)
    return resource.removeprefix(EXTENDED_PREFIX) if resource.startswith(EXTENDED_PREFIX) else None


def product_names(product: str) -> list[str]:
    """The driver's `productName` values that GPU Feature Discovery writes as `product`.

    GFD's label is NVML's name with spaces turned into '-' (`NVIDIA H100 80GB HBM3` -> `NVIDIA-H100-80GB-HBM3`), and
    NVML names have hyphens of their own (`NVIDIA A100-SXM4-80GB`), so each '-' may have been either. Listing every
    form keeps the selector to string equality, which every CEL environment has at a known cost."""
    parts = product.split("-")
    return sorted(
        "".join(itertools.chain.from_iterable(zip(parts, (*separators, ""), strict=True))) for separators in
        itertools.product("- ", repeat=len(parts) - 1)
    )  # fmt: skip


def selector(products: Iterable[str]) -> str:
    """The CEL expression selecting NVIDIA GPUs (whole cards, not MIG devices) of `products`."""
    names = sorted({n for p in products for n in product_names(p)})
    attributes = f"device.attributes[{literal(DRIVER)}]"
    return (
        f"device.driver == {literal(DRIVER)} && {attributes}.type == 'gpu' && "
        f"{attributes}.productName in {literal(names)}"
    )


def device_class(products: Iterable[str], meta: dict) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": meta,
        "spec": {"selectors": [{"cel": {"expression": selector(products)}}]},
    }


def claim_template_name(workload: str) -> str:
    return f"{workload}-{CLAIM}"


def claim_template(device_class: str, count: int, meta: dict) -> dict:
    """A ResourceClaimTemplate: each pod gets a claim for exactly `count` devices of `device_class`."""
    request = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": meta,
        "spec": {"spec": {"devices": {"requests": [{"name": CLAIM, "exactly": request}]}}},
    }


def claimed(requests: Mapping[str, Any]) -> list[str]:
    """The DRA device keys among a pod's requests (what its template claims instead of requesting)."""
    return [r for r in requests if is_devices_key(r)]


ClaimDevices = Mapping[tuple[str, str], Mapping[str, int]]
"""(namespace, ResourceClaimTemplate name) -> devices key -> devices each claim made from it takes."""
CLAIMS_COUNT = "count/resourceclaims.resource.k8s.io"


def claim_devices(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, int]]:
    """What each ResourceClaimTemplate among `objects` claims (its exact-count requests, by device class)."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for obj in objects:
        if obj.get("kind") != "ResourceClaimTemplate" or obj.get("apiVersion") != "resource.k8s.io/v1":
            continue
        devices: dict[str, int] = {}
        for request in obj["spec"]["spec"]["devices"].get("requests", []):
            exactly = request.get("exactly") or {}
            if exactly.get("allocationMode", "ExactCount") == "ExactCount":
                key = devices_key(exactly["deviceClassName"])
                devices[key] = devices.get(key, 0) + exactly.get("count", 1)
        out[(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = devices
    return out


def pod_claims(pod: Mapping[str, Any], claims: ClaimDevices) -> tuple[dict[str, int], list[str]]:
    """The devices the claims of `pod` (made from templates in its namespace) take, by devices key, and the claim
    templates it names that `claims` does not have (its pods would never start)."""
    namespace = (pod.get("metadata") or {}).get("namespace", "")
    taken: dict[str, int] = {}
    missing = []
    for ref in (pod.get("spec") or {}).get("resourceClaims") or []:
        name = ref.get("resourceClaimTemplateName")
        if name is None:
            continue
        if (namespace, name) not in claims:
            missing.append(name)
            continue
        for key, count in claims[(namespace, name)].items():
            taken[key] = taken.get(key, 0) + count
    return taken, missing

"""Builders for the parts every emitted Kubernetes object shares."""

from __future__ import annotations

from collections.abc import Mapping

QUOTA_OBJECT_COUNTS = frozenset(
    {
        "pods",
        "services",
        "configmaps",
        "secrets",
        "persistentvolumeclaims",
        "replicationcontrollers",
        "resourcequotas",
        "services.loadbalancers",
        "services.nodeports",
    }
)
"""Object counts a ResourceQuota limits by plain name (any other kind through count/<resource>.<group>)."""

MANAGED_BY = "app.kubernetes.io/managed-by"
PART_OF = "app.kubernetes.io/part-of"


def metadata(
    name: str,
    policy: str,
    *,
    namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict:
    """`metadata` with policyc's ownership labels; maps sorted so output never depends on build order."""
    out: dict = {"name": name}
    if namespace is not None:
        out["namespace"] = namespace
    out["labels"] = dict(sorted({MANAGED_BY: "policyc", PART_OF: policy, **(labels or {})}.items()))
    if annotations:
        out["annotations"] = dict(sorted(annotations.items()))
    return out


def resource_list(resources: Mapping) -> dict[str, str]:
    """A ResourceList with canonical quantity strings, sorted by resource name."""
    return {name: str(amount) for name, amount in sorted(resources.items())}

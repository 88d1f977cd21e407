"""Scheduler-independent Kubernetes objects: PriorityClasses, and per tenant its Namespaces,
ResourceQuotas (including the zero-pods quota on forbidden priority classes) and LimitRanges."""

from __future__ import annotations

from policyc.artifacts import Artifact, Manifest
from policyc.ir import Cluster, Tenant
from policyc.k8s.objects import metadata, resource_list

QUOTA_NAME = "tenant-quota"
FORBIDDEN_PRIORITIES_QUOTA_NAME = "tenant-forbidden-priority-classes"
LIMIT_RANGE_NAME = "tenant-limits"


def emit(cluster: Cluster) -> list[Artifact]:
    out = [Artifact(f"tenants/{t.name}.yaml", tuple(_tenant(cluster, t)), synced=True) for t in cluster.tenants]
    if cluster.priority_classes:
        out.append(Artifact("cluster/priorityclasses.yaml", tuple(_priority_classes(cluster)), synced=True))
    return out


def _priority_classes(cluster: Cluster) -> list[Manifest]:
    out = []
    for c in cluster.priority_classes:
        obj: dict = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": metadata(c.name, cluster.name),
            "value": c.value,
        }
        # Fields left at the API server's defaults are omitted, so Argo CD sees no drift.
        if c.global_default:
            obj["globalDefault"] = True
        if c.preemption_policy != "PreemptLowerPriority":
            obj["preemptionPolicy"] = c.preemption_policy
        if c.description:
            obj["description"] = c.description
        out.append(Manifest(obj, (c.path,)))
    return out


def _tenant(cluster: Cluster, t: Tenant) -> list[Manifest]:
    out = []
    tenant_label = {cluster.keys.tenant: t.name}
    for ns in t.namespaces:
        out.append(
            Manifest(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(ns, cluster.name, labels=tenant_label)},
                (t.path,),
            )
        )
        if t.quota is not None and t.quota.hard:
            out.append(
                Manifest(
                    {
                        "apiVersion": "v1",
                        "kind": "ResourceQuota",
                        "metadata": metadata(QUOTA_NAME, cluster.name, namespace=ns, labels=tenant_label),
                        "spec": {"hard": resource_list(t.quota.hard)},
                    },
                    ((*t.path, "quota"),),
                )
            )
        if t.forbidden_priority_classes:
            out.append(
                Manifest(
                    {
                        "apiVersion": "v1",
                        "kind": "ResourceQuota",
                        "metadata": metadata(
                            FORBIDDEN_PRIORITIES_QUOTA_NAME, cluster.name, namespace=ns, labels=tenant_label
                        ),
                        "spec": {
                            "hard": {"pods": "0"},
                            "scopeSelector": {
                                "matchExpressions": [
                                    {
                                        "scopeName": "PriorityClass",
                                        "operator": "In",
                                        "values": list(t.forbidden_priority_classes),
                                    }
                                ]
                            },
                        },
                    },
                    ((*t.path, "priorityClasses"),),
                )
            )
        if t.limit_range is not None:
            lr = t.limit_range
            limit: dict = {"type": "Container"}
            for key, resources in (
                ("default", lr.default),
                ("defaultRequest", lr.default_request),
                ("max", lr.max),
                ("min", lr.min),
            ):
                if resources:
                    limit[key] = resource_list(resources)
            out.append(
                Manifest(
                    {
                        "apiVersion": "v1",
                        "kind": "LimitRange",
                        "metadata": metadata(LIMIT_RANGE_NAME, cluster.name, namespace=ns, labels=tenant_label),
                        "spec": {"limits": [limit]},
                    },
                    ((*t.path, "limitRange"),),
                )
            )
    return out

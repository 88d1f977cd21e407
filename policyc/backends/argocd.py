"""The Argo CD layer: sync waves, sync options for custom resources, and kustomization.yaml.

Waves order creation: namespaces and priority classes first, then what lives in namespaces or
configures a controller, then the scheduler's queues. Custom resources carry
``SkipDryRunOnMissingResource=true`` so that a first sync does not fail before their CRDs exist. Namespaces carry
``Prune=false``: a tenant deleted from the policy must not take its namespace, and every job and volume claim in
it, with it when an application prunes (the README says how to retire a tenant).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace

from policyc.artifacts import Artifact, Manifest
from policyc.crd_schemas import crd_schema

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"

WAVES = {
    "Namespace": 0,
    "PriorityClass": 0,
    "DeviceClass": 0,
    "ResourceClaimTemplate": 1,
    "ResourceQuota": 1,
    "LimitRange": 1,
    "ConfigMap": 1,
    "PrometheusRule": 1,
    "ValidatingAdmissionPolicy": 1,
    "ValidatingAdmissionPolicyBinding": 2,
    "MutatingAdmissionPolicy": 1,
    "MutatingAdmissionPolicyBinding": 2,
    "NodeSet": 2,  # Slinky's slurmd pods: after the PriorityClasses and the quotas of their namespace
}
"""Sync waves of the shared kinds: namespaces first, then what lives in them and the schedulers' configuration."""
SCHEDULER_WAVE = 2
"""Every other kind (a scheduler backend's objects) comes after them, in the backend's own `WAVES` where its objects
name each other."""
NEVER_PRUNED = frozenset({"Namespace"})
"""Kinds Argo CD must leave in place when they leave the output: deleting one deletes everything in it."""


def _annotate(m: Manifest, waves: Mapping[str, int]) -> Manifest:
    """A copy of the manifest with the Argo CD annotations (only the metadata is copied; the rest is shared)."""
    obj = m.obj
    annotations = {**obj["metadata"].get("annotations", {}), SYNC_WAVE: str(waves[obj["kind"]])}
    if crd_schema(obj["apiVersion"], obj["kind"]) is not None:
        annotations[SYNC_OPTIONS] = "SkipDryRunOnMissingResource=true"
    elif obj["kind"] in NEVER_PRUNED:
        annotations[SYNC_OPTIONS] = "Prune=false"
    return Manifest({**obj, "metadata": {**obj["metadata"], "annotations": dict(sorted(annotations.items()))}},
                    m.sources)  # fmt: skip


def finalize(artifacts: list[Artifact], scheduler_waves: Mapping[str, int]) -> list[Artifact]:
    """Annotate what Argo CD applies and add the kustomization.yaml that lists it in dependency order."""
    waves = defaultdict(lambda: SCHEDULER_WAVE, {**scheduler_waves, **WAVES})
    out = [replace(a, manifests=tuple(_annotate(m, waves) for m in a.manifests)) if a.synced else a for a in artifacts]
    synced = sorted(
        (a for a in out if a.synced), key=lambda a: (min(waves[m.obj["kind"]] for m in a.manifests), a.path)
    )
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [a.path for a in synced],
    }
    return [*out, Artifact("kustomization.yaml", (Manifest(kustomization),))]

"""The Argo CD layer: sync waves, sync options for custom resources, and kustomization.yaml.

Both orders follow from what each object needs created before it (`policyc.k8s.dependencies`):

- An object's sync wave is its creation depth: 0 if it needs nothing, else one more than the deepest object it needs
  (a child queue one more than its parent). Argo CD starts a wave only once the one before is applied and
  healthy, and applies the objects of one kind within a wave at the same time (gitops-engine's sync tasks), so an
  object and one it needs must not share a wave.
- kustomization.yaml lists each file after every file holding something it needs, and says
  `sortOptions: {order: fifo}`: kustomize then keeps that order and each file's own (its objects by wave,
  `policyc.output.write`). Its default, `legacy`, sorts by kind and then name instead, which puts a child queue named
  before its parent first. `kubectl apply -k` creates the objects in the order kustomize prints them.

Custom resources carry ``SkipDryRunOnMissingResource=true`` so that a first sync does not fail before their CRDs
exist. Namespaces carry ``Prune=false``: a tenant deleted from the policy must not take its namespace, and every job
and volume claim in it, with it when an application prunes (docs/gitops.md says how to retire a tenant).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import replace

from policyc.artifacts import Artifact, Manifest
from policyc.k8s import dependencies
from policyc.k8s.crd_schemas import crd_schema
from policyc.k8s.dependencies import ObjectId, Reference, identity

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
NEVER_PRUNED = frozenset({"Namespace"})
"""Kinds Argo CD must leave in place when they leave the output: deleting one deletes everything in it."""


def _annotate(m: Manifest, wave: int) -> Manifest:
    """A copy of the manifest with the Argo CD annotations (only the metadata is copied; the rest is shared)."""
    obj = m.obj
    annotations = {**obj["metadata"].get("annotations", {}), SYNC_WAVE: str(wave)}
    if crd_schema(obj["apiVersion"], obj["kind"]) is not None:
        annotations[SYNC_OPTIONS] = "SkipDryRunOnMissingResource=true"
    elif obj["kind"] in NEVER_PRUNED:
        annotations[SYNC_OPTIONS] = "Prune=false"
    return Manifest({**obj, "metadata": {**obj["metadata"], "annotations": dict(sorted(annotations.items()))}},
                    m.sources)  # fmt: skip


def finalize(artifacts: list[Artifact], references: Iterable[Reference]) -> list[Artifact]:
    """Annotate what Argo CD applies and add the kustomization.yaml that lists it in dependency order; `references`
    are the scheduler backend's own (`SchedulerBackend.REFERENCES`)."""
    synced = [a for a in artifacts if a.synced]
    held = {a.path: [identity(m.obj) for m in a.manifests] for a in synced}  # each object's, once
    objects = [m.obj for a in synced for m in a.manifests]
    identities = [i for a in synced for i in held[a.path]]
    graph = dependencies.needs(objects, (*dependencies.REFERENCES, *references), identities)
    waves = dependencies.depths(graph)
    out = [
        replace(a, manifests=tuple(_annotate(m, waves[i]) for m, i in zip(a.manifests, held[a.path], strict=True)))
        if a.synced
        else a
        for a in artifacts
    ]
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "sortOptions": {"order": "fifo"},
        "resources": _file_order(held, graph),
    }
    return [*out, Artifact("kustomization.yaml", (Manifest(kustomization),))]


def _file_order(held: Mapping[str, list[ObjectId]], graph: Mapping[ObjectId, frozenset[ObjectId]]) -> list[str]:
    """The paths of the files (path -> the identities of the objects it holds), each after every file holding an
    object that one of its objects needs (of the files free to go next, the first by path)."""
    home = {i: path for path, identities in held.items() for i in identities}
    waiting = {path: {home[n] for i in identities for n in graph[i]} - {path} for path, identities in held.items()}
    needed_by: dict[str, list[str]] = {}
    for path, needed in waiting.items():
        for other in needed:
            needed_by.setdefault(other, []).append(path)
    ready = [path for path, needed in waiting.items() if not needed]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        path = heapq.heappop(ready)
        order.append(path)
        for other in needed_by.get(path, ()):
            waiting[other].discard(path)
            if not waiting[other]:
                heapq.heappush(ready, other)
    if len(order) < len(held):  # files that need each other: the emitters must split them (a policyc bug)
        raise ValueError(f"no file order: {sorted(set(waiting) - set(order))} need each other")
    return order


APPLICATION_SET_FILE = "applicationset.yaml"
"""A fleet's build (`policyc build DIR -o OUT` with cluster documents): OUT/<cluster>/ for each, and this file."""


APPLICATION_SYNC = {
    "automated": {"prune": True, "selfHeal": True},
    "syncOptions": ["ServerSideApply=true", "PruneLast=true"],
}
"""How each cluster's Application syncs: automatically, so that the cluster follows the policy, as the Argo CD plugin's
Application does (docs/argocd-plugin.md): what the policy drops is pruned, after everything else is in place; a change
made by hand is undone. Server-side apply, because client-side apply keeps a copy of each object in an annotation of at
most 256 KiB, which a large queue configuration held in one ConfigMap can outgrow."""


def application_set(
    name: str,
    destinations: Mapping[str, Mapping[str, str]],
    root: str,
    repo_url: str,
    revision: str,
    project: str = "default",
    namespace: str = "argocd",
) -> bytes:
    """An Argo CD ApplicationSet named `name` in Argo CD's `namespace`, deploying each cluster's directory
    `<root>/<cluster>` of the repository `repo_url` at `revision` to the cluster's destination (cluster -> {server:
    URL} or {name: its Argo CD name}), as an Application of the Argo CD `project`.

    Its list generator has an element per cluster; the template leaves the destination field a cluster does not use
    empty, which Argo CD reads as not set. Each Application syncs on its own (`APPLICATION_SYNC`)."""
    elements = [
        {"cluster": cluster, "path": f"{root}/{cluster}" if root else cluster,
         "server": destination.get("server", ""), "name": destination.get("name", "")}
        for cluster, destination in sorted(destinations.items())
    ]  # fmt: skip
    application_set = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "goTemplate": True,
            "goTemplateOptions": ["missingkey=error"],
            "generators": [{"list": {"elements": elements}}],
            "template": {
                "metadata": {"name": f"{name}-{{{{.cluster}}}}"},
                "spec": {
                    "project": project,
                    "source": {"repoURL": repo_url, "targetRevision": revision, "path": "{{.path}}"},
                    "destination": {"server": "{{.server}}", "name": "{{.name}}"},
                    "syncPolicy": APPLICATION_SYNC,
                },
            },
        },
    }
    from policyc.output.yaml_emitter import dump

    return (f"# Generated by policyc from the fleet '{name}'; do not edit.\n" + dump(application_set)).encode()

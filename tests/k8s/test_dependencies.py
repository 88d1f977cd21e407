"""What an object needs created before it (`policyc.k8s.dependencies`), on hand-made objects, and the orders
`policyc.output.argocd` derives from it. The shipped trees are checked against kustomize's and Argo CD's own
orders in tests/test_apply_order.py."""

from __future__ import annotations

import pytest

from policyc.artifacts import Artifact, Manifest
from policyc.k8s.dependencies import REFERENCES, Reference, depths, needs
from policyc.output import argocd

QUEUE = ("example.com", "Queue")
PARENT = Reference(QUEUE, ("spec", "parent"), QUEUE)


def obj(api_version: str, kind: str, name: str, namespace: str | None = None, labels=None, **fields) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {}), **({"labels": labels} if labels else {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def queue(name: str, parent: str | None = None) -> dict:
    return obj("example.com/v1", "Queue", name, spec={"parent": parent} if parent else {})


def binding(kind: str, name: str, selector: dict) -> dict:
    spec = {"policyName": name, "matchResources": {"namespaceSelector": selector}}
    return obj("admissionregistration.k8s.io/v1", kind, name, spec=spec)


OBJECTS = [
    obj("v1", "Namespace", "team", labels={"tier": "gold"}),
    obj("v1", "ResourceQuota", "quota", "team"),
    obj("v1", "LimitRange", "limits", "team"),
    obj("scheduling.k8s.io/v1", "PriorityClass", "high"),
    obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "check"),
    binding("ValidatingAdmissionPolicyBinding", "check", {"matchLabels": {"tier": "gold"}}),
    obj("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", "elsewhere"),
    binding("MutatingAdmissionPolicyBinding", "elsewhere",
            {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["team"]}]}),
    obj("apps/v1", "Deployment", "web", "team",
        spec={"template": {"spec": {"priorityClassName": "high", "containers": []}}}),
    queue("top"),
    queue("mid", "top"),
    queue("leaf", "mid"),
    queue("orphan", "not-emitted"),
    obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.org",
        spec={"group": "example.org", "names": {"kind": "Widget"}}),
    obj("example.org/v1", "Widget", "w", "team"),
]  # fmt: skip


def test_each_object_needs_what_it_names_its_namespace_and_what_admits_its_pods() -> None:
    graph = needs(OBJECTS, (*REFERENCES, PARENT))
    ns = ("", "Namespace", "", "team")
    assert graph["", "ResourceQuota", "team", "quota"] == {ns}
    assert graph["admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "", "check"] == {
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "", "check")
    }
    # The Deployment makes pods in `team`: its namespace, the class it names, the quota and limit range there, and
    # the binding whose selector matches the namespace's labels (tier=gold), not the one that excludes it by name.
    assert graph["apps", "Deployment", "team", "web"] == {
        ns,
        ("scheduling.k8s.io", "PriorityClass", "", "high"),
        ("", "ResourceQuota", "team", "quota"),
        ("", "LimitRange", "team", "limits"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "", "check"),
    }
    assert graph["example.com", "Queue", "", "leaf"] == {("example.com", "Queue", "", "mid")}
    assert graph["example.com", "Queue", "", "orphan"] == set()  # its parent is not emitted: nothing to order
    assert graph["example.org", "Widget", "team", "w"] == {
        ns,
        ("apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.org"),
    }
    # without the backend's reference, a queue needs nothing
    assert needs(OBJECTS, REFERENCES)["example.com", "Queue", "", "leaf"] == set()


def test_depth_is_one_more_than_the_deepest_object_needed() -> None:
    d = depths(needs(OBJECTS, (*REFERENCES, PARENT)))
    assert d["", "Namespace", "", "team"] == d["example.com", "Queue", "", "top"] == 0
    assert d["example.com", "Queue", "", "mid"] == 1
    assert d["example.com", "Queue", "", "leaf"] == 2
    # namespace (0) -> quota (1) -> Deployment (2); policy (0) -> binding (1) -> Deployment (2)
    assert d["apps", "Deployment", "team", "web"] == 2


def test_a_cycle_is_a_bug_not_a_loop() -> None:
    with pytest.raises(ValueError, match="dependency cycle"):
        depths(needs([queue("a", "b"), queue("b", "a")], [PARENT]))


def test_the_kustomization_lists_files_after_what_they_need_and_keeps_that_order() -> None:
    files = [
        Artifact("a/leaf.yaml", (Manifest(queue("leaf", "mid")),), synced=True),
        Artifact("b/mid.yaml", (Manifest(queue("mid", "top")),), synced=True),
        Artifact("c/top.yaml", (Manifest(queue("top")),), synced=True),
        Artifact("templates/x.yaml", (Manifest(queue("x", "top")),), template=True),
    ]
    *out, kustomization = argocd.finalize(files, [PARENT])
    assert kustomization.manifests[0].obj["sortOptions"] == {"order": "fifo"}
    assert kustomization.manifests[0].obj["resources"] == ["c/top.yaml", "b/mid.yaml", "a/leaf.yaml"]
    waves = {m.obj["metadata"]["name"]: m.obj["metadata"].get("annotations", {}).get(argocd.SYNC_WAVE)
             for a in out for m in a.manifests}  # fmt: skip
    assert waves == {"leaf": "2", "mid": "1", "top": "0", "x": None}  # a template is not synced


def test_files_that_need_each_other_are_a_bug() -> None:
    files = [
        Artifact("one.yaml", (Manifest(queue("a", "b")), Manifest(queue("c"))), synced=True),
        Artifact("two.yaml", (Manifest(queue("b", "c")),), synced=True),
    ]
    with pytest.raises(ValueError, match="need each other"):
        argocd.finalize(files, [PARENT])

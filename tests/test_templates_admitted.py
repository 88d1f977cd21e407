"""Every template of every shipped policy and of `policyc init` runs on the cluster the output describes.

Independently of the compiler's own proof: the written files are read back, and every pod each template creates
at once (all replicas of every role) is sent through the admission model one after another, in the template's
namespace with the LimitRanges, ResourceQuotas and PriorityClasses the output applies, each admitted pod adding
to quota usage as on a real API server; then each pod must pass kube-scheduler's node-affinity and taint filters
on the nodes of at least one pool of the node plan (nodes/plan.json).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from policyc.commands.init import STARTER
from policyc.compiler import compile_file
from policyc.k8s.admission import admit_pod, charge
from policyc.k8s.scheduling import RequiredNodeAffinity, taint_filter
from tests.conftest import POLICIES, example_policies


def _documents(data: bytes) -> list[dict]:
    return [d for d in YAML(typ="safe").load_all(io.BytesIO(data)) if d]


def _objects_file(path: str) -> bool:
    """A file of Kubernetes objects (not the node layer's scripts and data under nodes/)."""
    return path.endswith(".yaml") and not path.startswith("nodes/")


def _output(policy: Path) -> dict[str, bytes]:
    result = compile_file(policy, policy.name)
    assert result.ok, [d.message for d in result.report.diagnostics]
    return {path: f.data for path, f in result.files.items()}


def _most(autoscaler: dict) -> int:
    """The most replicas an autoscaler (a HorizontalPodAutoscaler or KEDA's ScaledObject) gives its target."""
    spec = autoscaler["spec"]
    return spec["maxReplicas"] if autoscaler["kind"] == "HorizontalPodAutoscaler" else spec["maxReplicaCount"]


def _pods(template: dict, autoscaler: dict | None) -> list[tuple[str, int, dict]]:
    """(role, pods at once, pod template), read from the object as its controller reads it; an autoscaled
    Deployment at its autoscaler's maximum."""
    spec, kind = template["spec"], template["kind"]
    if template["apiVersion"].startswith("batch.volcano.sh/"):
        return [(t["name"], t["replicas"], t["template"]) for t in spec["tasks"]]
    if kind == "PyTorchJob":
        return [(role, r["replicas"], r["template"]) for role, r in spec["pytorchReplicaSpecs"].items()]
    if kind == "Deployment":
        return [("pod", _most(autoscaler) if autoscaler else spec.get("replicas", 1), spec["template"])]
    assert kind == "Job", kind
    return [("pod", min(spec["parallelism"], spec["completions"]), spec["template"])]


def _nodes(plan: dict) -> list[dict]:
    """A node of every pool, labelled and tainted as the node script (or its provisioner) and GPU Feature Discovery
    leave it; a pool by size's named after the pool."""
    nodes = []
    for pool in plan["pools"]:
        labels = dict(pool["labels"])
        if pool.get("gpuFeatureDiscovery"):
            labels["nvidia.com/gpu.product"] = pool["gpuProduct"]
        name = pool["nodes"][0] if "nodes" in pool else pool["name"]  # a pool by size names no node
        nodes.append({"metadata": {"name": name, "labels": labels}, "spec": {"taints": pool["taints"]}})
    return nodes


def _check(files: dict[str, bytes]) -> int:
    """Admit and place every template's pods; the number of pods admitted."""
    objects = [o for path, data in files.items() if _objects_file(path) for o in _documents(data)]
    classes = [o for o in objects if o["kind"] == "PriorityClass"]
    by_namespace: dict[str, list[dict]] = {}
    for o in objects:
        if o["kind"] in ("LimitRange", "ResourceQuota"):
            by_namespace.setdefault(o["metadata"]["namespace"], []).append(o)
    nodes = _nodes(json.loads(files["nodes/plan.json"]))
    admitted = 0
    for path in sorted(p for p in files if p.startswith("templates/")):
        template, *autoscalers = _documents(files[path])
        assert [a["spec"]["scaleTargetRef"]["name"] for a in autoscalers] in ([], [template["metadata"]["name"]])
        namespace = template["metadata"]["namespace"]
        limit_ranges = [o for o in by_namespace.get(namespace, ()) if o["kind"] == "LimitRange"]
        quotas = [o for o in by_namespace.get(namespace, ()) if o["kind"] == "ResourceQuota"]
        used: dict = {}
        for role, count, pod_template in _pods(template, autoscalers[0] if autoscalers else None):
            for i in range(count):
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{role}-{i}", "namespace": namespace}}
                pod["spec"] = pod_template["spec"]
                decision = admit_pod(pod, limit_ranges=limit_ranges, quotas=quotas, priority_classes=classes, used=used)
                assert decision.admitted, f"{path}: {role} pod {i + 1} of {count}: {decision.refusal.message}"
                used = charge(decision.pod, quotas, used)
                admitted += 1
            affinity = RequiredNodeAffinity.from_pod(pod)
            fits = [n for n in nodes if affinity.matches(n) and taint_filter(pod, n).admit]
            assert fits, f"{path}: {role} pods fit no pool of the node plan"
    return admitted


@pytest.mark.parametrize("policy", example_policies(), ids=lambda p: p.stem)
def test_every_template_of_a_shipped_policy_is_admitted_and_placed(policy: Path) -> None:
    assert _check(_output(policy)) > 0


def test_every_template_of_the_starter_policy_is_admitted_and_placed(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(STARTER, encoding="utf-8")
    assert _check(_output(path)) > 0


def test_a_template_without_cpu_and_memory_is_refused_where_the_quota_constrains_them() -> None:
    """What this test guards against (the defect it was written for): a quota with cpu and memory keys refuses
    pods that do not state them."""
    files = _output(next(p for p in example_policies() if p.stem == "ai-prod"))  # its quotas constrain cpu and memory
    path = next(p for p in sorted(files) if p.startswith("templates/"))
    [template] = _documents(files[path])
    for _, _, pod_template in _pods(template, None):
        for container in pod_template["spec"]["containers"]:
            for part in container["resources"].values():
                part.pop("cpu", None)
                part.pop("memory", None)
    files[path] = json.dumps(template).encode()  # JSON is YAML
    with pytest.raises(AssertionError, match="must specify"):
        _check(files)


def _namespace_objects(files: dict[str, bytes], namespace: str) -> tuple[list[dict], list[dict], list[dict]]:
    objects = [o for path, data in files.items() if _objects_file(path) for o in _documents(data)]
    mine = [o for o in objects if (o.get("metadata") or {}).get("namespace") == namespace]
    return (
        [o for o in mine if o["kind"] == "LimitRange"],
        [o for o in mine if o["kind"] == "ResourceQuota"],
        [o for o in objects if o["kind"] == "PriorityClass"],
    )


def _bare_pod(priority_class: str | None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize("priority_class", ["system-node-critical", "system-cluster-critical", "online-inference"])
def test_a_tenant_cannot_take_a_class_it_is_not_allowed(priority_class: str) -> None:
    """team-a of policies/ai-prod.yaml may use development-, low-priority- and production-training only."""
    limit_ranges, quotas, classes = _namespace_objects(_output(POLICIES / "ai-prod.yaml"), "ai-team-a")
    refusal = admit_pod(
        _bare_pod(priority_class), limit_ranges=limit_ranges, quotas=quotas, priority_classes=classes
    ).refusal
    assert refusal is not None and refusal.object == "tenant-forbidden-priority-classes", refusal
    allowed = admit_pod(
        _bare_pod("production-training"), limit_ranges=limit_ranges, quotas=quotas, priority_classes=classes
    )
    assert allowed.admitted, allowed.refusal


def test_without_a_default_class_only_unrestricted_tenants_run_pods_naming_none(tmp_path: Path) -> None:
    """The starter's 'research' may use class 'training' only; 'product' lists no classes."""
    policy = STARTER.replace("globalDefault: true", "globalDefault: false").replace(
        "replicas: 2}", "replicas: 2, priorityClass: training}"
    )
    path = tmp_path / "policy.yaml"
    path.write_text(policy, encoding="utf-8")
    files = _output(path)
    for namespace, admitted in (("research", False), ("product", True)):
        lr, quotas, classes = _namespace_objects(files, namespace)
        decision = admit_pod(_bare_pod(None), limit_ranges=lr, quotas=quotas, priority_classes=classes)
        assert decision.admitted == admitted, (namespace, decision.refusal)
        system = admit_pod(_bare_pod("system-node-critical"), limit_ranges=lr, quotas=quotas, priority_classes=classes)
        assert not system.admitted, namespace

"""Every object the examples emit passes the API server's schema, checked independently of policyc.proof.schemas:
built-in kinds with kubernetes_validate (strict), custom resources with the upstream CRDs in ../shared/crds."""

from __future__ import annotations

import functools
from pathlib import Path

import kubernetes_validate
import pytest
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from policyc.compiler import compile_file
from tests.conftest import example_policies, missing_shared_data, shared_dir

CRD_FILES = {
    ("scheduling.volcano.sh", "Queue"): "volcano/scheduling.volcano.sh_queues.yaml",
    ("batch.volcano.sh", "Job"): "volcano/batch.volcano.sh_jobs.yaml",
    ("kubeflow.org", "PyTorchJob"): "kubeflow/training-operator-v1/kubeflow.org_pytorchjobs.yaml",
    ("kueue.x-k8s.io", "ResourceFlavor"): "kueue/kueue.x-k8s.io_resourceflavors.yaml",
    ("kueue.x-k8s.io", "ClusterQueue"): "kueue/kueue.x-k8s.io_clusterqueues.yaml",
    ("kueue.x-k8s.io", "LocalQueue"): "kueue/kueue.x-k8s.io_localqueues.yaml",
    ("kueue.x-k8s.io", "Cohort"): "kueue/kueue.x-k8s.io_cohorts.yaml",
    ("scheduling.run.ai", "Queue"): "kai/scheduling.run.ai_queues.yaml",
    ("kai.scheduler", "SchedulingShard"): "kai/kai.scheduler_schedulingshards.yaml",
    ("keda.sh", "ScaledObject"): "keda/keda.sh_scaledobjects.yaml",
    ("monitoring.coreos.com", "PrometheusRule"): "prometheus-operator/monitoring.coreos.com_prometheusrules.yaml",
    ("slinky.slurm.net", "NodeSet"): "slinky/slinky.slurm.net_nodesets.yaml",
    ("nfd.k8s-sigs.io", "NodeFeatureRule"): "nfd/nfd-api-crds.yaml",
    ("karpenter.sh", "NodePool"): "karpenter/karpenter.sh_nodepools.yaml",
}


def _strict(schema: dict) -> dict:
    """The API server's structural strictness: fields not in an object's properties are unknown."""
    out = {
        k: (_strict(v) if isinstance(v, dict) else [_strict(x) for x in v] if k in ("anyOf", "allOf", "oneOf") else v)
        for k, v in schema.items()
        if k != "description"
    }
    if "properties" in out:
        out["properties"] = {k: _strict(v) for k, v in out["properties"].items()}
        if not schema.get("x-kubernetes-preserve-unknown-fields") and "additionalProperties" not in schema:
            out["additionalProperties"] = False
    if schema.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    return out


@functools.cache
def _crd_validator(api_version: str, kind: str) -> Draft202012Validator:
    group, version = api_version.split("/")
    crd_path = shared_dir() / "crds" / CRD_FILES[(group, kind)]
    if not crd_path.exists():
        missing_shared_data(crd_path)
    crds = YAML(typ="safe", pure=True).load_all(crd_path.read_text())  # a file may hold several CRDs
    crd = next(c for c in crds if c and c["spec"]["names"]["kind"] == kind)
    served = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return Draft202012Validator(_strict(served["schema"]["openAPIV3Schema"]))


def _identity(obj: dict) -> tuple[str, str, str]:
    meta = obj.get("metadata", {})
    return obj["kind"], meta.get("namespace", ""), meta.get("name", "")


def _documents(data: bytes) -> list[dict]:
    return [d for d in YAML(typ="safe", pure=True).load_all(data.decode()) if d is not None]


NOT_OBJECTS = "nodes/"
"""The node layer's files are scripts and data (tolerations, Helm values), not Kubernetes objects."""


@pytest.mark.parametrize("policy", example_policies(), ids=lambda p: p.stem)
def test_every_emitted_object_passes_its_schema(policy: Path) -> None:
    result = compile_file(policy)
    assert result.ok
    version = result.cluster.kubernetes_version
    checked = 0
    for rel, f in result.files.items():
        if not rel.endswith(".yaml") or rel.startswith(NOT_OBJECTS):
            continue
        for obj in _documents(f.data):
            if obj["kind"] == "Kustomization":
                continue
            group = obj["apiVersion"].rpartition("/")[0]
            if (group, obj["kind"]) in CRD_FILES:
                errors = [e.message for e in _crd_validator(obj["apiVersion"], obj["kind"]).iter_errors(obj)]
                assert not errors, f"{rel}: {obj['kind']} {obj['metadata']['name']}: {errors}"
            else:
                kubernetes_validate.validate(obj, version, strict=True)
            checked += 1
    assert checked == sum(1 for a in result.artifacts for m in a.manifests if m.obj["kind"] != "Kustomization")


@pytest.mark.parametrize("policy", example_policies(), ids=lambda p: p.stem)
def test_emitted_yaml_reads_back_as_the_objects_built(policy: Path) -> None:
    result = compile_file(policy)
    for artifact in result.artifacts:
        if artifact.manifests:
            written = _documents(result.files[artifact.path].data)
            built = [m.obj for m in artifact.manifests]
            assert sorted(written, key=_identity) == sorted(built, key=_identity), artifact.path


def test_strict_crd_check_rejects_unknown_fields() -> None:
    validator = _crd_validator("scheduling.volcano.sh/v1beta1", "Queue")
    queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q"},
        "spec": {"weight": 1, "guaranteed": {"cpu": "1"}},
    }
    assert list(validator.iter_errors(queue))

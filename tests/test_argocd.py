"""The output directory as Argo CD sees it: a kustomize app, or a plain directory app."""

from __future__ import annotations

import fnmatch
import subprocess

import pytest
from ruamel.yaml import YAML

from policyc.compiler import compile_file
from policyc.output.argocd import SYNC_OPTIONS, SYNC_WAVE
from policyc.output.write import write_tree
from tests.conftest import REPO, example_policies, require_tool

SKIP = "# +argocd:skip-file-rendering"


@pytest.fixture(scope="module", params=[p.stem for p in example_policies()])
def out(request, tmp_path_factory):
    result = compile_file(REPO / "policies" / f"{request.param}.yaml")
    assert result.ok
    target = tmp_path_factory.mktemp(request.param) / "manifests"
    write_tree(result.files, target)
    return target


def _docs(path) -> list[dict]:
    return [d for d in YAML(typ="safe", pure=True).load_all(path.read_text()) if d]


def _kustomize_listed(out) -> list[dict]:
    kustomization = _docs(out / "kustomization.yaml")[0]
    return [doc for rel in kustomization["resources"] for doc in _docs(out / rel)]


def _directory_app(out, application) -> list[dict]:
    """What an Argo CD directory app loads: .yaml/.yml/.json files (recursively if asked), minus excluded ones
    and those holding the skip-file-rendering comment."""
    directory = _docs(application)[0]["spec"]["source"].get("directory", {})
    files = sorted(p for p in out.rglob("*") if p.suffix in (".yaml", ".yml", ".json")
                   and (directory.get("recurse") or p.parent == out))  # fmt: skip
    loaded = []
    for path in files:
        rel = path.relative_to(out).as_posix()
        if directory.get("exclude") and fnmatch.fnmatch(rel, directory["exclude"]):
            continue
        if SKIP in path.read_text():
            continue
        loaded.extend(_docs(path))
    return loaded


def test_kustomize_builds_the_directory(out) -> None:
    kubectl = require_tool("kubectl", "apt-get install kubernetes-client")
    result = subprocess.run([kubectl, "kustomize", str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    built = [d for d in YAML(typ="safe", pure=True).load_all(result.stdout) if d]
    key = lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])  # noqa: E731
    assert sorted(map(key, built)) == sorted(map(key, _kustomize_listed(out)))


def test_directory_app_applies_exactly_what_kustomize_lists(out) -> None:
    loaded = _directory_app(out, REPO / "docs" / "argocd-application-directory.yaml")
    key = lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])  # noqa: E731
    assert sorted(map(key, loaded)) == sorted(map(key, _kustomize_listed(out)))


def test_templates_scripts_and_kustomization_are_not_applied(out) -> None:
    assert SKIP in (out / "kustomization.yaml").read_text()
    for template in (out / "templates").glob("*.yaml"):
        assert SKIP in template.read_text()
    listed = _docs(out / "kustomization.yaml")[0]["resources"]
    assert not [r for r in listed if r.startswith(("templates/", "nodes/"))]


def test_sync_waves_and_options(out) -> None:
    """Waves by what each object needs (tests/test_apply_order.py checks every pair): Namespaces, PriorityClasses and
    admission policies need nothing policyc emits (0), a quota needs its namespace and a binding its policy (1)."""
    waves = {}
    for doc in _kustomize_listed(out):
        waves.setdefault(doc["kind"], set()).add(int(doc["metadata"]["annotations"][SYNC_WAVE]))
    assert waves["Namespace"] == waves.get("PriorityClass", {0}) == waves["ValidatingAdmissionPolicy"] == {0}
    assert waves["ResourceQuota"] == waves["ValidatingAdmissionPolicyBinding"] == {1}
    assert _docs(out / "kustomization.yaml")[0]["sortOptions"] == {"order": "fifo"}
    for doc in _kustomize_listed(out):
        group = doc["apiVersion"].rpartition("/")[0]
        custom = "." in group and not group.endswith(".k8s.io")  # Kubernetes' own groups end in .k8s.io
        options = doc["metadata"]["annotations"].get(SYNC_OPTIONS)
        expected = (
            "SkipDryRunOnMissingResource=true" if custom else "Prune=false" if doc["kind"] == "Namespace" else None
        )
        assert options == expected, doc["kind"]


def test_removing_a_tenant_never_prunes_its_namespace(out) -> None:
    """Argo CD deletes what leaves the output when an app prunes; a Namespace takes every job and claim with it."""
    namespaces = [d for d in _kustomize_listed(out) if d["kind"] == "Namespace"]
    assert namespaces
    assert all(d["metadata"]["annotations"][SYNC_OPTIONS] == "Prune=false" for d in namespaces)


def test_every_example_starts_with_the_schema_modeline() -> None:
    for policy in example_policies():
        assert policy.read_text().startswith("# yaml-language-server: $schema=../schemas/policy.schema.json\n")

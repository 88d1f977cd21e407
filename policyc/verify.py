"""Verify every emitted Kubernetes object against the schema the API server would apply.

Built-in kinds are checked against the strict OpenAPI schemas of the policy's `kubernetesVersion`
that kubernetes-validate ships; custom resources against the structural schemas in
``schemas/crds`` (unknown fields rejected, as the API server does), with their `metadata` checked as
Kubernetes' ObjectMeta. Validators are built once per kind and reused.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path as FsPath

from policyc.artifacts import Artifact
from policyc.crd_schemas import crd_schema
from policyc.diagnostics import Diagnostic, diag

_DEFS_ID = "/api/_definitions.json"
_OBJECT_META = _DEFS_ID + "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class UnknownKind(LookupError):
    pass


def _schema_root(version: str) -> FsPath:
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations, "kubernetes-validate is not installed"
    return FsPath(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema" / f"v{version}.0-local-strict"


@functools.cache
def _registry(version: str):
    from referencing import Registry, Resource

    with open(_schema_root(version) / "_definitions.json", encoding="utf-8") as f:
        definitions = json.load(f)
    return Registry().with_resource(_DEFS_ID, Resource.from_contents(definitions))


@functools.cache
def validator(version: str, api_version: str, kind: str):
    """A compiled validator for one kind (raises `UnknownKind` if there is no schema for it)."""
    from jsonschema import Draft202012Validator

    schema = crd_schema(api_version, kind)
    if schema is not None:
        # metadata is open in CRD schemas; the API server validates it as ObjectMeta.
        schema = {**schema, "properties": {**schema["properties"], "metadata": {"$ref": _OBJECT_META}}}
    else:
        group, _, ver = api_version.rpartition("/")
        name = f"{kind.lower()}-{group.split('.')[0]}-{ver}.json" if group else f"{kind.lower()}-{ver}.json"
        try:
            with open(_schema_root(version) / name, encoding="utf-8") as f:
                schema = json.load(f)
        except FileNotFoundError:
            raise UnknownKind(f"no schema for {api_version} {kind} in Kubernetes {version}") from None
    return Draft202012Validator(schema, registry=_registry(version))


def verify(artifacts: list[Artifact], version: str) -> list[Diagnostic]:
    """Diagnostics for every emitted object that fails its schema (none is expected: each is a policyc bug)."""
    return [d for a in artifacts for d in _verify_artifact(a, version)]


def _verify_artifact(a: Artifact, version: str) -> Iterator[Diagnostic]:
    for m in a.manifests:
        obj = m.obj
        if obj["kind"] == "Kustomization":
            continue
        name = obj.get("metadata", {}).get("name", "?")
        where = m.sources[0] if m.sources else ()
        try:
            errors = list(validator(version, obj["apiVersion"], obj["kind"]).iter_errors(obj))
        except UnknownKind as e:
            yield diag("output-schema", f"{a.path}: {e}", where)
            continue
        for error in sorted(errors, key=lambda e: list(map(str, e.absolute_path))):
            at = "/".join(map(str, error.absolute_path)) or "(root)"
            yield diag(
                "output-schema",
                f"{a.path}: {obj['kind']} '{name}' fails its schema at {at}: {error.message}",
                where,
                hint="this is a policyc bug or a limit of the target version; please report it",
            )

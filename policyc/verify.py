"""Verify every emitted Kubernetes object against the schema the API server would apply.

Built-in kinds are checked against the strict OpenAPI schemas of the policy's `kubernetesVersion` that
kubernetes-validate ships; custom resources against the structural schemas in ``schemas/crds`` (unknown
fields rejected, as the API server does), with their `metadata` checked as Kubernetes' ObjectMeta.

The definitions document of a version is parsed once into a jsonschema-rs registry and each kind's schema is
compiled once against it; an object then takes microseconds. kubernetes-validate's
own `validate` reloads 1.8 MB of definitions and builds a validator for every call (about 10 ms).

A failure is reported as one short line (`describe`): the failing keyword, its parameters and the start of the
failing value, never the whole value.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path as FsPath
from typing import Any

from policyc.artifacts import Artifact, Manifest
from policyc.crd_schemas import crd_schema
from policyc.diagnostics import Diagnostic, diag
from policyc.k8s import validation

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class UnknownKind(LookupError):
    pass


def _schema_root(version: str) -> FsPath:
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations, "kubernetes-validate is not installed"
    root = FsPath(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    return root / f"v{version}.0-local-strict"


_DEFINITIONS_URI = "file:///_definitions.json"
"""Where the kinds' schemas find the definitions document: they refer to it as ``_definitions.json``."""


@functools.cache
def _registry(version: str):
    """The definitions of one Kubernetes version, parsed once and shared by every validator of that version."""
    import jsonschema_rs

    with open(_schema_root(version) / "_definitions.json", encoding="utf-8") as f:
        return jsonschema_rs.Registry([(_DEFINITIONS_URI, json.load(f))])


@functools.cache
def validator(version: str, api_version: str, kind: str):
    """A compiled validator for one kind (raises `UnknownKind` if there is no schema for it)."""
    import jsonschema_rs

    schema = crd_schema(api_version, kind)
    if schema is not None:
        # metadata is open in CRD schemas; the API server validates it as ObjectMeta.
        meta = {"$ref": f"{_DEFINITIONS_URI}#/$defs/{_OBJECT_META}"}
        schema = {**schema, "properties": {**schema["properties"], "metadata": meta}}
    else:
        group, _, ver = api_version.rpartition("/")
        name = f"{kind.lower()}-{group.split('.')[0]}-{ver}.json" if group else f"{kind.lower()}-{ver}.json"
        try:
            with open(_schema_root(version) / name, encoding="utf-8") as f:
                schema = json.load(f)
        except FileNotFoundError:
            raise UnknownKind(f"no schema for {api_version} {kind} in Kubernetes {version}") from None
    return jsonschema_rs.Draft202012Validator(schema, registry=_registry(version), base_uri=f"file:///{kind}.json")


API_VALIDATION: dict[tuple[str, str], Callable[[Mapping[str, Any]], list[validation.FieldError]]] = {
    ("v1", "ResourceQuota"): validation.validate_resource_quota,
    ("scheduling.k8s.io/v1", "PriorityClass"): validation.validate_priority_class,
}
"""The API server's own validation of a kind, beyond its schema (`policyc.k8s.validation`, tested against
Kubernetes' unit-test vectors): quota resource names, scopes and scope selectors; reserved priority class names and
values."""


def verify(artifacts: list[Artifact], version: str) -> list[Diagnostic]:
    """Diagnostics for every emitted object that fails its schema, the API server's validation of its kind, or
    admission of the priority classes in the order Argo CD applies them (none is expected: each is a policyc
    bug)."""
    out = [d for a in artifacts for d in _verify_artifact(a, version)]
    out += [d for a in artifacts if a.path == NODE_PLAN and a.text is not None for d in _node_taints(a)]
    created: list[Mapping[str, Any]] = []
    for a in artifacts:
        for m in a.manifests:
            if m.obj["kind"] == "PriorityClass" and m.obj["apiVersion"] == "scheduling.k8s.io/v1":
                for reason in validation.admit_priority_class(created, m.obj):
                    out.append(_refused(a, m, reason))
                created.append(m.obj)
    return out


NODE_PLAN = "nodes/plan.json"


def _node_taints(a: Artifact) -> Iterator[Diagnostic]:
    """The taints the node script puts on each pool's nodes, as the API server validates a node's taints (the
    script adds them to nodes that may carry none of their own)."""
    plan = json.loads(a.text or "{}")
    groups = [*plan["pools"], *([plan["controlPlane"]] if "controlPlane" in plan else [])]
    for i, group in enumerate(groups):
        for error in validation.validate_taints(group["taints"]):
            where = a.sources[1 + i] if len(a.sources) > 1 + i else ()
            yield diag(
                "output-schema",
                f"{a.path}: the API server would refuse the taints of {group.get('name', 'the control plane')}: "
                f"{_cap(str(error), 160)}",
                where,
                hint="this is a policyc bug; please report it",
            )


def _refused(a: Artifact, m: Manifest, reason: str) -> Diagnostic:
    name = _cap(str(m.obj.get("metadata", {}).get("name", "?")))
    return diag(
        "output-schema",
        f"{a.path}: the API server would refuse {m.obj['kind']} '{name}': {_cap(reason, 160)}",
        m.sources[0] if m.sources else (),
        hint="this is a policyc bug or a limit of the target version; please report it",
    )


def _verify_artifact(a: Artifact, version: str) -> Iterator[Diagnostic]:
    for m in a.manifests:
        obj = m.obj
        if obj["kind"] == "Kustomization":
            continue
        where = m.sources[0] if m.sources else ()
        try:
            check = validator(version, obj["apiVersion"], obj["kind"])
        except UnknownKind as e:
            yield diag("output-schema", f"{a.path}: {e}", where)
            continue
        if check.is_valid(obj):
            api = API_VALIDATION.get((obj["apiVersion"], obj["kind"]))
            yield from (_refused(a, m, str(error)) for error in (api(obj) if api else ()))
            continue
        name = _cap(str(obj.get("metadata", {}).get("name", "?")))
        for error in sorted(check.iter_errors(obj), key=lambda e: [str(p) for p in e.instance_path]):
            at = _cap("/".join(map(str, error.instance_path)) or "(root)", 120)
            yield diag(
                "output-schema",
                f"{a.path}: {obj['kind']} '{name}' fails its schema at {at}: {describe(error)}",
                where,
                hint="this is a policyc bug or a limit of the target version; please report it",
            )


QUOTED = 80
"""How much of a value a message quotes."""


def describe(error: Any) -> str:
    """A schema error in a few words: the keyword that failed, its parameters and the failing value, each cut
    to QUOTED characters. (jsonschema-rs's own message quotes the whole failing value, which can be megabytes:
    every flavor of a resource group that has too many.)"""
    kind = error.kind
    params = {k: v for k, v in kind.as_dict().items() if k != "context"}  # context: each anyOf branch's errors
    text = kind.name + "".join(f" {k}={_cap(_json(v))}" for k, v in params.items())
    value = error.instance
    size = ""
    if isinstance(value, (list, dict)):
        size = f"{len(value)} {'items' if isinstance(value, list) else 'keys'}: "
    return f"{text} (value: {size}{_cap(_json(value))})"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _cap(text: str, size: int = QUOTED) -> str:
    return text if len(text) <= size else text[: size - 3] + "..."

"""Verify every emitted Kubernetes object against the schema the API server would apply.

Built-in kinds are checked against the strict OpenAPI schemas of the policy's `kubernetesVersion` that
kubernetes-validate ships; custom resources against the structural schemas in ``schemas/crds`` (unknown
fields rejected, as the API server does), with their `metadata` checked as Kubernetes' ObjectMeta.

Each kind's schema is compiled once (jsonschema-rs), against a registry of the definitions it refers to, directly
or not; an object then takes microseconds. The definitions document of a version (1.6 MB and 770 definitions for
1.36) is read once and indexed, and only the definitions a kind reaches are parsed (`_Definitions`): a policy's
kinds reach a fifth of them. kubernetes-validate's own `validate` reloads the whole document and builds a validator
for every call (about 10 ms).

A failure is reported as one short line (`describe`): the failing keyword, its parameters and the start of the
failing value, never the whole value.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path as FsPath
from typing import Any

from policyc.artifacts import Artifact, Manifest
from policyc.backends import autoscaling
from policyc.diagnostics import Diagnostic, diag
from policyc.k8s import validation
from policyc.k8s.crd_schemas import crd_schema, crd_schema_text

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class UnknownKind(LookupError):
    pass


def _schemas() -> FsPath | None:
    """kubernetes-validate's folder of schemas, one folder per Kubernetes version (found without importing it: it is
    slow); None when it is not installed."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        return None
    return FsPath(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


def _schema_root(version: str) -> FsPath:
    root = _schemas()
    assert root is not None, "kubernetes-validate is not installed"
    return root / f"v{version}.0-local-strict"


def supported_kubernetes_versions() -> list[str]:
    """Minor versions with strict schemas in kubernetes-validate, oldest first."""
    root = _schemas()
    versions = {d.name[1:].rsplit(".", 1)[0] for d in root.glob("v*-local-strict")} if root and root.is_dir() else set()
    return sorted(versions, key=lambda v: tuple(int(x) for x in v.split(".")))


_DEFINITIONS_URI = "file:///_definitions.json"
"""Where the kinds' schemas find the definitions document: they refer to it as ``_definitions.json``."""


class _Definitions:
    """The definitions document of one Kubernetes version, parsed lazily: `document(roots)` is the document with
    the definitions `roots` reach, every one of them exactly as in the file.

    kubernetes-json-schema writes the document with two-space indentation: ``{"$defs": {...}, "$schema": ...,
    "$id": ...}``, a definition per key of ``$defs`` at four spaces. The text is indexed by those keys (no JSON is
    parsed for it) and a definition is parsed when first reached, with the references it holds. A document laid out
    otherwise, or a reference that is not to a definition of it, and the registry holds the whole document, as
    before: it never lacks what a schema refers to."""

    _KEY = re.compile(r'\n    "([^"\\\n]+)": \{\n')
    _REF = re.compile(r'"\$ref"\s*:\s*"([^"]*)"')
    _TO_DEFINITION = re.compile(r"(?:[^#]*/)?(?:_definitions\.json)?#/\$defs/([^/~%]+)")
    _HEAD = '{\n  "$defs": {\n'

    def __init__(self, path: FsPath):
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.parsed: dict[str, tuple[Any, list[str]]] = {}
        self.starts: dict[str, int] = {}
        self.rest: dict[str, Any] = {}
        try:
            end = self.text.index("\n  }")
            if self.text.startswith(self._HEAD):
                self.starts = {m[1]: m.end() - 2 for m in self._KEY.finditer(self.text, 0, end)}
                self.rest = json.loads("{" + self.text[end + 4 :].lstrip(" \n,"))  # "$schema" and "$id"
        except ValueError:
            self.starts = {}

    def document(self, roots: list[str] | None) -> dict[str, Any] | None:
        """The document with the definitions `roots` reach, or None when it must be the whole document."""
        if roots is None or not self.starts or not isinstance(self.rest, dict) or "$defs" in self.rest:
            return None
        found: dict[str, Any] = {}
        todo = list(roots)
        while todo:
            name = todo.pop()
            if name in found:
                continue
            entry = self._definition(name)
            if entry is None:
                return None
            found[name], refs = entry
            todo += refs
        return {"$defs": found, **self.rest}

    def _definition(self, name: str) -> tuple[Any, list[str]] | None:
        if name not in self.parsed:
            start = self.starts.get(name)
            if start is None:
                return None
            try:
                value, end = _DECODER.raw_decode(self.text, start)
            except ValueError:
                return None
            refs = self.references(self.text[start:end])
            if refs is None or not isinstance(value, dict):
                return None
            self.parsed[name] = value, refs
        return self.parsed[name]

    @classmethod
    def references(cls, text: str) -> list[str] | None:
        """The names of the definitions JSON `text` refers to, or None if it holds another kind of reference (or one
        this scan could miss)."""
        refs = cls._REF.findall(text)
        if len(refs) != text.count('"$ref"') or '"$dynamicRef"' in text or '"$recursiveRef"' in text:
            return None
        names = []
        for ref in refs:
            match = cls._TO_DEFINITION.fullmatch(ref)
            if match is None:
                return None
            names.append(match[1])
        return names


_DECODER = json.JSONDecoder()


@functools.cache
def _definitions(version: str) -> _Definitions:
    return _Definitions(_schema_root(version) / "_definitions.json")


def _registry(version: str, roots: list[str] | None):
    """A registry of the definitions `roots` reach (of all of them if `roots` is None)."""
    import jsonschema_rs

    document = _definitions(version).document(roots)
    if document is None:
        return _whole_registry(version)
    return jsonschema_rs.Registry([(_DEFINITIONS_URI, document)])


@functools.cache
def _whole_registry(version: str):
    import jsonschema_rs

    return jsonschema_rs.Registry([(_DEFINITIONS_URI, json.loads(_definitions(version).text))])


@functools.cache
def validator(version: str, api_version: str, kind: str):
    """A compiled validator for one kind (raises `UnknownKind` if there is no schema for it)."""
    import jsonschema_rs

    schema: Any = crd_schema(api_version, kind)
    if schema is not None:
        # metadata is open in CRD schemas; the API server validates it as ObjectMeta.
        meta = {"$ref": f"{_DEFINITIONS_URI}#/$defs/{_OBJECT_META}"}
        schema = {**schema, "properties": {**schema["properties"], "metadata": meta}}
        roots = [_OBJECT_META] if "$ref" not in crd_schema_text(api_version, kind) else None
    else:
        group, _, ver = api_version.rpartition("/")
        name = f"{kind.lower()}-{group.split('.')[0]}-{ver}.json" if group else f"{kind.lower()}-{ver}.json"
        try:
            with open(_schema_root(version) / name, encoding="utf-8") as f:
                schema = f.read()  # jsonschema-rs parses it
        except FileNotFoundError:
            raise UnknownKind(f"no schema for {api_version} {kind} in Kubernetes {version}") from None
        roots = _Definitions.references(schema)
    return jsonschema_rs.Draft202012Validator(
        schema, registry=_registry(version, roots), base_uri=f"file:///{kind}.json"
    )


API_VALIDATION: dict[tuple[str, str], Callable[[Mapping[str, Any]], list[validation.FieldError]]] = {
    ("v1", "ResourceQuota"): validation.validate_resource_quota,
    ("scheduling.k8s.io/v1", "PriorityClass"): validation.validate_priority_class,
    autoscaling.HPA_API: autoscaling.validate_horizontal_pod_autoscaler,
}
"""The API server's own validation of a kind, beyond its schema (`policyc.k8s.validation`, tested against
Kubernetes' unit-test vectors): quota resource names, scopes and scope selectors; reserved priority class names and
values; a HorizontalPodAutoscaler's replica bounds and metrics (`policyc.backends.autoscaling`)."""


def verify(artifacts: list[Artifact], version: str) -> list[Diagnostic]:
    """Diagnostics for every emitted object that fails its schema, the API server's validation of its kind, or
    admission of the priority classes in the order Argo CD applies them (none is expected: each is a policyc
    bug)."""
    checks: dict[tuple[str, str], tuple[Any, Callable[[Mapping[str, Any]], list[validation.FieldError]] | None]] = {}
    out = [d for a in artifacts for d in _verify_artifact(a, version, checks)]
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


def _verify_artifact(a: Artifact, version: str, checks: dict) -> Iterator[Diagnostic]:
    """`checks`: (apiVersion, kind) -> (validator, the API server's validation or None), filled as kinds come."""
    for m in a.manifests:
        obj = m.obj
        kind = obj["kind"]
        if kind == "Kustomization":
            continue
        key = (obj["apiVersion"], kind)
        entry = checks.get(key)
        if entry is None:
            try:
                entry = checks[key] = validator(version, *key), API_VALIDATION.get(key)
            except UnknownKind as e:
                yield diag("output-schema", f"{a.path}: {e}", m.sources[0] if m.sources else ())
                continue
        check, api = entry
        if check.is_valid(obj):
            if api is not None:
                for error in api(obj):
                    yield _refused(a, m, str(error))
            continue
        where = m.sources[0] if m.sources else ()
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

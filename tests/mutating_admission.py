"""A pod create through the API server's admission with one MutatingAdmissionPolicy, as far as the recorded CEL
vectors need it (tests/test_cel_vectors.py), in the server's order:

1. the mutating plugins before the policy: LimitRanger and Priority (`policyc.k8s.admission.admit_pod`), and
   DefaultTolerationSeconds (the not-ready and unreachable tolerations, each unless the pod tolerates it already);
   API defaulting gives `schedulerName` default-scheduler;
2. the policy (its binding taken to select the pod's namespace): its resourceRules must match a pod CREATE, every
   matchCondition must be true, then each mutation in order, evaluated (tests/cel_check.py) on the pod as the
   mutations before left it, with the policy's variables: a JSON patch applied as RFC 6902 says; an apply
   configuration refused when it sets a field the Pod schema does not declare, or an atomic list, map or struct
   of it (every such path named, as structured-merge-diff finds them), else merged into the pod (structs and
   granular maps key by key, lists of list-type map by their keys, sets as a union). An error refuses the pod
   when the failure policy is Fail;
3. Priority's check again, on the pod as the policy left it: a `spec.priority` other than its class's is refused
   (a patch may set one).

The Pod schema, with its `x-kubernetes-list-type` and `x-kubernetes-map-type`, is Kubernetes 1.36's OpenAPI as
kubernetes-validate ships it. Not modelled: the type names of nested `Object.<field>` initializers (the server
checks they follow the field path), apply configurations that remove fields, other mutating plugins.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonpatch
import jsonpointer

from policyc.k8s.admission import admit_pod
from policyc.tenancy.proof import DEFAULT_TOLERATIONS
from tests.cel_check import PolicyCheck, admission_message, check_policy, evaluate

DEFAULT_SCHEDULER = "default-scheduler"
_ATOMIC = "atomic"


@dataclass(frozen=True)
class Outcome:
    pod: dict | None
    """The pod as admitted, or None."""
    reason: str | None = None
    """Why it was refused, as the part of the server's message that says it."""


def admit(policy: Mapping[str, Any], pod: Mapping[str, Any]) -> Outcome:
    """The pod create through steps 1 to 3."""
    before = admit_pod(pod)
    if before.refusal is not None:
        return Outcome(None, before.refusal.message)
    obj = before.pod
    obj["spec"].setdefault("schedulerName", DEFAULT_SCHEDULER)
    _default_toleration_seconds(obj["spec"])
    mutated = mutate(policy, obj)
    if mutated.pod is None:
        return mutated
    after = admit_pod(mutated.pod)
    return Outcome(after.pod) if after.refusal is None else Outcome(None, after.refusal.message)


def _default_toleration_seconds(spec: dict) -> None:
    tolerations = spec.setdefault("tolerations", [])
    for default in DEFAULT_TOLERATIONS:
        tolerated = any(t.get("key", "") in ("", default["key"]) and t.get("effect", "") in ("", "NoExecute")
                        for t in tolerations)  # fmt: skip
        if not tolerated:
            tolerations.append(dict(default))


def _matches_pod_create(policy: Mapping[str, Any]) -> bool:
    return any(
        {"", "*"} & set(r["apiGroups"]) and {"v1", "*"} & set(r["apiVersions"])
        and {"CREATE", "*"} & set(r["operations"]) and {"pods", "*"} & set(r["resources"])
        for r in policy["spec"]["matchConstraints"]["resourceRules"]
    )  # fmt: skip


def mutate(policy: Mapping[str, Any], pod: dict) -> Outcome:
    """The policy's mutations of a pod create (step 2), its binding taken to select the pod's namespace."""
    if not _matches_pod_create(policy):
        return Outcome(pod)
    check = check_policy(policy)
    assert not check.refusals, [str(r) for r in check.refusals]
    name = policy["metadata"]["name"]
    fail = policy["spec"].get("failurePolicy", "Fail") == "Fail"
    denied = f"policy '{name}' with binding '{name}' denied request: "
    try:
        data = _data(check, pod)
        for i, _ in enumerate(policy["spec"].get("matchConditions") or ()):
            if not evaluate(check.compiled[f"spec.matchConditions[{i}].expression"], data):
                return Outcome(pod)
        for i, m in enumerate(policy["spec"]["mutations"]):
            data = _data(check, pod)
            if m["patchType"] == "JSONPatch":
                pod = _json_patch(pod, evaluate(check.compiled[f"spec.mutations[{i}].jsonPatch.expression"], data))
            else:
                apply = evaluate(check.compiled[f"spec.mutations[{i}].applyConfiguration.expression"], data)
                pod = _apply_configuration(pod, apply)
    except (RuntimeError, _Refused) as e:
        return Outcome(None, denied + str(e)) if fail else Outcome(pod)
    return Outcome(pod)


def _data(check: PolicyCheck, pod: Mapping[str, Any]) -> dict[str, Any]:
    """The variables of an admission request for the pod: object, request, namespaceObject, and the policy's
    variables evaluated in order (one that fails is left out: an expression reading it fails)."""
    meta = pod["metadata"]
    gvk, gvr = {"group": "", "version": "v1", "kind": "Pod"}, {"group": "", "version": "v1", "resource": "pods"}
    request = {"kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr, "name": meta["name"],
               "namespace": meta.get("namespace", ""), "operation": "CREATE", "dryRun": True}  # fmt: skip
    namespace = {"metadata": {"name": meta.get("namespace", "")}}
    data: dict[str, Any] = {"object": pod, "oldObject": None, "request": admission_message("AdmissionRequest", request),
                            "namespaceObject": admission_message("Namespace", namespace)}  # fmt: skip
    for i, (name, _) in enumerate(check.context.variables):
        with contextlib.suppress(RuntimeError):
            data[f"variables.{name}"] = evaluate(check.compiled[f"spec.variables[{i}].expression"], data)
    return data


class _Refused(Exception):
    pass


def _json_patch(pod: dict, operations: list[dict]) -> dict:
    """The operations applied one after the other (RFC 6902); the first that does not apply refuses."""
    for op in operations:
        try:
            pod = jsonpatch.apply_patch(pod, [op])
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as e:
            parent = op["path"].rsplit("/", 1)[0]
            if op["op"] == "add" and jsonpointer.resolve_pointer(pod, parent, _MISSING) is _MISSING:
                raise _Refused(f'JSON Patch: add operation does not apply: doc is missing path: "{op["path"]}"') from e
            raise _Refused(f"JSON Patch: {op['op']} operation does not apply") from e
    return pod


_MISSING = object()


# --- apply configurations (structured-merge-diff) -------------------------------------------------------------


@functools.cache
def _definitions() -> dict[str, Any]:
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema" / "v1.36.0-local"
    return json.loads((root / "_definitions.json").read_text(encoding="utf-8"))["$defs"]


POD = {"$ref": "#/$defs/io.k8s.api.core.v1.Pod"}


def _resolved(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A schema with its $ref followed (the referencing schema's own extensions kept over the target's)."""
    if "$ref" not in schema:
        return dict(schema)
    target = _resolved(_definitions()[schema["$ref"].rsplit("/", 1)[1]])
    return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}


def _is_list(schema: Mapping[str, Any]) -> bool:
    return "items" in schema


def _is_map(schema: Mapping[str, Any]) -> bool:
    return "properties" in schema or "additionalProperties" in schema


def _field(schema: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The schema of a struct's field, None for a granular map's entry or an unknown field."""
    sub = (schema.get("properties") or {}).get(key)
    return None if sub is None else _resolved(sub)


def atomics(value: Any, schema: Mapping[str, Any] = POD, path: str = "") -> list[str]:
    """The paths of the atomic lists, maps and structs an apply configuration sets (findAtomics): a list is atomic
    unless its list-type says otherwise, a map or struct only when its map-type says so."""
    schema = _resolved(schema)
    found = []
    if isinstance(value, dict) and _is_map(schema):
        if schema.get("x-kubernetes-map-type") == _ATOMIC:
            found.append(path)
        for key, item in value.items():
            sub = _field(schema, key)
            if sub is not None:
                found += atomics(item, sub, f"{path}.{key}")
    if isinstance(value, list) and _is_list(schema):
        if schema.get("x-kubernetes-list-type", _ATOMIC) == _ATOMIC:
            found.append(path)
        for i, item in enumerate(value):
            found += atomics(item, schema["items"], f"{path}[{i}]")
    return found


def undeclared(value: Any, schema: Mapping[str, Any] = POD, path: str = "") -> list[str]:
    """The paths of the fields an apply configuration sets that the schema does not declare."""
    schema = _resolved(schema)
    if isinstance(value, list) and _is_list(schema):
        return [p for i, item in enumerate(value) for p in undeclared(item, schema["items"], f"{path}[{i}]")]
    if not (isinstance(value, dict) and _is_map(schema)):
        return []
    found = []
    for key, item in value.items():
        sub = _field(schema, key) or schema.get("additionalProperties")
        found += [f"{path}.{key}"] if sub is None else undeclared(item, sub, f"{path}.{key}")
    return found


def _apply_configuration(pod: dict, configuration: Mapping[str, Any]) -> dict:
    unknown = undeclared(configuration)
    if unknown:
        raise _Refused(f"error applying patch: failed to convert patch object to typed object: {unknown[0]}: field "
                       "not declared in schema")  # fmt: skip
    found = atomics(configuration)
    if found:
        raise _Refused("error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or "
                       "structs: " + ", ".join(found))  # fmt: skip
    return _merge(copy.deepcopy(pod), configuration, POD)


def _merge(live: Any, patch: Any, schema: Mapping[str, Any]) -> Any:
    schema = _resolved(schema)
    if isinstance(patch, dict) and isinstance(live, dict) and _is_map(schema):
        out = dict(live)
        for key, value in patch.items():
            sub = _field(schema, key) or _resolved(schema.get("additionalProperties") or {})
            out[key] = _merge(live.get(key), value, sub)
        return out
    if isinstance(patch, list) and isinstance(live, list) and _is_list(schema):
        kind = schema.get("x-kubernetes-list-type")
        if kind == "set":
            return live + [v for v in patch if v not in live]
        if kind == "map":
            keys = schema["x-kubernetes-list-map-keys"]
            out = list(live)
            for item in patch:
                same = next((j for j, old in enumerate(out) if all(old.get(k) == item.get(k) for k in keys)), None)
                if same is None:
                    out.append(item)
                else:
                    out[same] = _merge(out[same], item, schema["items"])
            return out
    return patch

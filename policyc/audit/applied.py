"""The cluster's objects against the build's: missing, changed (edited), outdated (another build applied) or stale.

Only what the build writes is compared: a live object also holds server defaults, status and metadata the build never
wrote. Quantities compare as quantities (the server canonicalises `1000m` to `1`); Argo CD's `argocd.argoproj.io/*`
annotations are its bookkeeping, not the cluster's behaviour."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from policyc.audit.build import Build, Expected, Identity, identity
from policyc.cluster.source import ClusterSource
from policyc.diagnostics import Diagnostic, ObjectRef, Path, diag
from policyc.ir import Cluster
from policyc.k8s.objects import MANAGED_BY, PART_OF
from policyc.k8s.quantity import Quantity, QuantityError

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ARGOCD = "argocd.argoproj.io/"
_ABSENT = object()
SHOWN = 3
"""Fields named in one message at most; the rest are counted."""
SHORT = 40
"""The longest value a message quotes."""


FieldPath = tuple[str | int, ...]


def differences(wanted: Any, have: Any, at: FieldPath = ()) -> list[FieldPath]:
    """The fields of `wanted` that `have` lacks or holds otherwise; a mapping compares on `wanted`'s keys only, a list
    element by element."""
    if isinstance(wanted, Mapping):
        if not isinstance(have, Mapping):
            return [at]
        out = []
        for key, value in wanted.items():
            if at == ("metadata", "annotations") and str(key).startswith(ARGOCD):
                continue
            out += differences(value, have.get(key, _ABSENT), (*at, key))
        return out
    if isinstance(wanted, list):
        if not isinstance(have, list) or len(have) != len(wanted):
            return [at]
        return [d for i, (w, h) in enumerate(zip(wanted, have, strict=True)) for d in differences(w, h, (*at, i))]
    return [] if _same(wanted, have) else [at]


def dotted(path: FieldPath) -> str:
    """`spec.hard[requests.nvidia.com/gpu]`, `spec.validations[0].expression`."""
    out = ""
    for part in path:
        if isinstance(part, int) or "." in part or "/" in part:
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _same(wanted: Any, have: Any) -> bool:
    if (wanted == have and type(wanted) is type(have)) or (wanted is None and have is _ABSENT):  # nulls are dropped
        return True
    if isinstance(wanted, bool) or isinstance(have, bool) or have is _ABSENT:
        return False
    if isinstance(wanted, (str, int, float)) and isinstance(have, (str, int, float)):
        try:
            return Quantity.from_json(wanted) == Quantity.from_json(have)
        except (QuantityError, TypeError, ValueError):
            return False
    return False


def _compared(obj: dict) -> dict:
    """What of a build's object is compared: everything but its identity (apiVersion, kind, name, namespace)."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in ("labels", "annotations") if k in meta}
    return {**{k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}, "metadata": kept}


def check(build: Build, source: ClusterSource, cluster: Cluster, seen: dict[Identity, dict]) -> Iterator[Diagnostic]:
    """`seen`: the cluster's objects of the build's kinds, by identity."""
    tenants = {ns: t.path for t in cluster.tenants for ns in t.namespaces}
    for key, expected in sorted(build.objects.items(), key=lambda item: _order(item[0])):
        live = seen.get(key)
        if live is None:
            if source.judged(key[0]):
                yield _missing(build, expected)
            continue
        changed = differences(_compared(expected.obj), live)
        if changed:
            yield _changed(build, expected, live, changed)
    for key, live in sorted(seen.items(), key=lambda item: _order(item[0])):
        labels = (live.get("metadata") or {}).get("labels") or {}
        if key not in build.objects and labels.get(MANAGED_BY) == "policyc" and labels.get(PART_OF) == cluster.name:
            yield _stale(live, tenants.get(key[1] or "", ()))


def _order(key: Identity) -> tuple:
    kind, namespace, name = key
    return (kind, namespace or "", name)


def ref(obj: dict) -> ObjectRef:
    kind, namespace, name = identity(obj)
    return ObjectRef(str(obj.get("apiVersion", "")), kind.kind, namespace, name)


def _apply(build: Build, expected: Expected) -> str:
    """How to put the build's object on the cluster."""
    where = build.directory.rstrip("/") + "/" if build.directory else "OUT/"
    cluster = f" --cluster {build.cluster}" if build.cluster else ""
    built = "" if build.directory else f" after `policyc build POLICY{cluster} -o OUT`"
    return f"sync the Argo CD application, or run `kubectl apply -f {where}{expected.file}`{built}"


def _missing(build: Build, expected: Expected) -> Diagnostic:
    r = ref(expected.obj)
    return diag(
        "object-missing",
        f"{r}: the build has it (in {expected.file}), the cluster does not",
        expected.sources[0] if expected.sources else (),
        hint=_apply(build, expected),
        subject=r,
    )


def _changed(build: Build, expected: Expected, live: dict, changed: list[FieldPath]) -> Diagnostic:
    r = ref(expected.obj)
    fields = changed[:SHOWN]
    said = "; ".join(_said(f, live, expected.obj) for f in fields)
    more = f" and {len(changed) - SHOWN} more field(s)" if len(changed) > SHOWN else ""
    applied = _last_applied(live)
    if applied is not None and not [f for f in changed if _value(live, f) != _value(applied, f)]:
        return diag(
            "object-outdated",
            f"{r}: {said}{more}, as the last kubectl apply left it: the cluster runs another build",
            expected.sources[0] if expected.sources else (),
            hint=_apply(build, expected),
            subject=r,
        )
    return diag(
        "object-changed",
        f"{r}: {said}{more}",
        expected.sources[0] if expected.sources else (),
        hint=_apply(build, expected),
        subject=r,
    )


def _said(field: FieldPath, live: dict, built: dict) -> str:
    """What a field holds against what the build says (a value too long for a line: only that it differs)."""
    have, wanted = _value(live, field), _value(built, field)
    if max(len(have), len(wanted)) > SHORT:
        return f"{dotted(field)} differs from the build's"
    return f"{dotted(field)} is {have}, the build says {wanted}"


def _last_applied(live: dict) -> dict | None:
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    try:
        applied = json.loads(text) if text else None
    except ValueError:
        return None
    return applied if isinstance(applied, dict) else None


def _value(obj: Any, path: FieldPath) -> str:
    """The value at a field path, as JSON (quantities canonical), or 'absent'."""
    value = obj
    for part in path:
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) and part < len(value) else _ABSENT
        else:
            value = value.get(part, _ABSENT) if isinstance(value, Mapping) else _ABSENT
        if value is _ABSENT:
            return "absent"
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        try:
            return str(Quantity.from_json(value))
        except (QuantityError, TypeError, ValueError):
            pass
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _stale(live: dict, path: Path) -> Diagnostic:
    """`path`: the tenant of its namespace, if any."""
    r = ref(live)
    scope = f" -n {r.namespace}" if r.namespace else ""
    return diag(
        "object-stale",
        f"{r}: carries policyc's labels for this policy, the build has no such object",
        path,
        hint=f"run `kubectl delete {r.kind.lower()}{scope} {r.name}`",
        subject=r,
    )

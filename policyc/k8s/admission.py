"""Pod admission by the API server: API defaulting, LimitRanger, Priority, Pod validation of resources and
ResourceQuota, in the order kube-apiserver runs them.

1. API defaulting: a container's limits are copied to the requests it does not state.
2. Mutating LimitRanger: each LimitRange's `Container` defaults fill in what a container does not state
   (`default` -> limits, `defaultRequest` -> requests), recorded in the `kubernetes.io/limit-ranger` annotation.
3. Mutating Priority: the named class (it must exist) or the global default (the lowest-valued one) gives
   `priorityClassName`, `priority` and `preemptionPolicy`; an explicit `spec.priority` must agree. With no class
   at all, an empty `priorityClassName: ""` is gone from the pod the server returns (an empty string is the
   field's zero value, which its JSON leaves out).
4. Pod validation (422 Invalid): a request at most its limit; requests of resources that cannot be overcommitted
   (extended resources such as GPUs, huge pages) need a limit equal to them, and extended resources are whole.
5. Validating LimitRanger: `min`, `max` and `maxLimitRequestRatio` per container and per pod.
6. ResourceQuota: every quota the pod matches (its scopes, and at least one key a pod counts towards), in name
   order: first that each quota's PriorityClass scope can be read as a label selector (else every pod fails), that
   each container states every cpu/memory key the quota constrains ("must specify"), then that
   usage plus the pod stays within `hard` for every key the pod adds to.

Facts from Kubernetes (`plugin/pkg/admission/{limitranger,priority,resourcequota}`,
`pkg/quota/v1/evaluator/core/pods.go`), checked against admission recorded from a real kube-apiserver v1.36
(tests/k8s/test_admission_vectors.py). Objects are Kubernetes JSON dicts; nothing here talks to a cluster.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from policyc.k8s import names
from policyc.k8s.quantity import Quantity
from policyc.k8s.scheduling import label_requirement_matches
from policyc.k8s.validation import (
    SYSTEM_PRIORITY_CLASSES,
    admit_pod_priority,
    is_extended_resource,
    is_native_resource,
)

Resources = dict[str, Quantity]

PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"
SYSTEM_CLASS_OBJECTS: Final = tuple(
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "preemptionPolicy": PREEMPT_LOWER_PRIORITY,
    }
    for name, value in SYSTEM_PRIORITY_CLASSES.items()
)
"""The PriorityClasses every cluster has, as the API server stores them."""

LIMIT_RANGER_ANNOTATION: Final = "kubernetes.io/limit-ranger"
_QOS_RESOURCES: Final = ("cpu", "memory")
_MUST_SPECIFY: Final = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
"""Quota keys each container must state when a quota constrains them (a backward-compatibility rule)."""
_POD_KEYS: Final = frozenset(
    {
        "count/pods",
        "pods",
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
    }
)
"""Quota keys a pod counts towards, besides huge pages and `requests.<extended resource>`."""
_HUGE_PAGES: Final = "hugepages-"
_LIMIT_REQUIRED: Final = "Limit must be set for non overcommitable resources"


@dataclass(frozen=True, slots=True, eq=False)
class Refusal:
    """Why the API server refuses a pod."""

    plugin: str
    """LimitRanger, Priority, Validation or ResourceQuota."""
    code: int
    """403 (Forbidden, by admission) or 422 (Invalid, by Pod validation)."""
    message: str
    """The server's message, e.g. 'pods "p" is forbidden: failed quota: q1: must specify limits.cpu for: c1'."""
    object: str | None = None
    """The LimitRange or ResourceQuota that refuses, by name."""
    resource: str | None = None
    """The resource (LimitRange, validation) or quota key (ResourceQuota) concerned, the first if several."""


@dataclass(frozen=True, slots=True, eq=False)
class Admission:
    """The pod as admission mutated it, or why it was refused."""

    pod: dict | None
    refusal: Refusal | None = None

    @property
    def admitted(self) -> bool:
        return self.refusal is None


# --- resource names ----------------------------------------------------------------------------------------


def overcommit_allowed(resource: str) -> bool:
    """Whether a request may be below its limit: native resources but huge pages."""
    return is_native_resource(resource) and not resource.startswith(_HUGE_PAGES)


def _quantities(resources: Mapping[str, Any] | None) -> Resources:
    return {k: Quantity.from_json(v) for k, v in (resources or {}).items()}


# --- aggregation (resourcehelper.PodRequests / PodLimits) ------------------------------------------------------


def _add(into: Resources, more: Mapping[str, Quantity]) -> None:
    for k, v in more.items():
        into[k] = into[k] + v if k in into else v


def _max(into: Resources, other: Mapping[str, Quantity]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _aggregate(spec: Mapping[str, Any], field: str) -> Resources:
    """A pod's requests or limits: its containers added up, restartable init containers (sidecars) added, and each
    other init container's with the sidecars before it, the larger per resource."""
    total: Resources = {}
    for c in spec.get("containers") or ():
        _add(total, _quantities((c.get("resources") or {}).get(field)))
    sidecars: Resources = {}
    init: Resources = {}
    for c in spec.get("initContainers") or ():
        own = _quantities((c.get("resources") or {}).get(field))
        if c.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            during = dict(sidecars)
        else:
            during = dict(own)
            _add(during, sidecars)
        _max(init, during)
    _max(total, init)
    return total


def pod_requests(pod: Mapping[str, Any]) -> Resources:
    return _aggregate(pod.get("spec") or {}, "requests")


def pod_limits(pod: Mapping[str, Any]) -> Resources:
    return _aggregate(pod.get("spec") or {}, "limits")


def _containers(spec: Mapping[str, Any]) -> list[tuple[str, dict]]:
    """(kind, container) of every container, regular ones first: kind is 'container' or 'init container'."""
    return [("container", c) for c in spec.get("containers") or ()] + [
        ("init container", c) for c in spec.get("initContainers") or ()
    ]


# --- API defaulting and LimitRanger ------------------------------------------------------------------------


def _copy(obj: Mapping[str, Any]) -> dict:
    """A deep copy of an API object (JSON-like: maps, lists and immutable scalars), as the API server decodes it
    from a request: nothing in it shared with `obj` or within itself."""
    return {k: _copy_value(v) for k, v in obj.items()}


_SEQUENCE = list | tuple
_SCALAR = str | int | float | None
"""The unions `_copy_value` tests, built once: written in the call, each would be built again for every value
copied (a third of the cost of a copy)."""


def _copy_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_value(v) for k, v in value.items()}
    if isinstance(value, _SEQUENCE):
        return [_copy_value(v) for v in value]
    if isinstance(value, _SCALAR):
        return value
    return _copy(value) if isinstance(value, Mapping) else value


def stored_limit_range(limit_range: Mapping[str, Any]) -> dict:
    """A LimitRange as the API server stores it: for `Container` items, `default` filled in from `max`, then
    `defaultRequest` from `default`, then from `min`."""
    stored = _copy(limit_range)
    for item in (stored.get("spec") or {}).get("limits") or ():
        if item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {})
        request = dict(item.get("defaultRequest") or {})
        for source, target in ((item.get("max"), default), (default, request), (item.get("min"), request)):
            for k, v in (source or {}).items():
                target.setdefault(k, v)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request
    return stored


def _default_requests_from_limits(spec: dict) -> None:
    for _, c in _containers(spec):
        resources = c.get("resources") or {}
        limits = resources.get("limits") or {}
        if limits:
            requests = dict(resources.get("requests") or {})
            for k, v in limits.items():
                requests.setdefault(k, v)
            c["resources"] = {**resources, "requests": requests}


def _limit_range_defaults(spec: dict, meta: dict, limit_ranges: Sequence[Mapping[str, Any]]) -> None:
    """Mutating LimitRanger: fill in each container's missing limits and requests from every LimitRange's
    `Container` item, and say what it set in the pod's annotation (each LimitRange that sets something replaces
    the annotation of the one before)."""
    for lr in limit_ranges:
        default: dict = {}
        default_request: dict = {}
        for item in (lr.get("spec") or {}).get("limits") or ():
            if item.get("type") == "Container":
                default.update(item.get("default") or {})
                default_request.update(item.get("defaultRequest") or {})
        if not default and not default_request:
            continue
        notes = [
            note for kind, c in _containers(spec) for note in _default_container(kind, c, default, default_request)
        ]
        if notes:
            meta["annotations"] = {
                **(meta.get("annotations") or {}),
                LIMIT_RANGER_ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes),
            }


def _default_container(kind: str, c: dict, default: dict, default_request: dict) -> list[str]:
    """Fill in the container's missing limits from `default` and requests from `default_request`; what was set, as
    LimitRanger's annotation says it."""
    resources = c.get("resources") or {}
    limits, requests = dict(resources.get("limits") or {}), dict(resources.get("requests") or {})
    set_requests = sorted(k for k in default_request if k not in requests)
    set_limits = sorted(k for k in default if k not in limits)
    for k in set_limits:
        limits[k] = str(Quantity.from_json(default[k]))
    for k in set_requests:
        requests[k] = str(Quantity.from_json(default_request[k]))
    c["resources"] = {k: v for k, v in (("limits", limits), ("requests", requests)) if v}
    notes = []
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {kind} {c.get('name')}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {kind} {c.get('name')}")
    return notes


def _compared(a: Quantity, b: Quantity, c: Quantity | None = None) -> tuple[int, ...]:
    """Values as LimitRanger compares them: in millis when all fit in an int64 of millis, else whole units,
    each rounded up."""
    values = [q.value for q in (a, b, c) if q is not None]
    if all(abs(v) * 1000 <= (1 << 63) - 1 for v in values):
        return tuple(math.ceil(v * 1000) for v in values)
    return tuple(math.ceil(v) for v in values)


_NO_QUANTITY = Quantity.from_value(0)


def _min(scope: str, r: str, bound: Quantity, requests: Resources, limits: Resources) -> str | None:
    req, lim = requests.get(r), limits.get(r)
    observed_req, observed_lim, enforced = _compared(req or _NO_QUANTITY, lim or _NO_QUANTITY, bound)
    if req is None:
        return f"minimum {r} usage per {scope} is {bound}.  No request is specified"
    if observed_req < enforced:
        return f"minimum {r} usage per {scope} is {bound}, but request is {req}"
    if lim is not None and observed_lim < enforced:
        return f"minimum {r} usage per {scope} is {bound}, but limit is {lim}"
    return None


def _max_check(scope: str, r: str, bound: Quantity, requests: Resources, limits: Resources) -> str | None:
    req, lim = requests.get(r), limits.get(r)
    observed_req, observed_lim, enforced = _compared(req or _NO_QUANTITY, lim or _NO_QUANTITY, bound)
    if lim is None:
        return f"maximum {r} usage per {scope} is {bound}.  No limit is specified"
    if observed_lim > enforced:
        return f"maximum {r} usage per {scope} is {bound}, but limit is {lim}"
    if req is not None and observed_req > enforced:
        return f"maximum {r} usage per {scope} is {bound}, but request is {req}"
    return None


def _ratio(scope: str, r: str, bound: Quantity, requests: Resources, limits: Resources) -> str | None:
    req, lim = requests.get(r), limits.get(r)
    observed_req, observed_lim = _compared(req or _NO_QUANTITY, lim or _NO_QUANTITY)
    if req is None or observed_req == 0:
        return f"{r} max limit to request ratio per {scope} is {bound}, but no request is specified or request is 0"
    if lim is None or observed_lim == 0:
        return f"{r} max limit to request ratio per {scope} is {bound}, but no limit is specified or limit is 0"
    ratio = Fraction(observed_lim, observed_req)
    if ratio > bound.value:
        return f"{r} max limit to request ratio per {scope} is {bound}, but provided ratio is {float(ratio):f}"
    return None


_CONSTRAINTS = (("min", _min), ("max", _max_check), ("maxLimitRequestRatio", _ratio))


def _limit_range_violations(pod: Mapping[str, Any], limit_range: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(resource, message) of every min, max and ratio the pod breaks, per container and per pod."""
    spec = pod.get("spec") or {}
    found: list[tuple[str, str]] = []
    for item in (limit_range.get("spec") or {}).get("limits") or ():
        kind = item.get("type")
        if kind == "Container":
            subjects = [
                (
                    _quantities((c.get("resources") or {}).get("requests")),
                    _quantities((c.get("resources") or {}).get("limits")),
                )
                for _, c in _containers(spec)
            ]
        elif kind == "Pod":
            subjects = [(pod_requests(pod), pod_limits(pod))]
        else:
            continue
        for requests, limits in subjects:
            for field, constraint in _CONSTRAINTS:
                for r, bound in sorted((item.get(field) or {}).items()):
                    message = constraint(kind, r, Quantity.from_json(bound), requests, limits)
                    if message is not None:
                        found.append((r, message))
    return found


# --- Pod validation of resources -----------------------------------------------------------------------------


def _resource_errors(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(resource, 'field: error') of each container's resources that Pod validation rejects."""
    errors: list[tuple[str, str]] = []
    for field, containers in (
        ("containers", spec.get("containers") or ()),
        ("initContainers", spec.get("initContainers") or ()),
    ):
        for i, c in enumerate(containers):
            at = f"spec.{field}[{i}].resources"
            resources = c.get("resources") or {}
            limits, requests = _quantities(resources.get("limits")), _quantities(resources.get("requests"))
            for part, amounts in (("limits", limits), ("requests", requests)):
                for r, q in sorted(amounts.items()):
                    if q.is_negative():
                        errors.append(
                            (r, f'{at}.{part}[{r}]: Invalid value: "{q}": must be greater than or equal to 0')
                        )
                    elif is_extended_resource(r) and not q.is_integer():
                        errors.append((r, f'{at}.{part}[{r}]: Invalid value: "{q}": must be an integer'))
            for r, q in sorted(requests.items()):
                limit = limits.get(r)
                if limit is None:
                    if not overcommit_allowed(r):
                        errors.append((r, f"{at}.limits: Required value: {_LIMIT_REQUIRED}"))
                    continue
                if q != limit and not overcommit_allowed(r):
                    detail = f"must be equal to {r} limit of {limit}"
                elif q > limit:
                    detail = f"must be less than or equal to {r} limit of {limit}"
                else:
                    continue
                errors.append((r, f'{at}.requests: Invalid value: "{q}": {detail}'))
    return errors


# --- Priority ------------------------------------------------------------------------------------------------


def _priority(spec: dict, classes: Sequence[Mapping[str, Any]]) -> str | None:
    """Mutating Priority (`policyc.k8s.validation.admit_pod_priority`), the pod filled in; the refusal's reason, or
    None. A class stored without a preemption policy has the API's default."""
    decision = admit_pod_priority((*SYSTEM_CLASS_OBJECTS, *classes), {"spec": spec})
    if decision.resolved is None:
        return decision.reason
    resolved = decision.resolved
    if resolved.priority_class_name:
        spec["priorityClassName"] = resolved.priority_class_name
    else:
        spec.pop("priorityClassName", None)  # "" is the field's zero value, which the server's pod leaves out
    spec["priority"] = resolved.priority
    spec["preemptionPolicy"] = resolved.preemption_policy or PREEMPT_LOWER_PRIORITY
    return None


# --- ResourceQuota -------------------------------------------------------------------------------------------


def counts_towards(key: str) -> bool:
    """Whether a pod counts towards this quota key (`podEvaluator.MatchingResources`). `limits.<extended>` and a
    bare extended resource name are valid keys that pods never count towards."""
    if key in _POD_KEYS or key.startswith((_HUGE_PAGES, "requests." + _HUGE_PAGES)):
        return True
    return key.startswith("requests.") and is_extended_resource(key.removeprefix("requests."))


def _usage_of(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]) -> Resources:
    """The quota keys of one container's or one pod's requests and limits (`podComputeUsageHelper`)."""
    one = Quantity.from_value(1)
    out: Resources = {"pods": one}
    for r in ("cpu", "memory", "ephemeral-storage"):
        if r in requests:
            out[r] = out[f"requests.{r}"] = requests[r]
        if r in limits:
            out[f"limits.{r}"] = limits[r]
    for r, q in requests.items():
        if r.startswith(_HUGE_PAGES):
            out[r] = out[f"requests.{r}"] = q
        elif is_extended_resource(r):
            out[f"requests.{r}"] = q
    return out


def pod_usage(pod: Mapping[str, Any]) -> Resources:
    """What one pod adds to a quota's usage, per key (`count/pods` included)."""
    return {"count/pods": Quantity.from_value(1), **_usage_of(pod_requests(pod), pod_limits(pod))}


def _is_best_effort(spec: Mapping[str, Any]) -> bool:
    for _, c in _containers(spec):
        resources = c.get("resources") or {}
        for part in ("requests", "limits"):
            for r, q in _quantities(resources.get(part)).items():
                if r in _QOS_RESOURCES and not q.is_zero():
                    return False
    return True


def _scope_matches(requirement: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    scope = requirement.get("scopeName")
    if scope in ("Terminating", "NotTerminating"):
        return (spec.get("activeDeadlineSeconds") is not None) == (scope == "Terminating")
    if scope in ("BestEffort", "NotBestEffort"):
        return _is_best_effort(spec) == (scope == "BestEffort")
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        labels = {"PriorityClass": name} if name else {}
        return label_requirement_matches(
            "PriorityClass", requirement.get("operator", ""), requirement.get("values") or (), labels
        )
    if scope == "CrossNamespacePodAffinity":
        affinity = spec.get("affinity") or {}
        terms = [
            t
            for kind in ("podAffinity", "podAntiAffinity")
            for when in (
                "requiredDuringSchedulingIgnoredDuringExecution",
                "preferredDuringSchedulingIgnoredDuringExecution",
            )
            for t in (affinity.get(kind) or {}).get(when) or ()
        ]
        return any(
            (t.get("podAffinityTerm") or t).get("namespaces")
            or (t.get("podAffinityTerm") or t).get("namespaceSelector") is not None
            for t in terms
        )
    return False


def quota_scopes(quota: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A quota's `scopes` (each as an Exists requirement) and `scopeSelector` requirements."""
    spec = quota.get("spec") or {}
    return [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or ()] + list(
        (spec.get("scopeSelector") or {}).get("matchExpressions") or ()
    )


def scope_problem(quota: Mapping[str, Any]) -> str | None:
    """Why the server cannot match pods against a quota's PriorityClass scope, or None. It makes a label selector
    of it, so every value must be a label value (63 characters at most): a longer class name is a valid quota
    (nothing refuses it) that fails every pod create in its namespace."""
    for requirement in quota_scopes(quota):
        if requirement.get("scopeName") != "PriorityClass":
            continue
        for value in requirement.get("values") or ():
            problems = names.is_valid_label_value(value)
            if problems:
                return f"values[{value!r}]: Invalid value: {'; '.join(problems)}"
    return None


def quota_matches(quota: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Whether a quota applies to a pod: it has a key pods count towards, and the pod is in every scope."""
    hard = (quota.get("spec") or {}).get("hard") or {}
    spec = pod.get("spec") or {}
    return any(counts_towards(k) for k in hard) and all(_scope_matches(s, spec) for s in quota_scopes(quota))


def _must_specify(quota: Mapping[str, Any], spec: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(key, containers) for every cpu/memory key the quota constrains that a container does not state."""
    required = _MUST_SPECIFY.intersection((quota.get("spec") or {}).get("hard") or {})
    missing: dict[str, list[str]] = {}
    for _, c in _containers(spec):
        resources = c.get("resources") or {}
        stated = _usage_of(_quantities(resources.get("requests")), _quantities(resources.get("limits")))
        for key in required - stated.keys():
            missing.setdefault(key, []).append(c.get("name", ""))
    return [(k, sorted(set(names))) for k, names in sorted(missing.items())]


def _listed(resources: Mapping[str, Quantity]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(resources.items()))


def _quota_refusal(
    pod: Mapping[str, Any], quotas: Sequence[Mapping[str, Any]], used: Mapping[str, Mapping[str, Quantity]]
) -> Refusal | None:
    name = (pod.get("metadata") or {}).get("name", "")
    spec = pod.get("spec") or {}
    for q in sorted(quotas, key=lambda q: q["metadata"]["name"]):
        problem = scope_problem(q)
        if problem is not None:
            quota_name = q["metadata"]["name"]
            return Refusal(
                "ResourceQuota",
                500,
                f"Internal error occurred: error matching scopes of quota {quota_name}, err: {problem}",
                quota_name,
            )
    matching = sorted((q for q in quotas if quota_matches(q, pod)), key=lambda q: q["metadata"]["name"])
    for q in matching:
        missing = _must_specify(q, spec)
        if missing:
            what = "; ".join(f"{key} for: {','.join(names)}" for key, names in missing)
            return Refusal(
                "ResourceQuota",
                403,
                f'pods "{name}" is forbidden: failed quota: {q["metadata"]["name"]}: must specify {what}',
                q["metadata"]["name"],
                missing[0][0],
            )
    usage = pod_usage(pod)
    zero = Quantity.from_value(0)
    for q in matching:
        quota_name = q["metadata"]["name"]
        hard = _quantities(q["spec"]["hard"])
        before = used.get(quota_name, {})
        requested = {k: v for k, v in usage.items() if k in hard}
        exceeded = sorted(k for k, v in requested.items() if before.get(k, zero) + v > hard[k])
        if exceeded:
            return Refusal(
                "ResourceQuota",
                403,
                f'pods "{name}" is forbidden: exceeded quota: {quota_name}, '
                f"requested: {_listed({k: requested[k] for k in exceeded})}, "
                f"used: {_listed({k: before.get(k, zero) for k in exceeded})}, "
                f"limited: {_listed({k: hard[k] for k in exceeded})}",
                quota_name,
                exceeded[0],
            )
    return None


def charge(
    pod: Mapping[str, Any], quotas: Sequence[Mapping[str, Any]], used: Mapping[str, Mapping[str, Quantity]]
) -> dict[str, Resources]:
    """Quota usage after an admitted pod: each matching quota's keys grow by what the pod adds to them."""
    usage = pod_usage(pod)
    out = {k: dict(v) for k, v in used.items()}
    for q in quotas:
        if quota_matches(q, pod):
            mine = out.setdefault(q["metadata"]["name"], {})
            for k in (q.get("spec") or {}).get("hard") or {}:
                if k in usage:
                    mine[k] = mine[k] + usage[k] if k in mine else usage[k]
    return out


# --- the chain -----------------------------------------------------------------------------------------------


def _joined(messages: Sequence[str]) -> str:
    """One error, or several as Kubernetes aggregates them."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def admit_pod(
    pod: Mapping[str, Any],
    *,
    limit_ranges: Iterable[Mapping[str, Any]] = (),
    quotas: Sequence[Mapping[str, Any]] = (),
    priority_classes: Sequence[Mapping[str, Any]] = (),
    used: Mapping[str, Mapping[str, Quantity]] | None = None,
) -> Admission:
    """Send a pod create through admission in a namespace holding `limit_ranges` and `quotas` (as submitted; their
    status is taken from `spec.hard` and `used`, quota name -> key -> amount, zero when absent), in a cluster with
    the PriorityClass objects `priority_classes` besides the system ones."""
    mutated = _copy(pod)
    meta = mutated.setdefault("metadata", {})
    spec = mutated.setdefault("spec", {})
    name = meta.get("name", "")
    stored = [stored_limit_range(lr) for lr in sorted(limit_ranges, key=lambda lr: lr["metadata"]["name"])]

    _default_requests_from_limits(spec)
    _limit_range_defaults(spec, meta, stored)
    reason = _priority(spec, priority_classes)
    if reason is not None:
        return Admission(None, Refusal("Priority", 403, f'pods "{name}" is forbidden: {reason}'))

    invalid = _resource_errors(spec)
    if invalid:
        return Admission(
            None,
            Refusal(
                "Validation", 422, f'Pod "{name}" is invalid: {_joined([m for _, m in invalid])}', None, invalid[0][0]
            ),
        )

    for lr in stored:
        violations = _limit_range_violations(mutated, lr)
        if violations:
            return Admission(
                None,
                Refusal(
                    "LimitRanger",
                    403,
                    f'pods "{name}" is forbidden: {_joined([m for _, m in violations])}',
                    lr["metadata"]["name"],
                    violations[0][0],
                ),
            )

    refusal = _quota_refusal(mutated, quotas, used or {})
    if refusal is not None:
        return Admission(None, refusal)
    return Admission(mutated)

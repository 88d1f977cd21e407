"""Object-level API validation: node taints, PriorityClasses with the Priority admission plugin, ResourceQuotas.

The rules mirror kube-apiserver's `pkg/apis/core/validation`, `pkg/apis/scheduling/validation` and the
`Priority` admission plugin. Objects are plain JSON dicts as written in a manifest; an absent field is its
zero value, and no API defaulting is applied. Errors are `FieldError`s: strings in kube-apiserver's
``<field>: <problem>`` form that also carry the field path, the error type and the detail.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from policyc.k8s import names
from policyc.k8s.quantity import Quantity, QuantityError

# --- field errors ----------------------------------------------------------------------------------------

INVALID: Final = "FieldValueInvalid"
REQUIRED: Final = "FieldValueRequired"
FORBIDDEN: Final = "FieldValueForbidden"
NOT_SUPPORTED: Final = "FieldValueNotSupported"
DUPLICATE: Final = "FieldValueDuplicate"
TOO_LONG: Final = "FieldValueTooLong"

_TITLES: Final = {
    INVALID: "Invalid value",
    REQUIRED: "Required value",
    FORBIDDEN: "Forbidden",
    NOT_SUPPORTED: "Unsupported value",
    DUPLICATE: "Duplicate value",
    TOO_LONG: "Too long",
}
_WITHOUT_VALUE: Final = frozenset({REQUIRED, FORBIDDEN, TOO_LONG})
_NO_VALUE: Final = object()


def _shown(value: Any) -> str:
    """A value as kube-apiserver quotes it in an error (strings in double quotes)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Quantity):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class FieldError(str):
    """A validation error: the string is the full message, e.g.
    ``spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0``."""

    field: str
    type: str
    detail: str

    def __new__(cls, error_type: str, field: str, detail: str = "", value: Any = _NO_VALUE) -> FieldError:
        body = _TITLES[error_type]
        if error_type not in _WITHOUT_VALUE and value is not _NO_VALUE:
            body = f"{body}: {_shown(value)}"
        if detail:
            body = f"{body}: {detail}"
        return _field_error(f"{field}: {body}" if field else body, error_type, field, detail)

    def __reduce__(self) -> tuple:
        return _field_error, (str(self), self.type, self.field, self.detail)


def _field_error(message: str, error_type: str, field: str, detail: str) -> FieldError:
    error = str.__new__(FieldError, message)
    error.type, error.field, error.detail = error_type, field, detail
    return error


def _invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, field, detail, value)


def _not_supported(field: str, value: Any, supported: Iterable[str]) -> FieldError:
    return FieldError(NOT_SUPPORTED, field, "supported values: " + ", ".join(map(_shown, supported)), value)


# --- object metadata -------------------------------------------------------------------------------------

_IMMUTABLE: Final = "field is immutable"
_ANNOTATIONS_MAX_BYTES: Final = 256 * 1024


def _validate_labels(labels: Mapping[str, str], path: str) -> list[FieldError]:
    errors = []
    for key, value in labels.items():  # loops, not generators: every object's labels pass here, nearly always valid
        for msg in names.is_qualified_name(key):
            errors.append(_invalid(path, key, msg))
        for msg in names.is_valid_label_value(value):
            errors.append(_invalid(f"{path}[{key}]", value, msg))
    return errors


def _validate_annotations(annotations: Mapping[str, str], path: str) -> list[FieldError]:
    errors = []
    size = 0
    for key, value in annotations.items():
        for msg in names.is_qualified_name(key.lower()):
            errors.append(_invalid(path, key, msg))
        size += len(key.encode()) + len(value.encode())
    if size > _ANNOTATIONS_MAX_BYTES:
        errors.append(FieldError(TOO_LONG, path, f"may not be more than {_ANNOTATIONS_MAX_BYTES} bytes"))
    return errors


def _validate_object_meta(
    meta: Mapping[str, Any], *, namespaced: bool, name_check: Callable[[str], list[str]]
) -> list[FieldError]:
    """`ValidateObjectMeta`: name (or generateName), namespace, labels and annotations."""
    errors = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        # The server appends a random suffix, so a trailing '-' is fine; Kubernetes checks the prefix with its
        # last two characters replaced by "a".
        masked = generate_name[:-2] + "a" if len(generate_name) > 1 and generate_name.endswith("-") else generate_name
        errors.extend(_invalid("metadata.generateName", generate_name, msg) for msg in name_check(masked))
    name = meta.get("name") or ""
    if not name:
        if not generate_name:  # the server generates the name before it validates
            errors.append(FieldError(REQUIRED, "metadata.name", "name or generateName is required"))
    else:
        errors.extend(_invalid("metadata.name", name, msg) for msg in name_check(name))
    namespace = meta.get("namespace") or ""
    if namespaced and not namespace:
        errors.append(FieldError(REQUIRED, "metadata.namespace"))
    elif namespaced:
        errors.extend(_invalid("metadata.namespace", namespace, msg) for msg in names.is_dns1123_label(namespace))
    elif namespace:
        errors.append(FieldError(FORBIDDEN, "metadata.namespace", "not allowed on this type"))
    errors.extend(_validate_labels(meta.get("labels") or {}, "metadata.labels"))
    errors.extend(_validate_annotations(meta.get("annotations") or {}, "metadata.annotations"))
    return errors


# --- taints ----------------------------------------------------------------------------------------------

TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def taint_string(taint: Mapping[str, Any]) -> str:
    """The ``key=value:Effect`` form `kubectl taint` uses (`Taint.ToString`); empty parts are left out."""
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    text = f"{key}={value}" if value else key
    return f"{text}:{effect}" if effect or value else text


def validate_taints(taints: Sequence[Mapping[str, Any]], path: str = "spec.taints") -> list[FieldError]:
    """A node's taints (`validateNodeTaints`): qualified-name keys, label-value values, one of the three
    effects, and no two taints with the same key and effect."""
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = f"{path}[{i}]"
        key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
        errors.extend(_invalid(f"{at}.key", key, msg) for msg in names.is_qualified_name(key))
        problems = names.is_valid_label_value(value)
        if problems:
            errors.append(_invalid(f"{at}.value", value, "; ".join(problems)))
        if not effect:
            errors.append(FieldError(REQUIRED, f"{at}.effect"))
        elif effect not in TAINT_EFFECTS:
            errors.append(_not_supported(f"{at}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            errors.append(
                FieldError(DUPLICATE, at, "taints must be unique by key and effect pair", taint_string(taint))
            )
        seen.add((key, effect))
    return errors


# --- PriorityClass ---------------------------------------------------------------------------------------

HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY: Final = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX: Final = "system-"
SYSTEM_PRIORITY_CLASSES: Final = {
    "system-node-critical": SYSTEM_CRITICAL_PRIORITY + 1000,
    "system-cluster-critical": SYSTEM_CRITICAL_PRIORITY,
}
"""The classes kube-apiserver creates at bootstrap, by name and value; neither is globalDefault."""
DEFAULT_PRIORITY: Final = 0
"""Priority of a pod without a class in a cluster without a globalDefault class."""
PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
_INT32: Final = range(-(1 << 31), 1 << 31)


def _system_class_problem(name: str, value: int, global_default: bool) -> str | None:
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if value != SYSTEM_PRIORITY_CLASSES[name]:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def validate_priority_class(obj: Mapping[str, Any]) -> list[FieldError]:
    """A PriorityClass on create (`ValidatePriorityClass`): a DNS subdomain name; the ``system-`` prefix only
    for the exact system classes; otherwise a value of at most 1000000000; a known preemptionPolicy."""
    meta = obj.get("metadata") or {}
    errors = _validate_object_meta(meta, namespaced=False, name_check=names.is_dns1123_subdomain)
    name, value = meta.get("name") or "", obj.get("value", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value not in _INT32:
        return [*errors, _invalid("value", value, "must be a 32-bit integer")]
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = _system_class_problem(name, value, bool(obj.get("globalDefault")))
        if problem:
            errors.append(
                FieldError(
                    FORBIDDEN,
                    "metadata.name",
                    f"priority class names with "
                    f"'{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. "
                    f"error: {problem}",
                )
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errors.append(
            FieldError(
                FORBIDDEN,
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy == "":
        errors.append(FieldError(REQUIRED, "preemptionPolicy"))
    elif policy is not None and policy not in PREEMPTION_POLICIES:
        errors.append(_not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errors


def _class_name(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


def default_priority_class(classes: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The globalDefault class; if several are (a race at creation), the one with the lowest value."""
    chosen = None
    for pc in classes:
        if pc.get("globalDefault") and (chosen is None or chosen.get("value", 0) > pc.get("value", 0)):
            chosen = pc
    return chosen


def admit_priority_class(
    existing: Iterable[Mapping[str, Any]], new: Mapping[str, Any], *, update: bool = False
) -> list[str]:
    """The Priority admission plugin on a PriorityClass create (or update): at most one globalDefault class.
    Returns the reasons for rejection; empty when admitted."""
    if not new.get("globalDefault"):
        return []
    current = default_priority_class(existing)
    if current is None or (update and _class_name(current) == _class_name(new)):
        return []
    return [f"PriorityClass {_class_name(current)} is already marked as default. Only one default can exist"]


@dataclass(frozen=True, slots=True, eq=False)
class ResolvedPriority:
    """The class a pod's priority comes from (``""`` for none), the priority and the preemption policy
    (None when the class sets none)."""

    priority_class_name: str
    priority: int
    preemption_policy: str | None


@dataclass(frozen=True, slots=True, eq=False)
class PodPriorityAdmission:
    """The Priority admission plugin's decision on a new pod: the resolved priority, or why it is rejected."""

    allowed: bool
    resolved: ResolvedPriority | None = None
    reason: str | None = None


def resolve_default_priority(classes: Iterable[Mapping[str, Any]]) -> ResolvedPriority:
    """What a pod without ``priorityClassName`` gets: the default class, or priority 0 if there is none."""
    pc = default_priority_class(classes)
    if pc is None:
        return ResolvedPriority("", DEFAULT_PRIORITY, "PreemptLowerPriority")
    return ResolvedPriority(_class_name(pc), pc.get("value", 0), pc.get("preemptionPolicy"))


def admit_pod_priority(existing: Iterable[Mapping[str, Any]], pod: Mapping[str, Any]) -> PodPriorityAdmission:
    """The Priority admission plugin on a pod create: resolve ``priorityClassName`` (or the default class) to a
    priority and preemption policy. A pod may set ``spec.priority`` or ``spec.preemptionPolicy`` itself only
    to what its class resolves to. System classes are ordinary classes here, admitted in any namespace."""
    spec = pod.get("spec") or {}
    name = spec.get("priorityClassName") or ""
    if not name:
        resolved = resolve_default_priority(existing)
    else:
        pc = next((c for c in existing if _class_name(c) == name), None)
        if pc is None:
            return PodPriorityAdmission(False, reason=f"no PriorityClass with name {name} was found")
        resolved = ResolvedPriority(name, pc.get("value", 0), pc.get("preemptionPolicy"))
    given = spec.get("priority")
    if given is not None and given != resolved.priority:
        return PodPriorityAdmission(
            False,
            reason=(
                f"the integer value of priority ({given}) must not be provided in pod spec; priority admission "
                f"controller computed {resolved.priority} from the given PriorityClass name"
            ),
        )
    policy = spec.get("preemptionPolicy")
    if resolved.preemption_policy is None:
        # The class sets no policy: the pod keeps its own.
        return PodPriorityAdmission(True, ResolvedPriority(resolved.priority_class_name, resolved.priority, policy))
    if policy is not None and policy != resolved.preemption_policy:
        return PodPriorityAdmission(
            False,
            reason=(
                f"the string value of PreemptionPolicy ({policy}) must not be provided in pod spec; priority "
                f"admission controller computed {resolved.preemption_policy} from the given PriorityClass name"
            ),
        )
    return PodPriorityAdmission(True, resolved)


# --- ResourceQuota ---------------------------------------------------------------------------------------

QUOTA_RESOURCES: Final = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "services.nodeports",
        "services.loadbalancers",
    }
)
"""Unprefixed resource names the quota system tracks (`IsStandardQuotaResourceName`, besides hugepages)."""
_OBJECT_COUNTS: Final = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_POD_RESOURCES: Final = frozenset(
    {"pods", "cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
)
_PVC_RESOURCES: Final = frozenset({"persistentvolumeclaims", "requests.storage"})
QUOTA_SCOPES: Final = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
)
_RESOURCES_OF_SCOPE: Final = {
    "Terminating": _POD_RESOURCES,
    "NotTerminating": _POD_RESOURCES,
    "NotBestEffort": _POD_RESOURCES,
    "PriorityClass": _POD_RESOURCES,
    "CrossNamespacePodAffinity": _POD_RESOURCES,
    "BestEffort": frozenset({"pods"}),
    "VolumeAttributesClass": _PVC_RESOURCES,
}
_EXISTS_ONLY_SCOPES: Final = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "CrossNamespacePodAffinity",
)
_EXISTS_ONLY_MSG: Final = (
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)
_CONFLICTING_SCOPES: Final = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))


def _is_quota_resource(name: str) -> bool:
    return name in QUOTA_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))


def _scope_allows(scope: str, resource: str) -> bool:
    """Whether a quota with `scope` may limit `resource` (`IsResourceQuotaScopeValidForResource`)."""
    allowed = _RESOURCES_OF_SCOPE.get(scope)
    return allowed is None or resource in allowed


def is_native_resource(name: str) -> bool:
    """In the default namespace (no '/') or under kubernetes.io (`IsNativeResource`)."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """A resource outside the kubernetes.io domain that can be requested (`IsExtendedResourceName`)."""
    return (
        not is_native_resource(name)
        and not name.startswith("requests.")
        and not names.is_qualified_name("requests." + name)
    )


def _validate_quota_resource_name(name: str, path: str) -> list[FieldError]:
    errors = [_invalid(path, name, msg) for msg in names.is_qualified_name(name)]
    if not errors and "/" not in name and name != "storage" and not _is_quota_resource(name):
        errors.append(_invalid(path, name, "must be a standard resource type or fully qualified"))
    if "/" not in name and not _is_quota_resource(name):
        errors.append(_invalid(path, name, "must be a standard resource for quota"))
    return errors


def _milli_value(value: Fraction) -> int:
    """`Quantity.MilliValue`: the value in thousandths, rounded away from zero."""
    milli = value * 1000
    magnitude = -(-abs(milli.numerator) // milli.denominator)
    return magnitude if milli >= 0 else -magnitude


def _validate_quota_amounts(amounts: Mapping[str, Any], path: str) -> list[FieldError]:
    errors = []
    for name, raw in amounts.items():
        at = f"{path}[{name}]"
        errors.extend(_validate_quota_resource_name(name, at))
        try:
            amount = raw if isinstance(raw, Quantity) else Quantity.from_json(raw)
        except QuantityError as e:
            errors.append(_invalid(at, raw, str(e)))
            continue
        if amount.is_negative():
            errors.append(_invalid(at, str(amount), "must be greater than or equal to 0"))
        # Like Kubernetes: the value in thousandths, rounded away from zero, must be a multiple of 1000.
        if (name in _OBJECT_COUNTS or is_extended_resource(name)) and _milli_value(amount.value) % 1000:
            errors.append(_invalid(at, str(amount), "must be an integer"))
    return errors


def _validate_scopes(spec: Mapping[str, Any]) -> list[FieldError]:
    scopes = spec.get("scopes") or []
    if not scopes:
        return []
    path = "spec.scopes"
    hard = sorted((spec.get("hard") or {}).keys())
    errors = []
    for scope in scopes:
        if scope not in QUOTA_SCOPES:
            errors.append(_invalid(path, scopes, "unsupported scope"))
        errors.extend(
            _invalid(path, scopes, "unsupported scope applied to resource")
            for name in hard
            if _is_quota_resource(name) and not _scope_allows(scope, name)
        )
    errors.extend(
        _invalid(path, scopes, "conflicting scopes") for pair in _CONFLICTING_SCOPES if set(pair) <= set(scopes)
    )
    return errors


def _validate_scope_selector(spec: Mapping[str, Any]) -> list[FieldError]:
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    path = "spec.scopeSelector.matchExpressions"
    hard = sorted((spec.get("hard") or {}).keys())
    errors = []
    seen = set()
    for requirement in selector.get("matchExpressions") or []:
        scope, operator = requirement.get("scopeName") or "", requirement.get("operator") or ""
        values = requirement.get("values") or []
        if scope not in QUOTA_SCOPES:
            errors.append(_invalid(f"{path}.scopeName", scope, "unsupported scope"))
        errors.extend(
            _invalid(path, selector, "unsupported scope applied to resource")
            for name in hard
            if _is_quota_resource(name) and not _scope_allows(scope, name)
        )
        if scope in _EXISTS_ONLY_SCOPES and operator != "Exists":
            errors.append(_invalid(f"{path}.operator", operator, _EXISTS_ONLY_MSG))
        errors.extend(_operator_values(path, operator, values))
        seen.add(scope)
    errors.extend(
        _invalid(path, spec.get("scopes") or [], "conflicting scopes")
        for pair in _CONFLICTING_SCOPES
        if set(pair) <= seen
    )
    return errors


def _operator_values(path: str, operator: str, values: list) -> list[FieldError]:
    """A scope selector requirement's operator, and the values it needs: some for In and NotIn, none for Exists and
    DoesNotExist."""
    if operator in ("In", "NotIn"):
        if values:
            return []
        message = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
        return [FieldError(REQUIRED, f"{path}.values", message)]
    if operator in ("Exists", "DoesNotExist"):
        if not values:
            return []
        message = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
        return [_invalid(f"{path}.values", values, message)]
    return [_invalid(f"{path}.operator", operator, "not a valid selector operator")]


def validate_resource_quota(obj: Mapping[str, Any]) -> list[FieldError]:
    """A ResourceQuota (`ValidateResourceQuota`): a DNS-subdomain name in a namespace; ``spec.hard`` (and
    ``status``) amounts that are valid quantities, non-negative, whole for object counts and extended
    resources, for resources the quota system tracks; supported, non-conflicting scopes and scope selectors
    whose operators fit their scopes. Amounts are `Quantity` objects or their JSON (strings or numbers)."""
    errors = _validate_object_meta(obj.get("metadata") or {}, namespaced=True, name_check=names.is_dns1123_subdomain)
    spec = obj.get("spec") or {}
    errors.extend(_validate_quota_amounts(spec.get("hard") or {}, "spec.hard"))
    errors.extend(_validate_scopes(spec))
    errors.extend(_validate_scope_selector(spec))
    status = obj.get("status") or {}
    errors.extend(_validate_quota_amounts(status.get("hard") or {}, "status.hard"))
    errors.extend(_validate_quota_amounts(status.get("used") or {}, "status.used"))
    return errors

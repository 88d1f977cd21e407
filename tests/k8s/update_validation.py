"""Kubernetes' validation of updates and two small predicates, modelled for the vectors of Kubernetes' own unit tests
(`test_vectors.py`). The product creates objects and never updates them in place, so these live with the tests; what
the product uses is in `policyc.k8s.validation`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policyc.k8s.validation import (
    _IMMUTABLE,
    FORBIDDEN,
    FieldError,
    _invalid,
    _system_class_problem,
    _validate_annotations,
    _validate_labels,
)


def _validate_object_meta_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """`ValidateObjectMetaUpdate`: identity fields are immutable and an update names a resourceVersion."""
    errors = []
    if not new.get("resourceVersion"):
        errors.append(
            _invalid("metadata.resourceVersion", new.get("resourceVersion") or "", "must be specified for an update")
        )
    if (new.get("generation") or 0) < (old.get("generation") or 0):
        errors.append(_invalid("metadata.generation", new.get("generation") or 0, "must not be decremented"))
    for field in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if (new.get(field) or None) != (old.get(field) or None):
            errors.append(_invalid(f"metadata.{field}", new.get(field), _IMMUTABLE))
    errors.extend(_validate_labels(new.get("labels") or {}, "metadata.labels"))
    errors.extend(_validate_annotations(new.get("annotations") or {}, "metadata.annotations"))
    return errors


def same_taint(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two taints are the same taint: a node's taints are identified by key and effect."""
    return (a.get("key") or "") == (b.get("key") or "") and (a.get("effect") or "") == (b.get("effect") or "")


def is_known_system_priority_class(name: str, value: int, global_default: bool = False) -> bool:
    """Whether name, value and globalDefault are exactly those of a system class (`IsKnownSystemPriorityClass`)."""
    return _system_class_problem(name, value, global_default) is None


def validate_priority_class_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """A PriorityClass update (`ValidatePriorityClassUpdate`): name, value and preemptionPolicy are immutable,
    and the new object names a resourceVersion."""
    errors = _validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
    if new.get("value", 0) != old.get("value", 0):
        errors.append(FieldError(FORBIDDEN, "value", "may not be changed in an update."))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        errors.append(_invalid("preemptionPolicy", new.get("preemptionPolicy"), _IMMUTABLE))
    return errors

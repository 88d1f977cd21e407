"""Every case of the Kubernetes test vectors (facts taken from Kubernetes' own unit tests) against policyc.k8s.

The vectors live in ``../shared/testdata/k8s-vectors`` next to the repository (or under ``$POLICYC_SHARED``), or in
the directory named by
``POLICYC_K8S_VECTORS``; their README describes the format. Each case runs the function its topic and
``input.kind`` (or ``input.check``) select, and only the keys present in ``expect`` are asserted. A topic, kind
or expected key this file does not know fails the case.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from policyc.k8s import names, scheduling, validation
from policyc.k8s.quantity import Quantity, QuantityError
from tests.conftest import missing_shared_data, shared_dir
from tests.k8s import update_validation

VECTORS = Path(os.environ.get("POLICYC_K8S_VECTORS") or shared_dir() / "testdata" / "k8s-vectors")

Observed = dict[str, Any]


def _cases() -> Iterator[Any]:
    files = sorted(VECTORS.glob("*.json"))
    if not files:
        yield pytest.param(None, {"name": f"no *.json vector files in {VECTORS}"}, id="missing-vectors")
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        topic = doc.get("topic", path.stem)
        seen: Counter[str] = Counter()
        for case in doc["cases"]:
            case_id = f"{topic}/{case['name']}"
            seen[case_id] += 1
            yield pytest.param(topic, case, id=case_id if seen[case_id] == 1 else f"{case_id} #{seen[case_id]}")


# --- quantities ------------------------------------------------------------------------------------------


def _plain_decimal(value: Fraction) -> str:
    """An exact value as the vectors write it: plain digits, no exponent, no trailing fractional zeros."""
    with localcontext() as ctx:
        ctx.prec = 4000
        exact = (Decimal(value.numerator) / Decimal(value.denominator)).normalize()
    return format(exact, "f")


def _quantity_parse(i: dict) -> Observed:
    try:
        q = Quantity.parse(i["quantity"])
    except QuantityError:
        return {"valid": False}
    return {"valid": True, "value": _plain_decimal(q.value), "format": q.format, "canonical": str(q)}


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _quantity_unmarshal(i: dict) -> Observed:
    # Numbers are kept as their JSON spelling, which is what the API server parses.
    try:
        q = Quantity.from_json(json.loads(i["json"], parse_int=str, parse_float=str, parse_constant=_reject_constant))
    except ValueError:  # invalid JSON or QuantityError
        return {"valid": False}
    return {"valid": True, "canonical": str(q)}


# --- node selectors and affinity -------------------------------------------------------------------------


def _selector_outcome(compute: Callable[[], Any], key: str) -> Observed:
    try:
        return {"error": False, key: compute()}
    except scheduling.SelectorError as e:
        return {"error": True, "errorFields": [error.field for error in e.errors]}


def _node_scores(nodes: list[dict], scores: list[int]) -> list[dict]:
    return [{"name": node["metadata"]["name"], "score": score} for node, score in zip(nodes, scores, strict=True)]


def _verdict(v: scheduling.Verdict) -> Observed:
    return {"admit": v.admit, "reason": v.reason}


def _affinity_scores(i: dict) -> Observed:
    try:
        scores = scheduling.node_affinity_scores(i["pod"], i["nodes"], added_affinity=i.get("addedAffinity"))
    except scheduling.SelectorError:
        return {"error": True}
    return {"error": False, "scores": _node_scores(i["nodes"], scores)}


# --- priority classes ------------------------------------------------------------------------------------


def _update_outcome(i: dict) -> Observed:
    errors = update_validation.validate_priority_class_update(i["old"], i["new"])
    types = sorted({e.type for e in errors})
    return {"valid": not errors, "errorType": types[0] if len(types) == 1 else types}


def _pod_admission(i: dict) -> Observed:
    decision = validation.admit_pod_priority(i["existingClasses"], i["pod"])
    resolved = decision.resolved
    return {
        "allowed": decision.allowed,
        "priority": resolved and resolved.priority,
        "preemptionPolicy": resolved and resolved.preemption_policy,
    }


def _default_priority(i: dict) -> Observed:
    resolved = validation.resolve_default_priority(i["classes"])
    return {"name": resolved.priority_class_name, "value": resolved.priority}


def _errors(errors: list) -> Observed:
    return {"valid": not errors, "errors": errors}


def _flag(i: dict) -> bool:
    return bool(i.get("enableComparisonOperators"))


def _name_check(check: Callable[[str], list[str]]) -> Callable[[dict], Observed]:
    return lambda i: {"valid": not check(i["value"])}


HANDLERS: dict[tuple[str, str], Callable[[dict], Observed]] = {
    ("names-and-labels", "IsDNS1123Label"): _name_check(names.is_dns1123_label),
    ("names-and-labels", "IsDNS1123Subdomain"): _name_check(names.is_dns1123_subdomain),
    ("names-and-labels", "IsDNS1035Label"): _name_check(names.is_dns1035_label),
    ("names-and-labels", "IsQualifiedName"): _name_check(names.is_qualified_name),
    ("names-and-labels", "IsValidLabelValue"): _name_check(names.is_valid_label_value),
    ("names-and-labels", "IsPrefixedLabelKey"): _name_check(names.is_prefixed_label_key),
    ("names-and-labels", "IsDecimalInteger"): _name_check(names.is_decimal_integer),
    ("quantities", "parse"): _quantity_parse,
    ("quantities", "format"): lambda i: {"canonical": Quantity.canonical(i["value"], i["format"])},
    ("quantities", "compare"): lambda i: {"cmp": Quantity.parse(i["a"]).compare(Quantity.parse(i["b"]))},
    ("quantities", "unmarshalJSON"): _quantity_unmarshal,
    ("node-affinity-match", "nodeSelector"): lambda i: _selector_outcome(
        lambda: scheduling.node_selector_matches(i["nodeSelector"], i["node"], mode=i["mode"]), "match"
    ),
    ("node-affinity-match", "podRequiredAffinity"): lambda i: {
        "match": scheduling.pod_matches_node_affinity(i["pod"], i["node"])
    },
    ("node-affinity-match", "preferredTerms"): lambda i: _selector_outcome(
        lambda: scheduling.preferred_terms_score(i["preferredSchedulingTerms"], i["node"]), "score"
    ),
    ("node-affinity-match", "parse"): lambda i: {"valid": not scheduling.node_selector_errors(i["nodeSelector"])},
    ("toleration-match", "toleratesTaint"): lambda i: {
        "tolerated": scheduling.tolerates_taint(i["toleration"], i["taint"], comparison_operators=_flag(i))
    },
    ("toleration-match", "allTaintsTolerated"): lambda i: {
        "tolerated": scheduling.find_untolerated_taint(
            i["tolerations"], i["taints"], i["effects"], comparison_operators=_flag(i)
        )
        is None
    },
    ("taint-filter", "filter"): lambda i: _verdict(
        scheduling.taint_filter(i["pod"], i["node"], comparison_operators=_flag(i))
    ),
    ("taint-filter", "score"): lambda i: {
        "scores": _node_scores(i["nodes"], scheduling.taint_scores(i["pod"], i["nodes"], comparison_operators=_flag(i)))
    },
    ("node-affinity-plugin", "filter"): lambda i: _verdict(
        scheduling.node_affinity_filter(i["pod"], i["node"], added_affinity=i.get("addedAffinity"))
    ),
    ("node-affinity-plugin", "score"): _affinity_scores,
    ("priorityclass", "validate"): lambda i: _errors(validation.validate_priority_class(i["priorityClass"])),
    ("priorityclass", "validateUpdate"): _update_outcome,
    ("priorityclass", "isKnownSystemPriorityClass"): lambda i: {
        "known": update_validation.is_known_system_priority_class(i["name"], i["value"], i["globalDefault"])
    },
    ("priorityclass", "classAdmission"): lambda i: {
        "allowed": not validation.admit_priority_class(i["existingClasses"], i["newClass"])
    },
    ("priorityclass", "defaultPriority"): _default_priority,
    ("priorityclass", "podAdmission"): _pod_admission,
    ("resourcequota", "validate"): lambda i: _errors(validation.validate_resource_quota(i["resourceQuota"])),
    ("taint-validation", "validateNodeTaints"): lambda i: _errors(validation.validate_taints(i["taints"])),
    ("taint-validation", "taintString"): lambda i: {"string": validation.taint_string(i["taint"])},
    ("taint-validation", "sameTaint"): lambda i: {"match": update_validation.same_taint(i["taint"], i["other"])},
}

# Expected keys that are not compared for equality with one observed value.
CHECKS: dict[str, Callable[[Observed, Any], bool]] = {
    "errorDetailContains": lambda observed, want: (
        bool(observed["errors"]) and all(want in error for error in observed["errors"])
    ),
}


@pytest.mark.parametrize(("topic", "case"), list(_cases()))
def test_vector(topic: str | None, case: dict) -> None:
    if topic is None:
        missing_shared_data(VECTORS)
    inputs = case["input"]
    kind = inputs.get("kind", inputs.get("check"))
    handler = HANDLERS.get((topic, kind))
    if handler is None:
        pytest.fail(f"unknown vector topic/kind {topic!r}/{kind!r}")
    observed = handler(inputs)
    for key, want in case["expect"].items():
        if key in CHECKS:
            assert CHECKS[key](observed, want), f"{key} {want!r} not satisfied by {observed}"
        else:
            assert key in observed, f"expected key {key!r} is not checked for {topic}/{kind}"
            assert observed[key] == want, f"{key}: expected {want!r}, got {observed[key]!r} ({observed})"

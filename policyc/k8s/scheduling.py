"""kube-scheduler placement semantics over plain pod and node dicts.

Covers taints and tolerations (`Toleration.ToleratesTaint`, the TaintToleration plugin), node selectors
(component-helpers `nodeaffinity`, apimachinery `labels`) and the NodeAffinity plugin. Filters return a
`Verdict` whose `reason` is the scheduler's own message and whose `detail` says, for a person, which taint
or which requirement rejected the node. Selectors can be compiled once (`NodeSelector.parse`,
`RequiredNodeAffinity.from_pod`, `PreferredTerms.parse`) and matched against many nodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, Literal

from policyc.k8s import names
from policyc.k8s.validation import INVALID, NOT_SUPPORTED, FieldError, taint_string

NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"
MAX_NODE_SCORE: Final = 100

REASON_UNTOLERATED_TAINT: Final = "node(s) had untolerated taint(s)"
REASON_NODE_AFFINITY: Final = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED_NODE_AFFINITY: Final = "node(s) didn't match scheduler-enforced node affinity"

_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
_GO_INT = re.compile(r"[+-]?[0-9]+")

Node = Mapping[str, Any]
Pod = Mapping[str, Any]


@dataclass(frozen=True, slots=True, eq=False)
class Verdict:
    """A filter's decision on one node: `reason` is kube-scheduler's status message, `detail` the specific cause."""

    admit: bool
    reason: str | None = None
    detail: str | None = None


ADMIT: Final = Verdict(True)


class SelectorError(ValueError):
    """A node selector or preferred scheduling term that does not parse; `errors` names each problem."""

    def __init__(self, errors: Sequence[FieldError]):
        super().__init__("; ".join(errors))
        self.errors = tuple(errors)


def _go_int64(text: str) -> int | None:
    """`strconv.ParseInt(text, 10, 64)`: an optional sign and decimal digits (leading zeros allowed)."""
    if _GO_INT.fullmatch(text) is None:
        return None
    n = int(text)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


# --- taints and tolerations ------------------------------------------------------------------------------


def _comparison_operand(text: str, what: str) -> tuple[int | None, str | None]:
    """A Gt/Lt operand, which must be a canonical decimal integer in int64: (value, error)."""
    problems = names.is_decimal_integer(text)
    if problems:
        return None, f'failed to parse {what} value "{text}" as int64: {",".join(problems)}'
    n = int(text)
    if not _INT64_MIN <= n <= _INT64_MAX:
        return None, (
            f'failed to parse {what} value "{text}" as int64: strconv.ParseInt: parsing "{text}": value out of range'
        )
    return n, None


def _tolerates(
    toleration: Mapping[str, Any], taint: Mapping[str, Any], comparison_operators: bool
) -> tuple[bool, str | None]:
    """(tolerated, error): the error explains a Gt/Lt toleration whose operands are not integers."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False, None
    key = toleration.get("key")
    if key and key != taint.get("key"):
        return False, None
    operator = toleration.get("operator")
    if not operator or operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or ""), None
    if operator == "Exists":
        return True, None
    if operator not in ("Gt", "Lt") or not comparison_operators:
        return False, None
    threshold, error = _comparison_operand(toleration.get("value") or "", "toleration")
    if error is None:
        value, error = _comparison_operand(taint.get("value") or "", "taint")
    if error is not None:
        return False, error
    return (value > threshold if operator == "Gt" else value < threshold), None  # type: ignore[operator]


def tolerates_taint(
    toleration: Mapping[str, Any], taint: Mapping[str, Any], *, comparison_operators: bool = False
) -> bool:
    """Whether a toleration tolerates a taint (`Toleration.ToleratesTaint`).

    An empty effect matches every effect and an empty key every key; an empty operator means Equal.
    `Gt`/`Lt` compare the taint's value with the toleration's as int64 numbers, both in canonical decimal
    form; they need `comparison_operators` (the TaintTolerationComparisonOperators feature gate), without
    which such a toleration tolerates nothing.
    """
    return _tolerates(toleration, taint, comparison_operators)[0]


def _tolerated_by_any(
    tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any], comparison_operators: bool
) -> tuple[bool, str | None]:
    """(tolerated, the first comparison error met when it is not)."""
    first_error = None
    for toleration in tolerations:
        tolerated, error = _tolerates(toleration, taint, comparison_operators)
        if tolerated:
            return True, None
        first_error = first_error or error
    return False, first_error


def _untolerated(
    tolerations: Sequence[Mapping[str, Any]] | None,
    taints: Iterable[Mapping[str, Any]] | None,
    effects: Iterable[str] | None,
    comparison_operators: bool,
) -> tuple[Mapping[str, Any] | None, str | None]:
    """The first considered taint no toleration tolerates, and the first comparison error met on it."""
    tolerations = tolerations or ()
    for taint in taints or ():
        if effects is not None and (taint.get("effect") or "") not in effects:
            continue
        tolerated, error = _tolerated_by_any(tolerations, taint, comparison_operators)
        if not tolerated:
            return taint, error
    return None, None


def find_untolerated_taint(
    tolerations: Sequence[Mapping[str, Any]] | None,
    taints: Iterable[Mapping[str, Any]] | None,
    effects: Iterable[str] | None = None,
    *,
    comparison_operators: bool = False,
) -> Mapping[str, Any] | None:
    """The first taint whose effect is in `effects` (every taint when None) that no toleration tolerates,
    or None when all are tolerated (`FindMatchingUntoleratedTaint`)."""
    return _untolerated(tolerations, taints, None if effects is None else frozenset(effects), comparison_operators)[0]


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("spec") or {}


def _ignored_comparison_hint(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> str:
    for toleration in tolerations:
        if (
            toleration.get("operator") in ("Gt", "Lt")
            and toleration.get("key") in (None, "", taint.get("key"))
            and toleration.get("effect") in (None, "", taint.get("effect"))
        ):
            return (
                f" (the {toleration['operator']} toleration for it is ignored: the "
                "TaintTolerationComparisonOperators feature gate is off)"
            )
    return ""


_BLOCKING_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})


def taint_filter(pod: Pod, node: Node, *, comparison_operators: bool = False) -> Verdict:
    """The TaintToleration plugin's Filter: only NoSchedule and NoExecute taints can reject a pod."""
    tolerations = _spec(pod).get("tolerations") or ()
    taint, error = _untolerated(tolerations, _spec(node).get("taints"), _BLOCKING_EFFECTS, comparison_operators)
    if taint is None:
        return ADMIT
    if error is not None:
        # Kubernetes reports the comparison error itself as the reason.
        return Verdict(False, error, f"taint {taint_string(taint)} is not tolerated: {error}")
    hint = "" if comparison_operators else _ignored_comparison_hint(tolerations, taint)
    return Verdict(False, REASON_UNTOLERATED_TAINT, f"taint {taint_string(taint)} is not tolerated{hint}")


def _normalize(raw: Sequence[int], *, reverse: bool) -> list[int]:
    """`DefaultNormalizeScore`: scale to 0..100 against the highest score (Go's truncating division)."""
    highest = max((s for s in raw if s > 0), default=0)
    if highest == 0:
        return [MAX_NODE_SCORE] * len(raw) if reverse else list(raw)
    out = []
    for score in raw:
        scaled = abs(MAX_NODE_SCORE * score) // highest * (1 if score >= 0 else -1)
        out.append(MAX_NODE_SCORE - scaled if reverse else scaled)
    return out


def taint_scores(pod: Pod, nodes: Sequence[Node], *, comparison_operators: bool = False) -> list[int]:
    """The TaintToleration plugin's normalized Score per node, in order: fewer untolerated PreferNoSchedule
    taints score higher (100 for none). Only tolerations with an empty effect or PreferNoSchedule count."""
    tolerations = [
        t for t in _spec(pod).get("tolerations") or () if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)
    ]
    raw = [
        sum(
            1
            for taint in _spec(node).get("taints") or ()
            if taint.get("effect") == PREFER_NO_SCHEDULE
            and not _tolerated_by_any(tolerations, taint, comparison_operators)[0]
        )
        for node in nodes
    ]
    return _normalize(raw, reverse=True)


# --- node selectors --------------------------------------------------------------------------------------

_LABEL_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS: Final = ("In", "NotIn")
NAME_FIELD: Final = "metadata.name"
"""The only node field a node selector's matchFields can select on."""


@dataclass(frozen=True, slots=True, eq=False)
class _LabelRequirement:
    key: str
    operator: str
    values: tuple[str, ...]
    number: int | None  # the operand of Gt and Lt

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if self.key not in labels:
            return False
        value = _go_int64(labels[self.key])  # Gt and Lt read the label as Go's ParseInt does
        return value is not None and (value > self.number if op == "Gt" else value < self.number)  # type: ignore

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"

    def explain(self, labels: Mapping[str, str]) -> str:
        if self.key not in labels:
            return f"expression {self} does not match (node lacks the label)"
        value = labels[self.key]
        if self.operator in ("Gt", "Lt") and _go_int64(value) is None:
            return f"expression {self} does not match (node has '{value}', which is not an integer)"
        return f"expression {self} does not match (node has '{value}')"


@dataclass(frozen=True, slots=True, eq=False)
class _FieldRequirement:
    key: str
    operator: str
    value: str

    def matches(self, name: str) -> bool:
        actual = name if self.key == NAME_FIELD else ""
        return (actual == self.value) == (self.operator == "In")

    def explain(self, name: str) -> str:
        actual = f"node is '{name}'" if self.key == NAME_FIELD else f"nodes have no field {self.key}"
        return f"field {self.key} {self.operator} [{self.value}] does not match ({actual})"


# A problem found while parsing a requirement: (path below the requirement, error type, detail, value).
_Problem = tuple[str, str, str, Any]


@lru_cache(maxsize=4096)
def _label_requirement(key: str, operator: str, values: tuple[str, ...]) -> _LabelRequirement | tuple[_Problem, ...]:
    """Parse one matchExpressions entry as `labels.NewRequirement` does, or list its problems."""
    if operator not in _LABEL_OPERATORS:
        return (
            (
                ".operator",
                NOT_SUPPORTED,
                "supported values: " + ", ".join(f'"{o}"' for o in _LABEL_OPERATORS),
                operator,
            ),
        )
    problems: list[_Problem] = []
    key_problems = names.is_qualified_name(key)
    if key_problems:
        problems.append((".key", INVALID, "; ".join(key_problems), key))
    number = None
    if operator in ("In", "NotIn") and not values:
        problems.append((".values", INVALID, "for 'in', 'notin' operators, values set can't be empty", list(values)))
    elif operator in ("Exists", "DoesNotExist") and values:
        problems.append((".values", INVALID, "values set must be empty for exists and does not exist", list(values)))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            problems.append(
                (".values", INVALID, "for 'Gt', 'Lt' operators, exactly one value is required", list(values))
            )
        for i, value in enumerate(values):
            number = _go_int64(value)
            if number is None:
                problems.append(
                    (f".values[{i}]", INVALID, "for 'Gt', 'Lt' operators, the value must be an integer", value)
                )
    for i, value in enumerate(values):
        value_problems = names.is_valid_label_value(value)
        if value_problems:
            problems.append((f".values[{i}][{key}]", INVALID, "; ".join(value_problems), value))
    if problems:
        return tuple(problems)
    return _LabelRequirement(key, operator, values, number)


def label_requirement_matches(key: str, operator: str, values: Iterable[str], labels: Mapping[str, str]) -> bool:
    """Whether `labels` satisfy one label selector requirement (`labels.Requirement.Matches`: `NotIn` and
    `DoesNotExist` match a missing key); a requirement that does not parse matches nothing."""
    requirement = _label_requirement(key, operator, tuple(values))
    return isinstance(requirement, _LabelRequirement) and requirement.matches(labels)


def _field_requirement(key: str, operator: str, values: tuple[str, ...]) -> _FieldRequirement | _Problem:
    if operator not in _FIELD_OPERATORS:
        return ".operator", NOT_SUPPORTED, 'supported values: "In", "NotIn"', operator
    if len(values) != 1:
        return ".values", INVALID, "must have one element", list(values)
    return _FieldRequirement(key, operator, values[0])


class _Term:
    """One NodeSelectorTerm: its requirements are ANDed; an empty or invalid term matches no node."""

    __slots__ = ("errors", "fields", "labels", "path", "usable")

    def __init__(
        self,
        path: str,
        labels: tuple[_LabelRequirement, ...],
        fields: tuple[_FieldRequirement, ...],
        errors: tuple[FieldError, ...],
    ):
        self.path, self.labels, self.fields, self.errors = path, labels, fields, errors
        self.usable = not errors and bool(labels or fields)

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        if not self.usable:
            return False
        for requirement in self.labels:
            if not requirement.matches(labels):
                return False
        # A node without a name has no fields, and then matchFields is not checked at all.
        return not name or all(requirement.matches(name) for requirement in self.fields)

    def explain(self, labels: Mapping[str, str], name: str) -> str:
        if not self.usable and not self.errors:
            return f"{self.path} is empty and matches nothing"
        if self.errors:
            return f"{self.path} is invalid and never matches: " + "; ".join(self.errors)
        for requirement in self.labels:
            if not requirement.matches(labels):
                return requirement.explain(labels)
        return next(r.explain(name) for r in self.fields if not r.matches(name))


def _parse_term(term: Mapping[str, Any], path: str) -> _Term:
    labels: list[_LabelRequirement] = []
    fields: list[_FieldRequirement] = []
    errors: list[FieldError] = []
    for j, expression in enumerate(term.get("matchExpressions") or ()):
        parsed = _label_requirement(
            expression.get("key") or "", expression.get("operator") or "", tuple(expression.get("values") or ())
        )
        if isinstance(parsed, _LabelRequirement):
            labels.append(parsed)
        else:
            at = f"{path}.matchExpressions[{j}]"
            errors.extend(FieldError(kind, at + sub, detail, value) for sub, kind, detail, value in parsed)
    for j, expression in enumerate(term.get("matchFields") or ()):
        parsed_field = _field_requirement(
            expression.get("key") or "", expression.get("operator") or "", tuple(expression.get("values") or ())
        )
        if isinstance(parsed_field, _FieldRequirement):
            fields.append(parsed_field)
        else:
            sub, kind, detail, value = parsed_field
            errors.append(FieldError(kind, f"{path}.matchFields[{j}]{sub}", detail, value))
    if errors:
        return _Term(path, (), (), tuple(errors))
    return _Term(path, tuple(labels), tuple(fields), ())


def _node_labels_and_name(node: Node) -> tuple[Mapping[str, str], str]:
    metadata = node.get("metadata") or {}
    return metadata.get("labels") or {}, metadata.get("name") or ""


class NodeSelector:
    """A compiled `NodeSelector`: its terms are ORed.

    `errors` lists the parse problems of its terms. `matches` is the scheduler's lazy reading (an invalid
    term never matches, the others still count); callers wanting `NewNodeSelector`'s strict reading check
    `errors` first.
    """

    __slots__ = ("errors", "terms")

    def __init__(self, terms: tuple[_Term, ...]):
        self.terms = terms
        self.errors: tuple[FieldError, ...] = tuple(e for t in terms for e in t.errors)

    @classmethod
    def parse(cls, selector: Mapping[str, Any] | None, path: str = "") -> NodeSelector:
        """Compile a NodeSelector dict; None or no ``nodeSelectorTerms`` selects no node."""
        prefix = f"{path}.nodeSelectorTerms" if path else "nodeSelectorTerms"
        terms = (selector or {}).get("nodeSelectorTerms") or ()
        return cls(tuple(_parse_term(term or {}, f"{prefix}[{i}]") for i, term in enumerate(terms)))

    def matches(self, node: Node | None) -> bool:
        if node is None:
            return False
        labels, name = _node_labels_and_name(node)
        return any(term.matches(labels, name) for term in self.terms)

    def explain(self, node: Node | None) -> str | None:
        """Why the node does not match, or None if it does."""
        if node is None:
            return "there is no node"
        if self.matches(node):
            return None
        if not self.terms:
            return "nodeSelectorTerms is empty and matches no node"
        labels, name = _node_labels_and_name(node)
        reasons = [term.explain(labels, name) for term in self.terms]
        if len(reasons) == 1:
            return reasons[0]
        return "no nodeSelectorTerm matches: " + "; ".join(
            r if r.startswith(t.path) else f"{t.path}: {r}" for t, r in zip(self.terms, reasons, strict=True)
        )


def node_selector_errors(selector: Mapping[str, Any] | None) -> list[FieldError]:
    """The problems that make `NewNodeSelector` reject a NodeSelector; empty when it parses."""
    return list(NodeSelector.parse(selector).errors)


def node_selector_matches(
    selector: Mapping[str, Any] | None, node: Node | None, *, mode: Literal["lazy", "strict"] = "lazy"
) -> bool:
    """Whether a node matches a NodeSelector (terms ORed, requirements within a term ANDed).

    ``lazy`` is the scheduler's reading (`MatchNodeSelectorTerms`): a term that does not parse never matches.
    ``strict`` is `NewNodeSelector`: any invalid term raises `SelectorError`.
    """
    compiled = NodeSelector.parse(selector)
    if mode == "strict" and compiled.errors:
        raise SelectorError(compiled.errors)
    return compiled.matches(node)


class PreferredTerms:
    """Compiled preferred scheduling terms (`NewPreferredSchedulingTerms`); a term of weight 0 is skipped
    without being parsed."""

    __slots__ = ("errors", "terms")

    def __init__(self, terms: tuple[tuple[int, _Term], ...], errors: tuple[FieldError, ...]):
        self.terms = terms
        self.errors = errors

    @classmethod
    def parse(cls, terms: Sequence[Mapping[str, Any]] | None, path: str = "") -> PreferredTerms:
        parsed, errors = [], []
        for i, term in enumerate(terms or ()):
            weight = term.get("weight") or 0
            preference = term.get("preference") or {}
            if weight == 0 or not (preference.get("matchExpressions") or preference.get("matchFields")):
                continue
            compiled = _parse_term(preference, f"{path}[{i}]")
            errors.extend(compiled.errors)
            parsed.append((weight, compiled))
        return cls(tuple(parsed), tuple(errors))

    def score(self, node: Node) -> int:
        """The sum of the weights of the terms the node matches."""
        labels, name = _node_labels_and_name(node)
        return sum(weight for weight, term in self.terms if term.matches(labels, name))


def preferred_terms_score(terms: Sequence[Mapping[str, Any]] | None, node: Node | None) -> int:
    """The raw preferred-affinity score of a node; raises `SelectorError` if a weighted term does not parse."""
    compiled = PreferredTerms.parse(terms)
    if compiled.errors:
        raise SelectorError(compiled.errors)
    return 0 if node is None else compiled.score(node)


# --- pod node affinity -----------------------------------------------------------------------------------


def _node_affinity(pod: Pod) -> Mapping[str, Any]:
    return (_spec(pod).get("affinity") or {}).get("nodeAffinity") or {}


class RequiredNodeAffinity:
    """A pod's hard placement constraints: ``spec.nodeSelector`` AND required node affinity
    (`GetRequiredNodeAffinity`). Parse errors in the affinity make its terms never match."""

    __slots__ = ("affinity", "node_selector")

    def __init__(self, node_selector: Mapping[str, str] | None, affinity: NodeSelector | None):
        self.node_selector = node_selector
        self.affinity = affinity

    @classmethod
    def from_pod(cls, pod: Pod) -> RequiredNodeAffinity:
        required = _node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
        return cls(_spec(pod).get("nodeSelector") or None, None if required is None else NodeSelector.parse(required))

    def matches(self, node: Node | None) -> bool:
        if self.node_selector is None and self.affinity is None:
            return True
        if node is None:
            return False
        if self.node_selector is not None:
            labels = (node.get("metadata") or {}).get("labels") or {}
            for key, value in self.node_selector.items():
                if key not in labels or labels[key] != value:
                    return False
        return self.affinity is None or self.affinity.matches(node)

    def explain(self, node: Node | None) -> str | None:
        """Why the node does not satisfy the pod's constraints, or None if it does."""
        if self.matches(node):
            return None
        if node is None:
            return "there is no node"
        labels = (node.get("metadata") or {}).get("labels") or {}
        for key, value in (self.node_selector or {}).items():
            if key not in labels:
                return f"nodeSelector {key}={value} does not match (node lacks the label)"
            if labels[key] != value:
                return f"nodeSelector {key}={value} does not match (node has '{labels[key]}')"
        return self.affinity.explain(node) if self.affinity is not None else None


def pod_matches_node_affinity(pod: Pod, node: Node | None) -> bool:
    """Whether a node satisfies a pod's ``spec.nodeSelector`` and required node affinity."""
    return RequiredNodeAffinity.from_pod(pod).matches(node)


def _added_required(added_affinity: Mapping[str, Any] | None) -> NodeSelector | None:
    required = (added_affinity or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return None
    selector = NodeSelector.parse(required, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution")
    if selector.errors:
        raise SelectorError(selector.errors)
    return selector


def node_affinity_filter(pod: Pod, node: Node, *, added_affinity: Mapping[str, Any] | None = None) -> Verdict:
    """The NodeAffinity plugin's Filter. `added_affinity` is the profile's `NodeAffinityArgs.addedAffinity`,
    applied to every pod; it must parse (else `SelectorError`, as the plugin would refuse to start)."""
    enforced = _added_required(added_affinity)
    if enforced is not None and not enforced.matches(node):
        return Verdict(False, REASON_ENFORCED_NODE_AFFINITY, enforced.explain(node))
    required = RequiredNodeAffinity.from_pod(pod)
    if not required.matches(node):
        return Verdict(False, REASON_NODE_AFFINITY, required.explain(node))
    return ADMIT


def node_affinity_scores(
    pod: Pod, nodes: Sequence[Node], *, added_affinity: Mapping[str, Any] | None = None
) -> list[int]:
    """The NodeAffinity plugin's normalized Score per node, in order: the weights of the matching preferred
    terms (the pod's and `added_affinity`'s), scaled so the best node scores 100. Raises `SelectorError` when
    a weighted term does not parse (for the pod's own terms the scheduler fails the pod's scoring)."""
    terms = [
        PreferredTerms.parse(
            (added_affinity or {}).get("preferredDuringSchedulingIgnoredDuringExecution"),
            "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        ),
        PreferredTerms.parse(_node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")),
    ]
    errors = [e for t in terms for e in t.errors]
    if errors:
        raise SelectorError(errors)
    return _normalize([sum(t.score(node) for t in terms) for node in nodes], reverse=False)

"""The CRD judge of the tests (tests/crd_validation.py) against node-provisioning objects recorded from a real
kube-apiserver v1.36 with the Karpenter and NFD CRDs installed: every case gets the server's verdict and, for a
refusal, the server's code and the same errors (each error's field, type and detail: the rule's message for a CEL
rule; the printed bad value is not compared), in any order. Then the judge's own behaviours that the recorded cases
do not all reach, each against a hand-written expectation.

The vectors are every ``*.json`` in ``../shared/testdata/crd-vectors`` beside the repository (or under
``$POLICYC_SHARED``), or in the directory named by ``POLICYC_CRD_VECTORS``; its README describes the format.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cel
import pytest
from cel import stdlib

from tests import crd_validation
from tests.cel_check import regex_find
from tests.conftest import missing_shared_data, shared_dir
from tests.crd_validation import (
    INVALID,
    TYPE_INVALID,
    UNKNOWN_FIELD,
    Crd,
    Problem,
    go_float,
    go_quote,
    go_value,
    is_date_time,
    judge,
    normalized_field_path,
    validate,
)

VECTORS = Path(os.environ.get("POLICYC_CRD_VECTORS") or shared_dir() / "testdata" / "crd-vectors")


def _each_case() -> Iterator[tuple[str, dict]]:
    for path in sorted(VECTORS.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            yield path.stem, case


def vector_cases() -> list[Any]:
    """pytest params of every case of every vector file, one None param when there is none (the test then skips, or
    fails under CI)."""
    cases = [pytest.param(c, id=f"{stem}/{c['name']}") for stem, c in _each_case()]
    return cases or [pytest.param(None, id="missing-vectors")]


_ERROR_TYPES = "Invalid value|Unsupported value|Required value|Duplicate value|Forbidden|Too long|Too many|Not found"
_NEXT_ERROR = re.compile(rf", (?=(?:<nil>|[^\s,:]+): (?:{_ERROR_TYPES})\b)|, (?=unknown field \")")


def server_errors(message: str) -> tuple[str, list[str]]:
    """(what the errors are about, each error) of the server's message, which is either
    `<Kind>.<group> "<name>" is invalid: <errors>` (several in brackets) or
    `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding error: <errors>`."""
    about, sep, said = message.partition(" is invalid: ")
    if not sep:
        about, sep, said = message.partition(": strict decoding error: ")
    elif said.startswith("[") and said.endswith("]"):
        said = said[1:-1]
    return about, _NEXT_ERROR.split(said)


def same_error(said: str, problem: Problem) -> bool:
    """The server's error is the problem: the same words, or the same field, type and detail (a bad value may print
    differently)."""
    if said == str(problem) or problem.type == UNKNOWN_FIELD:
        return said == str(problem)
    head = f"{problem.field or '<nil>'}: {INVALID if problem.type == TYPE_INVALID else problem.type}"
    return said.startswith(head) and said.endswith(f": {problem.detail}" if problem.detail else "")


@pytest.mark.parametrize("case", vector_cases())
def test_vector(case: dict | None) -> None:
    if case is None:
        missing_shared_data(VECTORS)
    verdict = judge(case["object"])
    ours = [str(p) for p in verdict.problems]
    assert ("accepted" if verdict.accepted else "refused") == case["verdict"], (ours, case.get("message"))
    if verdict.accepted:
        return
    assert verdict.code == case["code"]
    about, said = server_errors(case["message"])
    assert server_errors(verdict.message)[0] == about
    unmatched = list(verdict.problems)
    for error in said:
        match = next((p for p in unmatched if same_error(error, p)), None)
        assert match is not None, f"the server said {error!r}; we said {ours}"
        unmatched.remove(match)
    assert not unmatched, f"we also said {[str(p) for p in unmatched]}; the server said {said}"


def test_the_other_cel_library_agrees_on_every_rule_the_vectors_evaluate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules run on cel-expr-python; common-expression-language (cel-rust, with `find` and its Python `split`)
    must give the same value, or an error where cel-expr-python gives one, on every evaluation of every vector."""
    evaluations: list[tuple[str, Any, Any]] = []

    def recording(compiled: Any, data: dict) -> Any:
        try:
            result = crd_validation_evaluate(compiled, data)
        except RuntimeError:
            evaluations.append((compiled.expression, data["self"], RuntimeError))
            raise
        evaluations.append((compiled.expression, data["self"], result))
        return result

    crd_validation_evaluate = crd_validation.evaluate
    monkeypatch.setattr(crd_validation, "evaluate", recording)
    for _, case in _each_case():
        judge(case["object"])
    if not evaluations:
        missing_shared_data(VECTORS)
    for expression, self_value, expected in evaluations:
        context = cel.Context(variables={"self": self_value}, functions={"find": regex_find})
        stdlib.add_stdlib_to_context(context)
        try:
            got: Any = cel.evaluate(expression, context)
        except Exception:  # the library raises ValueError, TypeError, KeyError, ... for an evaluation error
            got = RuntimeError
        assert got == expected, (expression, self_value)


# --- the judge's own behaviours -----------------------------------------------------------------------------

NODE_POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "train"},
    "spec": {
        "disruption": {"consolidateAfter": "10m", "consolidationPolicy": "WhenEmpty"},
        "template": {
            "metadata": {"labels": {"ai.example.com/usage": "training"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                    {"key": "ai.example.com/usage", "operator": "In", "values": ["training"]},
                ],
            },
        },
    },
}
EC2_NODE_CLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "gpu"},
    "spec": {
        "role": "KarpenterNodeRole-prod",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "prod"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "prod"}}],
    },
}
STRING = {"type": "string"}


def widget(spec_schema: dict, **crd: Any) -> Crd:
    """A cluster-scoped `example.com/v1` Widget whose spec has `spec_schema`."""
    schema = {
        "type": "object",
        "properties": {"apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"}, "spec": spec_schema},
    }
    return Crd(**{"group": "example.com", "kind": "Widget", "version": "v1", "namespaced": False, "schema": schema,
                  "status": False, "replicas_paths": (), **crd})  # fmt: skip


def widget_errors(spec_schema: dict, spec: Any) -> list[str]:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}
    return [str(p) for p in judge(obj, widget(spec_schema)).problems]


def edited(obj: dict, path: str, value: Any) -> dict:
    """A copy of `obj` with the dotted `path` set to `value` (digits index lists)."""
    copy_ = copy.deepcopy(obj)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node = copy_
    for p in parents:
        node = node[p]
    node[last] = value
    return copy_


def test_valid_provisioning_objects_are_accepted() -> None:
    assert validate(NODE_POOL) == []
    assert validate(EC2_NODE_CLASS) == []


def test_defaults_are_in_place_before_the_schema_and_the_rules() -> None:
    # NodePool's spec.disruption defaults to {consolidateAfter: 0s}, which fills its required consolidateAfter; a
    # disruption that is there but empty gets no default for it.
    no_disruption = copy.deepcopy(NODE_POOL)
    del no_disruption["spec"]["disruption"]
    assert validate(no_disruption) == []
    refused = [str(p) for p in validate(edited(NODE_POOL, "spec.disruption", {}))]
    assert refused == ["spec.disruption.consolidateAfter: Required value", f"<nil>: Invalid value: null: {NOT_CHECKED}"]
    # A rule sees the default: `mode` defaults to "spread", which the rule requires.
    schema = {"type": "object", "properties": {"mode": {**STRING, "default": "spread"}},
              "x-kubernetes-validations": [{"rule": "self.mode == 'spread'", "message": "spread only"}]}  # fmt: skip
    assert widget_errors(schema, {}) == []
    assert widget_errors(schema, {"mode": "pack"}) == ["spec: Invalid value: spread only"]


NOT_CHECKED = crd_validation.NOT_CHECKED


def test_a_blocking_schema_error_keeps_the_rules_from_running() -> None:
    # An unsupported effect blocks the rules: the restricted label is then not reported.
    obj = edited(NODE_POOL, "spec.template.spec.taints", [{"key": "a.example.com/x", "effect": "NoScheduled"}])
    obj["spec"]["template"]["metadata"]["labels"]["kubernetes.io/hostname"] = "n1"
    assert [str(p) for p in validate(obj)] == [
        'spec.template.spec.taints[0].effect: Unsupported value: "NoScheduled": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
        f"<nil>: Invalid value: null: {NOT_CHECKED}",
    ]
    # A pattern error does not block them: both are reported.
    obj = edited(NODE_POOL, "spec.template.spec.expireAfter", "30d")
    obj["spec"]["template"]["metadata"]["labels"]["kubernetes.io/hostname"] = "n1"
    assert [str(p) for p in validate(obj)] == [
        'spec.template.spec.expireAfter: Invalid value: "30d": spec.template.spec.expireAfter in body should match '
        "'^(([0-9]+(s|m|h))+|Never)$'",
        'spec.template.metadata.labels: Invalid value: label "kubernetes.io/hostname" is restricted',
    ]


def test_item_and_value_rules_run_once_per_element_at_its_path() -> None:
    obj = edited(NODE_POOL, "spec.template.spec.requirements.1.key", "karpenter.sh/nodepool")
    problems = validate(obj)
    assert [(p.field, p.detail) for p in problems] == [
        ("spec.template.spec.requirements[1].key", 'label "karpenter.sh/nodepool" is restricted')
    ]
    assert problems[0].rule == 'self != "karpenter.sh/nodepool"'
    schema = {"type": "object", "additionalProperties": {**STRING, "x-kubernetes-validations": [
        {"rule": "self.startsWith('v')", "message": "must start with v"}]}}  # fmt: skip
    assert widget_errors(schema, {"a.b": "v1", "c": "x2", "d": "y3"}) == [
        'spec[c]: Invalid value: "x2": must start with v',
        'spec[d]: Invalid value: "y3": must start with v',
    ]


def test_rule_fields_give_the_servers_error() -> None:
    rules = [
        {"rule": "self.n > 1", "messageExpression": "'n is ' + string(self.n)", "fieldPath": ".n"},
        {"rule": "self.n > 2", "messageExpression": "'missing: ' + self.missing", "message": "n must exceed 2"},
        {"rule": "self.n > 3", "reason": "FieldValueForbidden", "message": "n too small"},
        {"rule": "self.n > 4"},
        {"rule": "self.n == oldSelf.n", "message": "immutable"},  # a transition rule: not on create
        {"rule": "self.missing > 0", "message": "needs missing"},
    ]
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "x-kubernetes-validations": rules}
    assert widget_errors(schema, {"n": 1}) == [
        "spec.n: Invalid value: n is 1",
        "spec: Invalid value: n must exceed 2",  # the messageExpression fails: the message stands in
        "spec: Forbidden: n too small",
        "spec: Invalid value: failed rule: self.n > 4",
        'spec: Invalid value: "object": no such key: missing evaluating rule: needs missing',
    ]
    scalar = {**STRING, "x-kubernetes-validations": [{"rule": "int(self) >= 0", "message": "a count"}]}
    assert widget_errors(scalar, "-1") == ['spec: Invalid value: "-1": a count']
    assert widget_errors(scalar, "x") == [
        "spec: Invalid value: \"string\": type conversion error from 'string' to 'int' evaluating rule: a count"
    ]


def test_rules_see_values_converted_by_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "ratio": {"type": "number"},  # JSON 1 is a double: 1 + 0.5 is defined
            "namespace": STRING,  # a CEL reserved word, escaped
            "max-pods": {"type": "integer"},  # '-' escaped
            "at": {**STRING, "format": "date-time"},  # a timestamp
        },
        "x-kubernetes-validations": [
            {"rule": "self.ratio + 0.5 > 1.0", "message": "ratio"},
            {"rule": "self.__namespace__ == 'team-a'", "message": "namespace"},
            {"rule": "self.max__dash__pods == 110", "message": "max-pods"},
            {"rule": "self.at < timestamp('2030-01-01T00:00:00Z')", "message": "at"},
        ],
    }
    spec = {"ratio": 1, "namespace": "team-a", "max-pods": 110, "at": "2026-11-26T10:00:00Z"}
    assert widget_errors(schema, spec) == []
    assert widget_errors(schema, {**spec, "at": "2031-01-01T00:00:00Z", "max-pods": 100}) == [
        "spec: Invalid value: max-pods",
        "spec: Invalid value: at",
    ]


def test_unknown_fields_fail_the_decoding() -> None:
    schema = {"type": "object", "properties": {"a": STRING, "free": {"type": "object",
              "x-kubernetes-preserve-unknown-fields": True}}}  # fmt: skip
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "labelz": {}},
           "spec": {"a": "x", "b": 1, "free": {"anything": [1]}, "items": [{"c": 2}]}}  # fmt: skip
    verdict = judge(obj, widget(schema))
    assert (verdict.code, verdict.message) == (
        400,
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata.labelz", '
        'unknown field "spec.b", unknown field "spec.items"',
    )


def test_object_meta_is_validated() -> None:
    assert [str(p) for p in validate(edited(NODE_POOL, "metadata.name", "Train"))] == [
        'metadata.name: Invalid value: "Train": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    # A cluster-scoped object's namespace is dropped, not refused.
    assert validate(edited(NODE_POOL, "metadata.namespace", "team-a")) == []


def test_schema_errors_are_worded_as_kube_openapi_words_them() -> None:
    assert [str(p) for p in validate(edited(NODE_POOL, "spec.weight", "10"))] == [
        'spec.weight: Invalid value: "string": spec.weight in body must be of type integer: "string"',
        f"<nil>: Invalid value: null: {NOT_CHECKED}",
    ]
    labels = {"ai.example.com/pool": "x" * 64}  # maxLength 63
    assert [str(p) for p in validate(edited(NODE_POOL, "spec.template.metadata.labels", labels))] == [
        "spec.template.metadata.labels.ai.example.com/pool: Too long: may not be more than 63 bytes",
        f"<nil>: Invalid value: null: {NOT_CHECKED}",
    ]
    budgets = [{"nodes": "1", "reasons": ["Empty", "Drifted", "Empty"]}]  # a list-type set
    assert [str(p) for p in validate(edited(NODE_POOL, "spec.disruption.budgets", budgets))] == [
        'spec.disruption.budgets[0].reasons[2]: Duplicate value: "Empty"'
    ]


def test_other_kinds_of_the_provisioning_crds_are_judged() -> None:
    both = edited(EC2_NODE_CLASS, "spec.instanceProfile", "KarpenterNodeInstanceProfile")
    assert [str(p) for p in validate(both)] == [
        "spec: Invalid value: must specify exactly one of ['role', 'instanceProfile']"
    ]
    windows = edited(EC2_NODE_CLASS, "spec.amiSelectorTerms", [{"alias": "windows2022@v1"}])
    assert [str(p) for p in validate(windows)] == [
        'spec.amiSelectorTerms[0].alias: Invalid value: "windows2022@v1": windows families may only specify version '
        "'latest'"
    ]


@pytest.mark.parametrize(
    ("number", "go"),
    [(1.0, "1"), (0.5, "0.5"), (123456.0, "123456"), (1e6, "1e+06"), (1234567.0, "1.234567e+06"), (0.0001, "0.0001"),
     (0.00001, "1e-05"), (-2.5, "-2.5")],
)  # fmt: skip
def test_floats_print_as_go_prints_them(number: float, go: str) -> None:
    assert go_float(number) == go


def test_values_print_as_field_errors_print_them() -> None:
    assert go_quote('a "b"\n\x01é') == '"a \\"b\\"\\n\\x01é"'
    assert [go_value(v) for v in (None, True, 7, "x")] == ["null", "true", "7", '"x"']
    assert (
        go_value({"b": [1, "x"], "a": None})
        == 'map[string]interface {}{"a":interface {}(nil), "b":[]interface {}{1, "x"}}'
    )


def test_rule_field_paths_are_normalised() -> None:
    assert normalized_field_path(".spec.limits") == "spec.limits"
    assert normalized_field_path(".labels['a.b/c']") == "labels[a.b/c]"


@pytest.mark.parametrize(
    ("text", "valid"),
    [("2026-11-26T10:00:00Z", True), ("2026-11-26t10:00:00.5+01:00", True), ("2026-11-26", False),
     ("2026-13-01T00:00:00Z", False), ("2026-11-26T24:00:00Z", False), ("yesterday", False)],
)  # fmt: skip
def test_date_times_are_checked_as_kube_openapi_checks_them(text: str, valid: bool) -> None:
    assert is_date_time(text) is valid

"""Every CEL expression policyc writes compiles as the API server compiles it (the judge: tests/cel_check.py, held
to a real server's verdicts by tests/test_cel_vectors.py): the ValidatingAdmissionPolicies, the
MutatingAdmissionPolicies and the DRA DeviceClass selectors of every shipped policy, of the 1.36 variants the
injection tests use, and of generated policies (tests/test_properties.py's strategy, on Kubernetes 1.33 and 1.36);
every CEL literal of JSON-like data (`policyc.k8s.cel.literal`) compiles, and evaluates to its data both in
cel-expr-python and in the CEL library the other tests evaluate policies with; and the mutating policies inject
the same in both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import policyc
from policyc.compiler import Compilation
from policyc.k8s.cel import literal
from tests import test_injection
from tests.cel_check import Context, check_device_selector, check_policy, compile_expression, evaluate
from tests.conftest import example_policies
from tests.mutating_admission import mutate
from tests.test_properties import PROFILE, compile_text, dump, valid_policies

ADMISSION_KINDS = ("ValidatingAdmissionPolicy", "MutatingAdmissionPolicy")


def refused(comp: Compilation) -> Iterator[str]:
    """What the server would refuse of the compilation's output, one line each."""
    for artifact in comp.artifacts:
        for m in artifact.manifests:
            if m.obj.get("kind") in ADMISSION_KINDS:
                yield from (f"{artifact.path}: {r}" for r in check_policy(m.obj).refusals)
            elif m.obj.get("kind") == "DeviceClass":
                for s in m.obj["spec"]["selectors"]:
                    problem = check_device_selector(s["cel"]["expression"])
                    yield from [f"{artifact.path}: {problem}"] if problem else []


def kinds(comp: Compilation) -> list[str]:
    return [m.obj["kind"] for a in comp.artifacts for m in a.manifests if m.obj.get("kind") in ADMISSION_KINDS]


MUTATING_POLICIES = {
    "ai-prod.yaml": 3,
    "ai-prod-yunikorn.yaml": 3,
    "ai-dra.yaml": 4,
    "ai-hetero.yaml": 5,
    "ai-hier.yaml": 4,
    "ai-onprem.yaml": 3,
    "ai-eks.yaml": 2,
}
"""The shipped policies on Kubernetes 1.36, with their number of tenants that have workload classes (one
MutatingAdmissionPolicy each); the others are on 1.33, where there is none."""


@pytest.mark.parametrize("path", example_policies(), ids=lambda p: p.name)
def test_shipped_policies_compile_on_the_api_server(path) -> None:
    comp = policyc.compile(path)
    assert comp.ok
    assert kinds(comp).count("MutatingAdmissionPolicy") == MUTATING_POLICIES.get(path.name, 0)
    assert "ValidatingAdmissionPolicy" in kinds(comp)
    assert list(refused(comp)) == []


@pytest.mark.parametrize("name", sorted(test_injection.POLICIES))
def test_injection_variants_compile_on_the_api_server(name) -> None:
    comp = test_injection.policy(name, "deny")
    assert "MutatingAdmissionPolicy" in kinds(comp)
    assert list(refused(comp)) == []


@pytest.mark.parametrize("name", sorted(test_injection.POLICIES))
def test_both_cel_libraries_inject_the_same(name) -> None:
    """The emitted mutating policies evaluated by cel-expr-python and applied as the recorded server applies them
    (tests/mutating_admission.py) give the pods that tests/test_injection.py gets with its CEL library."""
    comp = test_injection.policy(name)
    injected = 0
    for tenant, (policy, _) in test_injection.mutating(comp).items():
        for w in (w for w in comp.cluster.workloads if w.tenant == tenant):
            for pod, _ in test_injection.variations(comp, w).values():
                theirs = test_injection.mutate(policy, pod)
                assert mutate(policy, pod).pod == (pod if theirs is None else theirs[1])
                injected += theirs is not None
    assert injected > 0


@settings(PROFILE)
@given(valid_policies(), st.sampled_from(["1.33", "1.36"]))
def test_generated_policies_compile_on_the_api_server(policy, version) -> None:
    policy["spec"]["kubernetesVersion"] = version
    comp = compile_text(dump(policy))
    assert comp.ok, [d.message for d in comp.report.errors]
    assert list(refused(comp)) == []


JSON_LIKE = st.recursive(
    st.text(max_size=8) | st.integers(-(2**63), 2**63 - 1) | st.booleans(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(PROFILE)
@given(JSON_LIKE)
def test_literals_compile_and_evaluate_to_their_data(value: Any) -> None:
    text = literal(value)
    compiled = compile_expression(text, Context("validating"))
    assert compiled.issues == [], text
    assert evaluate(compiled, {}) == value
    assert cel.compile(text).execute({}) == value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # All of one type: written plain; an empty list takes its siblings' type.
        ({"a": [], "b": ["x"]}, "{'a': [], 'b': ['x']}"),
        ([{"key": "k", "operator": "Exists"}, {"key": "k", "value": "v"}],
         "[{'key': 'k', 'operator': 'Exists'}, {'key': 'k', 'value': 'v'}]"),
        # Mixed: every item wrapped, the first too (dyn matches only dyn).
        ({"key": "k", "operator": "In", "values": ["a"]},
         "{'key': dyn('k'), 'operator': dyn('In'), 'values': dyn(['a'])}"),
        ([1, "a"], "[dyn(1), dyn('a')]"),
        # Maps of different value types are different types: the list's items are wrapped.
        ([{"a": "x"}, {"a": 1}], "[dyn({'a': 'x'}), dyn({'a': 1})]"),
        ({"s": "it's"}, "{'s': 'it\\'s'}"),
    ],
)  # fmt: skip
def test_literal_forms(value: Any, expected: str) -> None:
    assert literal(value) == expected

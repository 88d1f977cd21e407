"""Every case of the admission vectors (Pod admission recorded from a real kube-apiserver v1.36) against
`policyc.k8s.admission`.

The vectors live in ``../shared/testdata/admission-vectors`` next to the repository (or under
``$POLICYC_SHARED``), or in the directory named by ``POLICYC_ADMISSION_VECTORS``; every ``*.json`` file there is
read, and its README describes the format. For each case the namespace's LimitRanges and ResourceQuotas are taken
as submitted, the prior pods are admitted one after another (each admitted one adds to quota usage), and the tested
pod is admitted last. Compared exactly: the stored LimitRanges, the prior pods' verdicts, the quota usage before the
tested pod, its verdict and HTTP code, and for an admitted pod its containers' resources (as quantities), priority,
priority class, preemption policy (each present exactly where the server's returned pod has it) and the
LimitRanger annotation. A refusal's message must carry the key phrases of
its kind of refusal (the README's table); a refusal of a kind this file does not know fails the case.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policyc.k8s.admission import LIMIT_RANGER_ANNOTATION, admit_pod, charge, stored_limit_range
from policyc.k8s.quantity import Quantity
from tests.conftest import missing_shared_data, shared_dir

VECTORS = Path(os.environ.get("POLICYC_ADMISSION_VECTORS") or shared_dir() / "testdata" / "admission-vectors")

KEY_PHRASES = (
    re.compile(r"failed quota: [^:]+: must specify [^ ]+ for: "),
    re.compile(r"exceeded quota: [^,]+, requested: [^=]+=.*, used: [^=]+=.*, limited: [^=]+="),
    re.compile(r"(minimum|maximum) [^ ]+ usage per (Container|Pod) is [^ ,.]+"),
    re.compile(r"No limit is specified"),
    re.compile(r"[^ \[]+ max limit to request ratio per (Container|Pod) is [^ ,]+"),
    re.compile(r"must be less than or equal to [^ ]+ limit"),
    re.compile(r"Limit must be set for non overcommitable resources"),
    re.compile(r"must be equal to [^ ]+ limit"),
    re.compile(r"must be an integer"),
    re.compile(r"no PriorityClass with name [^ ]+ was found"),
    re.compile(r"the integer value of priority \(-?\d+\) must not be provided in pod spec"),
)
"""The phrase each kind of refusal carries (with the object, resource or key it names)."""


def _cases() -> list[Any]:
    return list(_each_case())


def _each_case() -> Iterator[Any]:
    files = sorted(VECTORS.glob("*.json"))
    if not files:
        yield pytest.param(None, id="missing-vectors")
    for path in files:
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            yield pytest.param(case, id=f"{path.stem}/{case['index']}-{case['id']}")


def _as_quantities(resources: dict | None) -> dict[str, Quantity]:
    return {k: Quantity.from_json(v) for k, v in (resources or {}).items()}


def _containers(pod: dict, field: str) -> list[dict]:
    return [
        {
            "name": c["name"],
            "requests": _as_quantities((c.get("resources") or {}).get("requests")),
            "limits": _as_quantities((c.get("resources") or {}).get("limits")),
        }
        for c in pod["spec"].get(field) or ()
    ]


def _expected_containers(mutated: dict, field: str) -> list[dict]:
    return [
        {
            "name": c["name"],
            "requests": _as_quantities(c["resources"].get("requests")),
            "limits": _as_quantities(c["resources"].get("limits")),
        }
        for c in mutated.get(field) or ()
    ]


def _spec_quantities(spec: dict) -> dict:
    """A LimitRange spec with every quantity parsed, so that notation does not count."""
    return {
        "limits": [
            {k: v if k == "type" else _as_quantities(v) for k, v in item.items()} for item in spec.get("limits") or ()
        ]
    }


@pytest.mark.parametrize("case", _cases())
def test_admission_vector(case: dict | None) -> None:
    if case is None:
        missing_shared_data(VECTORS)
    objects = case["namespaceObjects"]
    limit_ranges = [o for o in objects if o["kind"] == "LimitRange"]
    quotas = [o for o in objects if o["kind"] == "ResourceQuota"]
    assert all(s["created"] for s in case["setup"]), "a case whose namespace objects were refused is not modelled"
    assert {o["kind"] for o in objects} <= {"LimitRange", "ResourceQuota"}

    for lr, stored in zip(
        limit_ranges, [s for s in case["namespaceObjectsStored"] if s["kind"] == "LimitRange"], strict=True
    ):
        assert _spec_quantities(stored_limit_range(lr)["spec"]) == _spec_quantities(stored["spec"])

    classes = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": c["name"]},
            **{k: c[k] for k in ("value", "globalDefault", "preemptionPolicy") if k in c},
        }
        for c in case["priorityClasses"]
    ]
    used: dict = {}
    for prior in case["priorPods"]:
        decision = admit_pod(
            prior["pod"], limit_ranges=limit_ranges, quotas=quotas, priority_classes=classes, used=used
        )
        assert decision.admitted == prior["admitted"], f"prior pod {prior['name']}: {decision.refusal}"
        if decision.admitted:
            used = charge(decision.pod, quotas, used)
    for quota, status in case["quotaStatusBefore"].items():
        for key, amount in (status.get("used") or {}).items():
            assert used.get(quota, {}).get(key, Quantity.from_value(0)) == Quantity.from_json(amount), (quota, key)

    decision = admit_pod(case["pod"], limit_ranges=limit_ranges, quotas=quotas, priority_classes=classes, used=used)
    refusal = decision.refusal
    assert ("admitted" if decision.admitted else "refused") == case["verdict"], refusal or decision.pod
    if refusal is not None:
        assert refusal.code == case["code"]
        phrases = [m.group(0) for p in KEY_PHRASES for m in p.finditer(case["message"])]
        assert phrases, f"a refusal of a kind this test does not know: {case['message']}"
        named = re.search(r"(?:failed|exceeded) quota: ([^:,]+)", case["message"])
        if named and named.group(1) != refusal.object:
            # The server checks quotas in its cache's order, so when several refuse, any may be named: that one
            # alone must refuse the pod in the same words, and the model's choice must be a quota refusal too.
            assert refusal.plugin == "ResourceQuota"
            alone = [q for q in quotas if q["metadata"]["name"] == named.group(1)]
            refusal = admit_pod(
                case["pod"], limit_ranges=limit_ranges, quotas=alone, priority_classes=classes, used=used
            ).refusal
            assert refusal is not None
        for phrase in phrases:
            assert phrase in refusal.message, (phrase, refusal.message)
        return
    pod, expected = decision.pod, case["mutated"]
    assert pod is not None
    spec = pod["spec"]
    returned = case["mutatedPod"]["spec"]
    for key in ("priority", "priorityClassName", "preemptionPolicy"):  # present exactly where the server's pod has it
        assert (key in spec) == (key in returned), key
    assert spec.get("priority") == expected["priority"]
    assert spec.get("priorityClassName") == expected["priorityClassName"]
    assert spec.get("preemptionPolicy") == expected["preemptionPolicy"]
    annotations = pod["metadata"].get("annotations") or {}
    assert annotations.get(LIMIT_RANGER_ANNOTATION) == expected["annotations"].get(LIMIT_RANGER_ANNOTATION)
    assert _containers(pod, "containers") == _expected_containers(expected, "containers")
    assert _containers(pod, "initContainers") == _expected_containers(expected, "initContainers")

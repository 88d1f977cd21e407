"""The first error is the cause (issue 23, point 8): what follows from a mistake is not reported beside it.

Within one object, `policyc.language.parse` keeps one error per value and drops a required field's "missing" when an
unknown field beside it stands for it (misspelt, or glued to its value: 'count:8'). Across stages, an item parse
leaves out for its errors (and a pool resolve leaves out because its tier was) is known by name to later stages,
which neither report references to it nor infer from its absence (`Parsed.dropped`, `Cluster.complete`).
"""

from __future__ import annotations

import json

import pytest

from policyc.compiler import compile_text
from policyc.language.load import load_file
from policyc.language.parse import NAMED_LISTS
from policyc.output.formats import render_text
from tests.conftest import REPO

POLICIES = sorted((REPO / "policies").glob("*.yaml"))
ITEMS = [
    pytest.param(policy, list_name, i, id=f"{policy.stem}-{list_name}[{i}]")
    for policy in POLICIES
    for list_name in NAMED_LISTS
    for i in range(len(load_file(policy).data["spec"].get(list_name, [])))
]


@pytest.mark.parametrize(("policy", "list_name", "index"), ITEMS)
def test_an_item_left_out_for_its_error_causes_no_other(policy, list_name, index) -> None:
    data = load_file(policy).data
    data["spec"][list_name][index]["unknownField"] = 1
    report = compile_text(json.dumps(data), "policy.yaml").report  # JSON is YAML
    found = [(d.code, d.path) for d in report.sorted()]
    assert found == [("PC101", ("spec", list_name, index, "unknownField"))], render_text(report)


def test_the_walk_covers_every_named_list() -> None:
    assert {p.values[1] for p in ITEMS} == set(NAMED_LISTS)
    assert len(ITEMS) > 60


MINIMAL = (REPO / "policies" / "minimal.yaml").read_text()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            "      usage: training",
            "      usgae: training",
            "policy.yaml:16:7: error PC101: unknown field 'usgae' in 'nodePools[0]'; did you mean 'usage'?",
            id="misspelt-required-field",
        ),
        pytest.param(
            "count: 8}",
            "count:8}",
            "policy.yaml:18:45: error PC101: unknown field 'count:8' in 'nodePools[0].gpu'; write 'count: 8': YAML "
            "reads 'count:8' as one key, without a value",
            id="glued-required-field",
        ),
        pytest.param(
            "{guarantee: {gpu: 8}}",
            "{guarantee: {gpu:8}}",  # the key is refused (no such resource), and its value (null): one error
            "policy.yaml:23:27: error PC206: 'tenants[0].queue.guarantee.gpu:8': unknown resource 'gpu:8'; write "
            "'gpu: 8': YAML reads 'gpu:8' as one key, without a value",
            id="glued-dict-key",
        ),
        pytest.param(
            "count: 8}",
            "count: 8}\n      rdma: {resource: rdma/ib, speed: 400}",  # was an internal error (rdma: true is a bool)
            "policy.yaml:19:33: error PC101: unknown field 'speed' in 'nodePools[0].rdma'; expected one of "
            "'interfaces', 'perNode', 'resource'",
            id="unknown-field-in-a-union-with-a-bool",
        ),
    ],
)
def test_one_mistake_in_an_object_is_one_error(old, new, expected) -> None:
    assert old in MINIMAL
    assert render_text(compile_text(MINIMAL.replace(old, new), "policy.yaml").report) == expected

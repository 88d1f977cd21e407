"""Every valid YAML 1.2 document loads, with its positions (issue 23, point 7).

libyaml, which reads policies fast, refuses some valid YAML 1.2: a plain scalar holding ':' in a flow collection
(`{maxTime: 7-00:00:00}`, `[http://x]`), an anchor defined twice, and more. `policyc.language.load` then reads the text
again with ruamel.yaml's own parser. The official YAML test suite's cases (tests/cases/yaml-test-suite.json, its
"source" says where they come from) check both: every valid case loads to its expected JSON, or is refused only
for what policyc refuses on purpose (tags, non-string keys, several documents: PC003-PC007), but for the few
that neither parser reads; no error case is accepted that libyaml itself refuses.
"""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML, YAMLError

import policyc.language.load as load_module
from policyc.compiler import compile_file
from policyc.diagnostics import PolicyError
from policyc.language.load import load_bytes
from policyc.language.parse import parse
from tests.conftest import REPO

SUITE = json.loads((REPO / "tests" / "cases" / "yaml-test-suite.json").read_text(encoding="utf-8"))
REFUSED_ON_PURPOSE = {"PC003", "PC004", "PC005", "PC006", "PC007"}

STILL_REFUSED = {
    # Valid YAML 1.2 that neither libyaml nor ruamel.yaml's parser reads (PC002): what each case holds.
    "4MUZ:0": "a flow mapping's ':' on the line after its key",
    "4MUZ:2": "a flow mapping's ':' on the line after its key",
    "5MUD": "a flow mapping's ':' and value on the line after its key",
    "9SA2": "a multi-line double-quoted flow mapping key",
    "K3WX": "a flow mapping's ':' after a comment line",
    "NJ66": "a multi-line plain flow mapping key",
    "VJP3:1": "a flow mapping's ':' on the line after its key",
    "WZ62": "an empty node with a tag as a flow mapping key",
    "6BCT": "a tab as separation space",
    "6CA3": "a tab before a top-level flow collection",
    "A2M4": "a tab in a block sequence's indentation",
    "DK95:0": "a tab before a value on a line of its own",
    "DK95:3": "a tab before a value on a line of its own",
    "DK95:4": "a tab before a value on a line of its own",
    "Q5MG": "a tab before a flow mapping",
    "R4YG": "a tab inside a block scalar",
    "Y79Y:10": "a tab after an explicit key indicator",
    "BEC7": "a %YAML 1.3 directive",
    "HWV9": "a document-end marker without a document",
    "QT73": "a document-end marker after a comment",
}
MISREAD = {
    # Loaded, but not as the suite expects: the parser's reading, which policyc keeps.
    "652Z": "'?foo' in a flow mapping read as an explicit key",
    "HM87:1": "'?x' in a flow sequence read as an explicit key",
    "L24T:1": "a literal block scalar's trailing line of spaces",
    "S4JQ": "'! 12' (the non-specific tag) resolved as an integer, not a string",
    "Y2GN": "an anchor with ':' in its name (libyaml reads 'key: &an:chor value' as ':chor value')",
}
ACCEPTED_ERRORS = {
    # Invalid YAML that libyaml accepts (so ruamel.yaml's parser is never asked): the suite's error cases.
    "9C9N", "9HCY", "9JBA", "CVW2", "DK95:1", "EB22", "G5U8", "MUS6:0", "MUS6:1", "QB6E", "RHX7", "S98Z", "SU5Z",
    "U99R", "X4QW", "Y79Y:3", "YJV2",
}  # fmt: skip


def loaded(text: str) -> tuple[set[str], object]:
    """The codes of what loading `text` reports, and the data loaded (None when nothing could be)."""
    try:
        doc = load_bytes(text.encode(), "p.yaml")
    except PolicyError as e:
        return {d.code for d in e.diagnostics}, None
    return {d.code for d in doc.diagnostics}, doc.data


def libyaml_refuses(text: str) -> bool:
    try:
        list(YAML(typ="safe").compose_all(text))
    except YAMLError:
        return True
    return False


@pytest.mark.parametrize("case", SUITE["valid"], ids=lambda c: c["id"])
def test_valid_yaml_loads(case) -> None:
    codes, data = loaded(case["yaml"])
    if case["id"] in STILL_REFUSED:
        assert codes == {"PC002"}, f"{case['id']} now loads: remove it from STILL_REFUSED"
        return
    assert codes <= REFUSED_ON_PURPOSE, f"{case['id']} ({case['name']}): {sorted(codes)}"
    if not codes:
        assert (data == case["json"]) is (case["id"] not in MISREAD), f"{case['id']}: {data!r}"


def test_the_suite_holds_valid_yaml_that_libyaml_refuses() -> None:
    # The cases above would not test the second reading otherwise.
    refused = {c["id"] for c in SUITE["valid"] if libyaml_refuses(c["yaml"])} - set(STILL_REFUSED)
    assert {"UDM2", "58MP", "5T43", "DBG4", "3GZX", "JR7V"} <= refused  # ':' in flow scalars, anchors defined again
    assert len(refused) >= 16


@pytest.mark.parametrize("case", SUITE["error"], ids=lambda c: c["id"])
def test_invalid_yaml_is_refused(case) -> None:
    codes, _ = loaded(case["yaml"])
    if case["id"] in ACCEPTED_ERRORS:
        assert not libyaml_refuses(case["yaml"])
        assert "PC002" not in codes
        return
    assert "PC002" in codes, f"{case['id']} ({case['name']}) is accepted"


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ("a: {a: b:c}\n", {"a": {"a": "b:c"}}),
        ("a: {url: http://x/y}\n", {"a": {"url": "http://x/y"}}),
        ("a: [http://x/y, b]\n", {"a": ["http://x/y", "b"]}),
        ("a: [a#b]\n", {"a": ["a#b"]}),
        ("a: {b: c#d, e: f}\n", {"a": {"b": "c#d", "e": "f"}}),
        ("a: {t: 7-00:00:00}\n", {"a": {"t": "7-00:00:00"}}),
        ("a: {count:8}\n", {"a": {"count:8": None}}),  # one plain scalar, a key without a value: as YAML 1.2 reads it
        ("a: &x 1\nb: &x 2\nc: *x\n", {"a": 1, "b": 2, "c": 2}),  # an alias takes the latest anchor of its name
    ],
)
def test_plain_scalars_with_colon_and_hash_in_flow_collections(text, data) -> None:
    codes, found = loaded(text)
    assert not codes
    assert found == data


def test_positions_survive_the_second_reading() -> None:
    text = "spec:\n  slurm: {partition: gpu, maxTime: 7-00:00:00}\n  x: [http://a, b]\n"
    assert libyaml_refuses(text)
    doc = load_bytes(text.encode(), "p.yaml")
    # 2 spaces, "slurm: {" (8 characters), "partition: gpu, " (16): the key in column 27; "maxTime: " (9): value in 36
    assert doc.source_map.locate(("spec", "slurm", "maxTime"), at_key=True) == (2, 27)
    assert doc.source_map.locate(("spec", "slurm", "maxTime")) == (2, 36)
    assert doc.source_map.locate(("spec", "x", 1)) == (3, 17)


def test_a_slurm_max_time_in_a_flow_mapping_is_read_as_written() -> None:
    minimal = (REPO / "policies" / "minimal.yaml").read_text()
    pool_gpu = "      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}\n"
    assert pool_gpu in minimal
    text = minimal.replace(pool_gpu, pool_gpu + "      slurm: {partition: gpu, maxTime: 7-00:00:00}\n")
    doc = load_bytes(text.encode(), "policy.yaml")
    parsed = parse(doc.data, doc.source_map)
    assert not parsed.diagnostics
    assert parsed.policy.spec.node_pools[0].slurm.max_time == "7-00:00:00"


class _RefusingLibyaml:
    """Stands for libyaml refusing every text, so that the second reading reads them all."""

    def compose_all(self, text: str):
        raise YAMLError("refused")

    parse = compose_all


REFUSALS = sorted(p for p in (REPO / "tests" / "cases" / "invalid").glob("pc00*.yaml") if p.stem[:5] != "pc002")


def reported(case) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in compile_file(case, case.name).report.sorted()]


@pytest.mark.parametrize("case", REFUSALS, ids=lambda p: p.stem)
def test_what_policyc_refuses_on_purpose_is_refused_on_both_readings(monkeypatch, case) -> None:
    first = reported(case)
    real = load_module._yaml
    monkeypatch.setattr(
        load_module, "_yaml", lambda pure_python=False: real(True) if pure_python else _RefusingLibyaml()
    )
    # The same diagnostics; a deep nesting's is a line earlier (the pre-scan of the events counts keys as nodes).
    assert reported(case) == first


@pytest.mark.parametrize("policy", sorted((REPO / "policies").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_second_reading_gives_the_same_data_and_positions(monkeypatch, policy) -> None:
    first = load_module.load_file(policy)
    real = load_module._yaml
    monkeypatch.setattr(
        load_module, "_yaml", lambda pure_python=False: real(True) if pure_python else _RefusingLibyaml()
    )
    second = load_module.load_file(policy)
    assert second.data == first.data
    assert second.source_map == first.source_map
    assert len(first.source_map.values) > 30


def test_files_above_the_limit_of_the_second_reading_get_libyaml_error_explained(monkeypatch) -> None:
    monkeypatch.setattr(load_module, "CONFORMING_MAX_CHARS", 10)
    with pytest.raises(PolicyError) as e:
        load_bytes(b"slurm: {partition: gpu, maxTime: 7-00:00:00}\n", "p.yaml")
    [found] = e.value.diagnostics
    assert (found.line, found.column) == (1, 34)
    assert found.message == "'7-00:00:00' holds a ':' inside '{...}' or '[...]', valid YAML 1.2 that libyaml refuses"
    # quoting keeps the value (the hint used to say "write '7-00: 00:00'", which changes it)
    assert found.hint == 'quote it: "7-00:00:00"'
    with pytest.raises(PolicyError) as e:
        load_bytes(b"gpu: {product: x, count:8}\n", "p.yaml")
    assert e.value.diagnostics[0].hint == "quote it: \"count:8\"; or, if 'count' is a key, write 'count: 8'"
    with pytest.raises(PolicyError) as e:
        load_bytes(b"a: &x 1\nb: &x 2\nc: *x\n", "p.yaml")
    [found] = e.value.diagnostics
    assert (found.line, found.column) == (2, 4)
    assert "already defined on line 1" in found.message
    assert found.hint == "rename this one, and the aliases after it that mean this value ('*x')"


def test_a_lone_surrogate_escape_is_refused_on_both_readings() -> None:
    # ruamel.yaml's parser takes "\ud800", which is no character: libyaml's error stands
    assert loaded('a: "\\ud800"\n') == ({"PC002"}, None)
    assert loaded('a: "\\U0001F600"\n') == (set(), {"a": "\U0001f600"})

"""The dump source reads a kubectl List whole and exactly, and says in one line what is wrong with anything else."""

from __future__ import annotations

import json

import pytest

from policyc.cluster.source import NODE, POD, ClusterSource, DumpSource, Kind, SourceError
from tests.conftest import missing_shared_data, shared_dir


def recorded(stem: str = "ai-prod") -> str:
    path = shared_dir() / "testdata" / "cluster-dumps" / stem / "clean.json"
    if not path.is_file():
        missing_shared_data(path)
    return str(path)


def test_every_object_of_the_dump_comes_back_as_json_reads_it() -> None:
    path = recorded()
    with open(path, encoding="utf-8") as f:
        items = json.load(f)["items"]
    source = DumpSource(path)
    assert isinstance(source, ClusterSource)
    read = [obj for kind in source.kinds() for obj in source.objects(kind)]
    key = lambda o: (o["apiVersion"], o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])  # noqa: E731
    assert sorted(read, key=key) == sorted(items, key=key)
    assert len(list(source.objects(NODE))) == sum(1 for o in items if o["kind"] == "Node")
    assert Kind("scheduling.k8s.io", "PriorityClass") in source.kinds()
    assert list(source.objects(Kind("example.com", "Nothing"))) == []


def test_a_dump_is_taken_to_hold_every_kind_unless_told_which() -> None:
    path = recorded()
    assert DumpSource(path).judged(Kind("example.com", "Nothing"))
    told = DumpSource(path, kinds=frozenset({NODE, POD}))
    assert told.judged(POD) and not told.judged(Kind("example.com", "Nothing"))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "is not JSON"),
        ("{'items': []}", "is not JSON"),
        ("[]", "is not a kubectl List (no 'items' list)"),
        ('{"items": 3}', "is not a kubectl List (no 'items' list)"),
        ('{"items": [{"kind": "Pod"}]}', "items[0] is not a Kubernetes object"),
        ('{"items": [{"metadata": {}}]}', "items[0] is not a Kubernetes object"),
        # kubectl get -o yaml instead of -o json: said as such, not as a malformed JSON at byte 0
        ("apiVersion: v1\nitems: []\nkind: List\n", "is YAML, not JSON (kubectl get -o yaml writes YAML)"),
        ("# a note\nkind: List\nitems: []\n", "is YAML, not JSON (kubectl get -o yaml writes YAML)"),
    ],
)
def test_anything_but_a_list_is_one_line_saying_what(tmp_path, text: str, says: str) -> None:
    path = tmp_path / "policy.yaml"  # the hint must not tell to write the dump over the file given
    path.write_text(text)
    with pytest.raises(SourceError) as raised:
        DumpSource(path)
    message = str(raised.value)
    assert says in message and "\n" not in message and str(path) in message
    if "items[0]" not in says:
        assert "make one with kubectl get <kinds> -A -o json > cluster.json" in message


def test_an_unreadable_path_is_one_line(tmp_path) -> None:
    with pytest.raises(SourceError, match=r"cannot read .*: (No such file|Is a directory)"):
        DumpSource(tmp_path / "absent.json")
    with pytest.raises(SourceError, match="cannot read"):
        DumpSource(tmp_path)

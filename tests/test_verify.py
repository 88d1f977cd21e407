"""policyc.proof.schemas: emitted objects are checked against the API server's schemas, strictly."""

from __future__ import annotations

from policyc.artifacts import Artifact, Manifest
from policyc.proof.schemas import verify

QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "q"},
    "spec": {"weight": 1, "guarantee": {"resource": {"cpu": "1"}}, "deserved": {"cpu": "1"}},
}
QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": {"name": "r", "namespace": "n"},
    "spec": {"hard": {"pods": "1"}},
}


def run(*objects: dict) -> list:
    artifact = Artifact("x.yaml", tuple(Manifest(o, (("spec", "tenants", 0),)) for o in objects), synced=True)
    return verify([artifact], "1.33")


def test_valid_objects_pass() -> None:
    assert run(QUEUE, QUOTA) == []


def test_unknown_field_in_a_custom_resource_is_pc901() -> None:
    bad = {**QUEUE, "spec": {**QUEUE["spec"], "guaranteed": {"cpu": "1"}}}
    [d] = run(bad)
    assert d.code == "PC901"
    assert "Queue 'q'" in d.message and "guaranteed" in d.message
    assert d.path == ("spec", "tenants", 0)


def test_custom_resource_metadata_is_checked_as_object_meta() -> None:
    bad = {**QUEUE, "metadata": {"name": "q", "labels": {"a": 1}}}
    [d] = run(bad)
    assert "metadata/labels/a" in d.message


def test_built_in_kinds_are_checked_strictly() -> None:
    bad = {**QUOTA, "spec": {"hard": {"pods": "1"}, "hardd": {}}}
    assert [d.code for d in run(bad)] == ["PC901"]


def test_kind_without_schema_is_reported() -> None:
    [d] = run({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert d.code == "PC901" and "no schema" in d.message


def test_a_huge_failing_value_gives_a_short_message() -> None:
    bad = {**QUEUE, "spec": {**QUEUE["spec"], "weight": "9" * 100_000, "guaranteed": {"cpu": "1" * 100_000}}}
    found = run(bad)
    assert [d.code for d in found] == ["PC901", "PC901"]
    for d in found:
        assert len(d.message) < 300, d.message
    assert "spec/weight: type" in found[1].message and '"999' in found[1].message
    assert "additionalProperties" in found[0].message and '["guaranteed"]' in found[0].message


def test_too_many_flavors_names_the_keyword_and_the_count() -> None:
    flavor = {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "1"}]}
    cohort = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Cohort",
        "metadata": {"name": "c"},
        "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [flavor] * 65}]},
    }
    found = run(cohort)
    assert found and all(len(d.message) < 300 for d in found)
    [d] = [d for d in found if "maxItems" in d.message]
    assert "at spec/resourceGroups/0/flavors: maxItems limit=64 (value: 65 items: [" in d.message
    assert d.message.endswith("...)")


def test_what_the_schema_allows_but_the_api_server_refuses_is_pc901() -> None:
    """Quota scopes that contradict each other and a scope selector on a resource it cannot scope pass the schema;
    the API server's validation refuses them (Kubernetes' ValidateResourceQuota)."""
    scopes = {**QUOTA, "spec": {"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating"]}}
    [d] = run(scopes)
    assert d.code == "PC901" and "would refuse ResourceQuota 'r'" in d.message
    assert "Terminating" in d.message


def test_a_reserved_priority_class_name_is_refused() -> None:
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-gpu"}, "value": 5}
    [d] = run(pc)
    assert "would refuse PriorityClass 'system-gpu'" in d.message and "reserved for system use" in d.message


def test_a_second_default_priority_class_is_refused_at_admission() -> None:
    def pc(name: str) -> dict:
        return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": 5, "globalDefault": True}  # fmt: skip

    [d] = run(pc("a"), pc("b"))
    assert "would refuse PriorityClass 'b'" in d.message and "already marked as default" in d.message


def test_node_taints_are_validated_as_the_api_server_validates_a_node() -> None:
    import json

    plan = {"pools": [{"name": "p", "taints": [{"key": "a.io/x", "effect": "NoSchedule"},
                                              {"key": "a.io/x", "value": "y", "effect": "NoSchedule"}]}]}  # fmt: skip
    text = Artifact("nodes/plan.json", text=json.dumps(plan), sources=(("spec", "domain"), ("spec", "nodePools", 3)))
    [d] = verify([text], "1.33")
    assert d.code == "PC901" and "taints of p" in d.message and "unique by key and effect" in d.message
    assert d.path == ("spec", "nodePools", 3)
    plan["pools"][0]["taints"].pop()
    assert verify([Artifact("nodes/plan.json", text=json.dumps(plan))], "1.33") == []

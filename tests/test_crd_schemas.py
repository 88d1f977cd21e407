"""The generated CRD schemas in ``schemas/crds/``: fresh, valid, strict, and self-contained."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from policyc.k8s.crd_schemas import crd_schema
from tests.conftest import missing_shared_data, repo_script, shared_dir

REPO = Path(__file__).resolve().parents[1]
SHARED = shared_dir()
SCHEMA_FILES = sorted((REPO / "schemas" / "crds").glob("*.json"))

QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "team-a"},
    "spec": {"weight": 1, "capability": {"cpu": "64", "nvidia.com/gpu": 8}, "reclaimable": True},
}
CONTAINER = {"name": "main", "image": "registry.example/train:1"}
VOLCANO_JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {"name": "train", "namespace": "team-a"},
    "spec": {
        "queue": "team-a",
        "minAvailable": 1,
        "tasks": [{"name": "worker", "replicas": 1, "template": {"spec": {"containers": [CONTAINER]}}}],
    },
}
PYTORCH_JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "train", "namespace": "team-a"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "restartPolicy": "OnFailure",
                "template": {"spec": {"containers": [CONTAINER]}},
            }
        }
    },
}
NOMINAL_QUOTA = "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota"
ADMISSION_CHECKS = "spec.admissionChecksStrategy.admissionChecks"
CLUSTER_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ClusterQueue",
    "metadata": {"name": "team-a"},
    "spec": {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "h100",
                        "resources": [
                            {"name": "cpu", "nominalQuota": 64},
                            {"name": "nvidia.com/gpu", "nominalQuota": "8"},
                        ],
                    }
                ],
            }
        ],
    },
}

KAI_QUEUE = {
    "apiVersion": "scheduling.run.ai/v2",
    "kind": "Queue",
    "metadata": {"name": "team-a"},
    "spec": {
        "parentQueue": "org",
        "resources": {
            "cpu": {"quota": 96000, "limit": -1, "overQuotaWeight": 1},
            "gpu": {"quota": 0.5, "limit": 8, "overQuotaWeight": 1},
            "memory": {"quota": 1073741.824, "limit": -1, "overQuotaWeight": 1},
        },
    },
}
SCHEDULING_SHARD = {
    "apiVersion": "kai.scheduler/v1",
    "kind": "SchedulingShard",
    "metadata": {"name": "default"},
    "spec": {"placementStrategy": {"gpu": "binpack", "cpu": "spread"}},
}


def errors(obj: dict[str, Any], schema_of: dict[str, Any] | None = None) -> list[str]:
    """Errors of ``obj`` against the schema of ``schema_of``'s kind (default: ``obj``'s own)."""
    schema_of = schema_of or obj
    schema = crd_schema(schema_of["apiVersion"], schema_of["kind"])
    assert schema is not None, f"no schema for {schema_of['apiVersion']} {schema_of['kind']}"
    return [e.message for e in Draft202012Validator(schema).iter_errors(obj)]


def with_(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with the dotted ``path`` set to ``value``.

    Digits index lists; missing objects on the way are created.
    """
    copy = json.loads(json.dumps(obj))
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node = copy
    for p in parents:
        node = node[p] if isinstance(p, int) else node.setdefault(p, {})
    node[last] = value
    return copy


def test_generated_schemas_are_up_to_date() -> None:
    if not (SHARED / "crds").is_dir():
        missing_shared_data(SHARED / "crds")
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_crd_schemas.py"), "--check", "--shared", str(SHARED)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_expected_schema_files_exist() -> None:
    names = {p.name for p in SCHEMA_FILES}
    kueue = ("clusterqueue", "localqueue", "resourceflavor", "cohort", "workloadpriorityclass", "topology")
    assert {f"kueue.x-k8s.io_{kind}_v1beta2.json" for kind in kueue} <= names
    assert {
        "scheduling.volcano.sh_queue_v1beta1.json",
        "scheduling.volcano.sh_podgroup_v1beta1.json",
        "batch.volcano.sh_job_v1alpha1.json",
        "kubeflow.org_pytorchjob_v1.json",
        "scheduling.run.ai_queue_v2.json",
        "kai.scheduler_schedulingshard_v1.json",
    } <= names


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_schema_is_valid_draft_2020_12(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    source = schema["x-policyc-source"]
    assert source["license"] == "Apache-2.0"
    assert len(source["commit"]) == 40 and len(source["crd_sha256"]) == 64
    assert path.name == f"{source['group']}_{source['kind'].lower()}_{source['version']}.json"


@pytest.mark.parametrize(
    "obj",
    [QUEUE, VOLCANO_JOB, PYTORCH_JOB, CLUSTER_QUEUE, KAI_QUEUE, SCHEDULING_SHARD],
    ids=lambda o: f"{o['apiVersion']}-{o['kind']}",
)
def test_minimal_objects_validate(obj: dict[str, Any]) -> None:
    assert errors(obj) == []


@pytest.mark.parametrize(
    ("obj", "path", "value"),
    [
        (QUEUE, "apiVersion", "scheduling.volcano.sh/v1alpha1"),
        (QUEUE, "kind", "PodGroup"),
        (QUEUE, "spec.guaranteed", {"resource": {"cpu": 4}}),  # unknown field (typo of guarantee)
        (QUEUE, "spec.guarantee", {"cpu": 4}),  # must be nested under guarantee.resource
        (QUEUE, "spec.weight", 0),  # CRD: minimum 1
        (QUEUE, "spec.capability.cpu", "4 cores"),  # not a quantity
        (QUEUE, "spec.capability.cpu", "4\n"),  # Go's `$` does not match before a final newline
        (QUEUE, "spec.dequeueStrategy", "lifo"),  # enum
        (VOLCANO_JOB, "spec.tasks", []),  # CRD: minItems 1
        (VOLCANO_JOB, "spec.policies", [{"event": "PodExploded", "action": "RestartJob"}]),  # enum
        (VOLCANO_JOB, "spec.tasks.0.template.spec.containers.0.ports", [{"name": "http"}]),  # required
        (VOLCANO_JOB, "spec.tasks.0.template.spec.containers.0.resources.limits", {"cpu": 1.5}),
        (PYTORCH_JOB, "spec.pytorchReplicaSpecs.Master.replica", 1),  # unknown replica-spec field
        (PYTORCH_JOB, "spec.pytorchReplicaSpecs.Master.template.spec.container", [CONTAINER]),
        (CLUSTER_QUEUE, "spec.cohort", "org"),  # v1beta1 field, renamed cohortName in v1beta2
        (CLUSTER_QUEUE, NOMINAL_QUOTA, "eight"),
        (CLUSTER_QUEUE, ADMISSION_CHECKS, [{"name": "p", "onFlavors": ["a", "a"]}]),  # list-type set
        (KAI_QUEUE, "spec.resources.cpu.quota", "96"),  # KAI numbers are JSON numbers, not quantities
        (KAI_QUEUE, "spec.resources.ephemeral-storage", {"quota": 8}),  # only gpu, cpu and memory
        (KAI_QUEUE, "spec.resources.gpu.deserved", 8),  # quota, limit and overQuotaWeight only
        (KAI_QUEUE, "spec.parent", "org"),  # the field is parentQueue
        (SCHEDULING_SHARD, "spec.placementStrategy.memory", "binpack"),  # gpu and cpu only
    ],
)
def test_invalid_objects_are_rejected(obj: dict[str, Any], path: str, value: Any) -> None:
    assert errors(with_(obj, path, value), schema_of=obj)


def test_list_type_set_accepts_distinct_items() -> None:
    checks = [{"name": "p", "onFlavors": ["a", "b"]}]
    assert errors(with_(CLUSTER_QUEUE, ADMISSION_CHECKS, checks)) == []


@pytest.mark.parametrize("quantity", [8, "8", "500m", "1.5Gi", "1e3"])
def test_int_or_string_quantities_accept_integers_and_strings(quantity: int | str) -> None:
    assert errors(with_(QUEUE, "spec.capability.cpu", quantity)) == []
    assert errors(with_(CLUSTER_QUEUE, NOMINAL_QUOTA, quantity)) == []


@pytest.mark.parametrize("port", [8080, "http"])
def test_int_or_string_ports_accept_integers_and_strings(port: int | str) -> None:
    probe = {"httpGet": {"port": port}}
    job_probe = "spec.tasks.0.template.spec.containers.0.livenessProbe"
    pytorch_probe = "spec.pytorchReplicaSpecs.Master.template.spec.containers.0.livenessProbe"
    assert errors(with_(VOLCANO_JOB, job_probe, probe)) == []
    assert errors(with_(PYTORCH_JOB, pytorch_probe, probe)) == []


def test_int_or_string_rejects_other_types() -> None:
    assert errors(with_(QUEUE, "spec.capability.cpu", 1.5))
    assert errors(with_(QUEUE, "spec.capability.cpu", None))


def test_metadata_is_left_to_objectmeta_validation() -> None:
    assert errors(with_(QUEUE, "metadata", {"name": "q", "labels": {"a": "b"}, "anything": 1})) == []
    assert errors(with_(QUEUE, "metadata", "q"))


def test_cel_rules_are_counted() -> None:
    schema = crd_schema("kueue.x-k8s.io/v1beta2", "ResourceFlavor")
    assert schema is not None
    assert schema["x-policyc-source"]["dropped_cel_rules"] > 0
    assert "x-kubernetes-validations" not in json.dumps(schema)


def test_unknown_kinds_have_no_schema() -> None:
    assert crd_schema("v1", "ConfigMap") is None
    assert crd_schema("scheduling.volcano.sh/v1beta1", "NoSuchKind") is None


def test_runtime_does_not_need_shared(tmp_path: Path) -> None:
    """Load and use the schemas in a fresh interpreter, away from the checkout's ../shared."""
    code = (
        "import jsonschema, json, sys\n"
        "from policyc.k8s.crd_schemas import crd_schema\n"
        "obj = json.loads(sys.argv[1])\n"
        "schema = crd_schema(obj['apiVersion'], obj['kind'])\n"
        "jsonschema.validate(obj, schema, jsonschema.Draft202012Validator)\n"
    )
    env = {**os.environ, "POLICYC_SHARED": str(tmp_path / "nowhere"), "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code, json.dumps(QUEUE)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def _generator() -> Any:
    """``tools/gen_crd_schemas.py`` as a module (``tools`` is not a package)."""
    return repo_script("tools/gen_crd_schemas.py")


def test_generator_applies_kubernetes_extensions() -> None:
    gen = _generator()
    string = {"type": "string"}
    preserve = {"x-kubernetes-preserve-unknown-fields": True}
    node = {
        "type": "object",
        "description": "dropped",
        "properties": {
            "free": {"type": "object", **preserve, "properties": {"a": string}},
            "embedded": {"type": "object", "x-kubernetes-embedded-resource": True, **preserve},
            "maybe": {**string, "nullable": True},
            "choice": {**string, "nullable": True, "enum": ["x"]},
            "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "format": "double"},
            "tags": {"type": "array", "items": string, "x-kubernetes-list-type": "set"},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": string}},
            },
            "either": {  # anyOf branches restrict the skeleton; they must not close objects
                "type": "object",
                "properties": {"a": string, "b": string},
                "anyOf": [{"required": ["a"], "properties": {"a": {"minLength": 1}}}, {"required": ["b"]}],
            },
        },
        "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}, {"rule": "has(self.tags)"}],
    }
    counts = gen.Counts()
    validator = Draft202012Validator(gen._convert(node, "test", counts, closed=True))
    assert (counts.cel_rules, counts.cel_transition_rules, counts.list_map_keys) == (2, 1, 1)
    ok = {
        "free": {"a": "x", "anything": [1]},
        "embedded": {"apiVersion": "v1", "kind": "ConfigMap", "data": {}},
        "maybe": None,
        "choice": "x",
        "ratio": 0.5,
        "tags": ["a", "b"],
        "ports": [{"name": "http"}],
        "either": {"b": "y"},
    }
    assert list(validator.iter_errors(ok)) == []
    for path, value in [
        ("unknown", 1),
        ("free.a", 1),
        ("embedded", {"kind": "ConfigMap"}),
        ("maybe", 1),
        ("choice", None),  # the API server checks `enum` on null too
        ("ratio", 0),
        ("tags", ["a", "a"]),
        ("ports", [{"name": "http", "port": 80}]),
        ("either", {"a": ""}),
        ("either", {}),
    ]:
        assert list(validator.iter_errors(with_(ok, path, value))), path


@pytest.mark.parametrize(
    ("go", "python"),
    [
        ("^[a-z]+$", r"^[a-z]+$(?!\n)"),
        (r"^a\z", r"^a$(?!\n)"),
        ("^[$]]$", r"^[$]]$(?!\n)"),  # `$` in a class is a literal
        ("^[]$]$", r"^[]$]$(?!\n)"),  # so is `]` first in a class
        # RE2 folds case from `(?i)` to the end (prometheus-operator's partial_response_strategy): a scoped group
        ("^(?i)(abort|warn)?$", r"^(?i:(abort|warn)?$(?!\n))"),
        ("(?i)^a$", r"(?i:^a$(?!\n))"),
        # RE2's Perl classes are ASCII-only (Python's match Unicode digits and spaces): Karpenter's budget schedule
        (r"^\d+$", r"^[0-9]+$(?!\n)"),
        (r"(.+)\s(.+)", r"(.+)[\t\n\f\r ](.+)"),
        (r"^[\w.]\S$", r"^[0-9A-Za-z_.][^\t\n\f\r ]$(?!\n)"),
    ],
)
def test_go_patterns_are_translated(go: str, python: str) -> None:
    assert _generator().python_pattern(go) == python


@pytest.mark.parametrize(
    "go", [r"^[\D]$", r"^\pL+$", "^[[:alpha:]]+$", "(?s)^a$", "^(a(?i)b)$", "^(?i)a(?i)b$", "^a{,2}$", "^(a$"]
)
def test_untranslatable_go_patterns_fail_loudly(go: str) -> None:
    gen = _generator()
    with pytest.raises(gen.GenerationError, match=re.escape(repr(go))):
        gen.python_pattern(go)

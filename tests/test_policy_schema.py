"""schemas/policy.schema.json: generated from the models, checked in, and in agreement with the examples."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from policyc.commands.cli import main
from policyc.language.model import json_schema_text
from tests.conftest import REPO, example_policies

CHECKED_IN = REPO / "schemas" / "policy.schema.json"


def test_checked_in_schema_is_up_to_date() -> None:
    assert CHECKED_IN.read_text(encoding="utf-8") == json_schema_text(), (
        "schemas/policy.schema.json is stale: run `policyc schema > schemas/policy.schema.json`"
    )


def test_schema_command_prints_it() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0
    assert result.stdout == json_schema_text()


def test_schema_is_valid_and_describes_fields() -> None:
    schema = json.loads(json_schema_text())
    Draft202012Validator.check_schema(schema)
    pool = schema["$defs"]["NodePool"]
    assert pool["additionalProperties"] is False
    assert "training, inference, or hybrid" in pool["properties"]["usage"]["description"]


@pytest.mark.parametrize("policy", example_policies(), ids=lambda p: p.stem)
def test_examples_validate_against_the_schema(policy) -> None:
    data = YAML(typ="safe", pure=True).load(policy.read_text())
    errors = [e.message for e in Draft202012Validator(json.loads(json_schema_text())).iter_errors(data)]
    assert not errors


def test_schema_rejects_what_the_compiler_rejects() -> None:
    data = YAML(typ="safe", pure=True).load((REPO / "tests" / "cases" / "five-mistakes.yaml").read_text())
    errors = list(Draft202012Validator(json.loads(json_schema_text())).iter_errors(data))
    assert len(errors) >= 3  # wrong type, label value, unknown field (references are the compiler's job)

"""The policy language: pydantic models and the JSON Schema generated from them."""

from __future__ import annotations

import json

from policyc.language.model.policy import API_VERSION, KIND, ClusterPolicy, policy_model

__all__ = ["API_VERSION", "KIND", "ClusterPolicy", "json_schema", "json_schema_text", "policy_model"]

SCHEMA_ID = "https://policyc.io/schemas/v1alpha1/policy.schema.json"


def json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a policy file."""
    schema = policy_model().model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def json_schema_text() -> str:
    """The schema as the bytes checked in at schemas/policy.schema.json."""
    return json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

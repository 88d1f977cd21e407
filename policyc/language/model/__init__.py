"""The policy language: pydantic models and the JSON Schema generated from them."""

from __future__ import annotations

import json

from policyc.language.model.policy import API_VERSION, KIND, ClusterPolicy, policy_model, team_model

__all__ = ["API_VERSION", "KIND", "ClusterPolicy", "json_schema", "json_schema_text", "policy_model"]

SCHEMA_ID = "https://policyc.io/schemas/v1alpha1/policy.schema.json"
TEAM_SCHEMA_ID = "https://policyc.io/schemas/v1alpha1/tenant.schema.json"


def json_schema(*, team: bool = False) -> dict:
    """The JSON Schema (draft 2020-12) of a policy file, or (`team`) of a team's file of a policy directory."""
    schema = (team_model() if team else policy_model()).model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": TEAM_SCHEMA_ID if team else SCHEMA_ID,
            **schema}  # fmt: skip


def json_schema_text(*, team: bool = False) -> str:
    """The schema as the bytes checked in at schemas/policy.schema.json (schemas/tenant.schema.json for `team`)."""
    return json.dumps(json_schema(team=team), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

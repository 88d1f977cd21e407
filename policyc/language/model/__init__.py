"""The policy language: pydantic models and the JSON Schema generated from them."""

from __future__ import annotations

import json

from policyc.language.model.policy import API_VERSION, KIND, ClusterPolicy, cluster_model, policy_model, team_model

__all__ = ["API_VERSION", "KIND", "ClusterPolicy", "json_schema", "json_schema_text", "policy_model"]

SCHEMA_ID = "https://policyc.io/schemas/v1alpha1/policy.schema.json"
TEAM_SCHEMA_ID = "https://policyc.io/schemas/v1alpha1/tenant.schema.json"
CLUSTER_SCHEMA_ID = "https://policyc.io/schemas/v1alpha1/cluster.schema.json"


def json_schema(*, team: bool = False, cluster: bool = False) -> dict:
    """The JSON Schema (draft 2020-12) of a policy file, or of a policy directory's team file (`team`) or cluster file
    (`cluster`)."""
    model, schema_id = (
        (team_model(), TEAM_SCHEMA_ID) if team else (cluster_model(), CLUSTER_SCHEMA_ID) if cluster
        else (policy_model(), SCHEMA_ID)
    )  # fmt: skip
    schema = model.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": schema_id, **schema}


def json_schema_text(*, team: bool = False, cluster: bool = False) -> str:
    """The schema as the bytes checked in at schemas/policy.schema.json (schemas/tenant.schema.json for `team`,
    schemas/cluster.schema.json for `cluster`)."""
    return json.dumps(json_schema(team=team, cluster=cluster), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

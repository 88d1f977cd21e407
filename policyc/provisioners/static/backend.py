"""The static provisioner's objects: a NodeFeatureRule per pool (`nfd/static-pools.yaml`), matching the pool's node
names. The node script (`nodes/apply.sh`) is the shared node plan's, written for every policy with named nodes."""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.ir import Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.provisioners import chooses_no_labels, node_features

NAME = "static"
REFERENCES: tuple[Reference, ...] = ()
PATH = "nfd/static-pools.yaml"


def rules_on(cluster: Cluster) -> bool:
    """Whether the policy writes NodeFeatureRules for its static pools (`spec.provisioning.static`)."""
    return cluster.provisioning[NAME].node_feature_rules


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    if not rules_on(cluster):
        return []
    manifests = tuple(node_features.node_feature_rule(cluster, p, node_features.named(p)) for p in pools)
    return [Artifact(PATH, manifests, synced=True)]


def describe(cluster: Cluster, pool: Pool) -> str:
    rule = f", NodeFeatureRule {node_features.rule_name(pool)}" if rules_on(cluster) else ""
    return f"nodes/apply.sh{rule}"


chosen_labels = chooses_no_labels

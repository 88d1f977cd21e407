"""The NodeFeatureRule of a pool (`nfd.k8s-sigs.io/v1alpha1`): one Node Feature Discovery rule that gives the nodes it
matches the pool's labels and taints, for every provisioner whose nodes NFD labels. nfd-master applies it to each
node whose features match (its worker must run there: it tolerates every taint policyc sets, `nodes/`), and taints
only with its `enableTaints` on.

NFD sets only some keys (`policyc.k8s.nfd`): a label or taint it refuses is left out of the rule, for the
provisioner to say how the node gets it.
"""

from __future__ import annotations

from policyc.artifacts import Manifest
from policyc.gpu.promql import grouped, node_regex
from policyc.ir import Cluster, Pool
from policyc.k8s.nfd import NFD_API_VERSION, NODE_FEATURE_RULE, nfd_refuses_label, nfd_refuses_taint
from policyc.k8s.objects import metadata

RULE_PREFIX = "policyc-pool-"


def rule_name(pool: Pool) -> str:
    """The name of the pool's NodeFeatureRule object."""
    return f"{RULE_PREFIX}{pool.name}"


def names_regex(nodes: tuple[str, ...]) -> str:
    """An anchored regex (RE2, as NFD's InRegexp reads it, and Python's alike) that matches exactly these node
    names."""
    return f"^{grouped(node_regex(nodes))}$"


def named(pool: Pool) -> list[dict]:
    """The match of a pool's node names: the `system.name` feature's `nodename` (NFD's worker reports the node's
    name) against `names_regex`."""
    expression = {"op": "InRegexp", "value": [names_regex(pool.nodes)]}
    return [{"feature": "system.name", "matchExpressions": {"nodename": expression}}]


def node_feature_rule(cluster: Cluster, pool: Pool, match_features: list[dict]) -> Manifest:
    """The pool's NodeFeatureRule: for nodes matching every term of `match_features`, the pool's labels and taints
    that NFD sets."""
    rule: dict = {"name": f"pool {pool.name}"}
    labels = {k: v for k, v in pool.labels.items() if nfd_refuses_label(k) is None}
    if labels:
        rule["labels"] = labels
    taints = [t.to_dict() for t in pool.taints if nfd_refuses_taint(t.key) is None]
    if taints:
        rule["taints"] = taints
    rule["matchFeatures"] = match_features
    obj = {
        "apiVersion": NFD_API_VERSION,
        "kind": NODE_FEATURE_RULE,
        "metadata": metadata(rule_name(pool), cluster.name),
        "spec": {"rules": [rule]},
    }
    return Manifest(obj, (pool.path,))


def taints_by_rules(manifests: list[Manifest]) -> bool:
    """Whether any of these objects is a NodeFeatureRule that taints nodes (so nfd-master needs enableTaints)."""
    return any(
        m.obj["kind"] == NODE_FEATURE_RULE and any(r.get("taints") for r in m.obj["spec"]["rules"]) for m in manifests
    )

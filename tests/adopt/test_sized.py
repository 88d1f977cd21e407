"""Pools whose nodes a provisioner makes, read back from its objects (each provisioner's `adopt` face): settings the
shipped examples leave at their defaults come back too, and what the cluster does not show is guessed and said."""

from __future__ import annotations

import json

import pytest

from policyc import registry
from policyc.adopt.importer import import_policy
from policyc.cluster.source import DumpSource
from policyc.compiler import compile_text
from policyc.ir import LabelKeys
from tests.adopt.clusters import synced_objects, write_dump
from tests.conftest import POLICIES
from tests.provisioners import registered

VARIANTS = {
    "ai-eks": [
        ("consolidateAfter: 10m", "consolidateAfter: 30m"),
        (  # a pool of its own node class, with a requirement policyc does not write from a field
            "        zones: [us-east-1b]",
            "        zones: [us-east-1b]\n        nodeClass: {name: capacity-block}\n        requirements:\n"
            "          - {key: karpenter.k8s.aws/instance-generation, operator: Gte, values: ['5'], minValues: 1}",
        ),
    ],
    "ai-onprem": [  # the hardware beside the PCI device: another vendor's classes, a further term
        (
            'nfd: {devices: ["26b9"]}',
            'nfd: {devices: ["26b9"], classes: ["0302"], features: [{feature: system.dmiid, matchExpressions: '
            "{product_name: {op: In, value: [R760xa]}}}]}",
        ),
    ],
}
"""Per example: replacements in its policy (each once)."""


def _variant(example: str) -> str:
    text = (POLICIES / f"{example}.yaml").read_text(encoding="utf-8")
    for old, new in VARIANTS[example]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("example", sorted(VARIANTS))
def test_a_provisioners_objects_come_back_with_what_they_say(example: str, tmp_path) -> None:
    built = compile_text(_variant(example), f"{example}.yaml")
    assert built.ok, [(d.code, d.message) for d in built.report.errors]
    text = import_policy(DumpSource(write_dump(built, tmp_path / "cluster.json")))
    again = compile_text(text, f"{example}.yaml")
    assert again.ok, [(d.code, d.message) for d in again.report.errors]
    kinds = {"NodePool", "NodeFeatureRule"}
    before = {k: o for k, o in synced_objects(built).items() if k[1] in kinds}
    assert before and {k: synced_objects(again).get(k) for k in before} == before


def test_what_nfds_rules_do_not_say_is_guessed_and_said(tmp_path) -> None:
    """A NodeFeatureRule matches hardware whatever the count: the pool's size and GPUs per node are guessed, the
    size to hold what the queues guarantee (ai-onprem's: 16 + 8 + 16 = 40 GPUs, one a node as guessed)."""
    built = compile_text(_variant("ai-onprem"), "ai-onprem.yaml")
    text = import_policy(DumpSource(write_dump(built, tmp_path / "cluster.json")))
    assert "count: 40 # guessed: not on the cluster; the nodes that hold the 40 GPUs the queues guarantee" in text
    assert "count: 1} # guessed: count not on the cluster: write the GPUs per node" in text
    header = text[: text.index("apiVersion:")]
    assert (
        "#   pools of Node Feature Discovery: not on the cluster: how many nodes a pool has and how many GPUs" in header
    )


def test_the_test_provisioner_reads_its_pools_from_its_config_maps() -> None:
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "sized-h100", "namespace": "default"},
        "data": {"class": "gpu", "min": "2", "max": "6"},
    }

    class Objects:
        name = "test"

        def objects(self, kind, api_version=None):
            return iter([config_map] if kind.kind == "ConfigMap" else [])

    with registered():
        read = registry.provisioner_adopt("sized").read_pools(Objects(), LabelKeys("example.com"))
    [pool] = read.pools
    assert pool.node["metadata"]["labels"] == {"example.com/node.pool": "h100"}
    assert (pool.size, read.settings) == ({"minNodes": 2, "maxNodes": 6}, {"className": "gpu"})


def test_an_nfd_pools_gpus_per_node_follow_the_classes_the_cluster_runs(tmp_path) -> None:
    """With a copy of llm-pretrain's template applied (8 GPUs a pod, tier training), h100-train's nodes are guessed
    to hold 8 GPUs each, and 5 of them the 40 GPUs the queues guarantee (16 + 8 + 16 = 40; 40 / 8 = 5)."""
    built = compile_text((POLICIES / "ai-onprem.yaml").read_text(encoding="utf-8"), "ai-onprem.yaml")
    dump = write_dump(built, tmp_path / "cluster.json")
    cluster = json.loads(dump.read_text(encoding="utf-8"))
    [template] = [a for a in built.artifacts if a.path == "templates/llm-pretrain.yaml"]
    cluster["items"] += [m.obj for m in template.manifests]
    dump.write_text(json.dumps(cluster), encoding="utf-8")
    again = compile_text(import_policy(DumpSource(dump)), "ai-onprem.yaml")
    assert again.ok, [(d.code, d.message) for d in again.report.errors]
    [pool] = [p for p in again.cluster.pools if p.name == "h100-train"]
    assert (pool.gpus_per_node, pool.min_nodes, pool.max_nodes) == (8, 5, 5)

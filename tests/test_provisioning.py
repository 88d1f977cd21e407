"""Node provisioning (issue 26): a pool says how its nodes come to be; pools by size in the language, the checks and
the proofs; the static provisioner's NodeFeatureRules; the registration taint and its release; the node side synced
before what makes pods.

Pools by size come with a provisioner other than static: `tests.provisioners.sized`, registered for the tests that
need one (`sized`).
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from policyc.backends.workloads import pod_templates
from policyc.compiler import Compilation
from policyc.k8s import dependencies
from policyc.language.noderanges import expand
from policyc.proof import placement
from policyc.provisioners.node_features import names_regex
from policyc.tenancy import contract
from policyc.tenancy.proof import fresh_node_landings
from tests.provisioners import registered
from tests.test_node_script import FakeCluster, kubectl_local, require

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: prov}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: big, products: [NVIDIA-H100-80GB]}
    - {name: small, products: [NVIDIA-L4]}
  nodePools:
POOLS
  tenants:
    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: GUARANTEE}}}
  workloads:
    - {name: train, type: training, tenant: ml, gpuTier: big, gpus: 8, cpu: "8", memory: 64Gi, replicas: REPLICAS}
    - {name: serve, type: inference, tenant: ml, gpuTier: small, gpus: 1, cpu: "4", memory: 16Gi}
"""
STATIC = """\
    - {name: h100, usage: training, nodes: ["h100-[01-04]"], gpu: {product: NVIDIA-H100-80GB, count: 8}}
    - {name: l4, usage: inference, nodes: ["l4-[1-8]"], gpu: {product: NVIDIA-L4, count: 4}}
"""
SIZED = """\
    - {name: h100, usage: training, provisioning: sized, minNodes: 1, maxNodes: 4,
       gpu: {product: NVIDIA-H100-80GB, count: 8}, sized: {instanceType: p5.48xlarge}}
    - {name: l4, usage: inference, provisioning: sized, count: 8, gpu: {product: NVIDIA-L4, count: 4},
       sized: {instanceType: g6.12xlarge}}
"""

MIXED = """\
    - {name: h100, usage: training, provisioning: sized, minNodes: 1, maxNodes: 4,
       gpu: {product: NVIDIA-H100-80GB, count: 8}, sized: {instanceType: p5.48xlarge}}
    - {name: l4, usage: inference, provisioning: static, nodes: ["l4-[1-8]"], gpu: {product: NVIDIA-L4, count: 4}}
"""


def policy(pools: str = STATIC, guarantee: int = 8, replicas: int = 1, extra: str = "") -> str:
    text = POLICY.replace("POOLS\n", pools).replace("GUARANTEE", str(guarantee)).replace("REPLICAS", str(replicas))
    return text.replace("  nodePools:\n", f"{extra}  nodePools:\n") if extra else text


@pytest.fixture
def sized() -> Iterator[None]:
    """The registry with the tests' provisioner of pools by size."""
    with registered():
        yield


def codes(result: Compilation) -> list[str]:
    return [d.code for d in result.report.diagnostics]


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


# --- the language -------------------------------------------------------------------------------------------------


def test_pools_by_size_resolve_to_their_range(sized, compile_text) -> None:
    result = compile_text(policy(SIZED))
    assert result.ok, codes(result)
    h100, l4 = result.cluster.pools
    assert (h100.provisioning, h100.named, h100.nodes, h100.min_nodes, h100.max_nodes) == ("sized", False, (), 1, 4)
    assert (l4.min_nodes, l4.max_nodes, l4.provisioning_settings.instance_type) == (8, 8, "g6.12xlarge")
    assert h100.gpus == 32  # its most nodes: 4 x 8
    plan = json.loads(result.files["nodes/plan.json"].data)
    assert [(p["name"], p["provisioning"], p["minNodes"], p["maxNodes"]) for p in plan["pools"]] == [
        ("h100", "sized", 1, 4),
        ("l4", "sized", 8, 8),
    ]
    assert "nodes" not in plan["pools"][0]
    # No node is named and there is no control plane: no node script, no NodeFeatureRule; the sized nodes register
    # with their pools' taints, so no registration taint either.
    assert not {"nodes/apply.sh", "nfd/static-pools.yaml", "nodes/kubelet-config.yaml", "nodes/release.sh"} & set(
        result.files
    )
    assert "sized/pools.yaml" in result.files


def test_the_default_provisioning_is_that_of_pools_that_state_none(sized, compile_text) -> None:
    pools = SIZED.replace("provisioning: sized, ", "")
    result = compile_text(policy(pools, extra="  provisioning: {default: sized, sized: {className: gpu}}\n"))
    assert result.ok, codes(result)
    assert [p.provisioning for p in result.cluster.pools] == ["sized", "sized"]
    assert result.cluster.provisioning["sized"].class_name == "gpu"
    assert result.cluster.provisioning["static"].node_feature_rules is True  # left out: its defaults
    mixed = compile_text(policy(MIXED.replace("provisioning: sized, ", ""), extra="  provisioning: {default: sized}\n"))
    assert mixed.ok, codes(mixed)
    assert [(p.name, p.provisioning, p.named) for p in mixed.cluster.pools] == [
        ("h100", "sized", False),
        ("l4", "static", True),
    ]
    assert "nodes/apply.sh" in mixed.files and "l4-1 l4" in mixed.files["nodes/apply.sh"].data.decode()
    assert "h100" not in mixed.files["nodes/apply.sh"].data.decode()


@pytest.mark.parametrize(
    ("pools", "at", "message", "hint"),
    [
        (
            SIZED.replace("minNodes: 1, maxNodes: 4,", 'nodes: ["h-[1-4]", h-9],'),
            'nodes: ["h-[1-4]", h-9]',
            "pool 'h100' is provisioned by Sized, which makes nodes of names no policy knows",
            "replace nodes with count: 5 (or minNodes and maxNodes)",  # 4 names in the range, and h-9
        ),
        (
            SIZED.replace("minNodes: 1, maxNodes: 4,", ""),
            "- {name: h100",
            "pool 'h100' is provisioned by Sized and states no size",
            "add count: <nodes>, or maxNodes: <nodes> (and minNodes: 0)",
        ),
        (
            SIZED.replace("minNodes: 1,", "count: 2, minNodes: 1,"),
            "count: 2",
            "states both a fixed size (count) and a range",
            "remove count, or remove minNodes and maxNodes",
        ),
        (
            SIZED.replace("minNodes: 1,", "minNodes: 6,"),
            "minNodes: 6",
            "has minNodes 6 above maxNodes 4",
            "lower minNodes to 4 or less, or raise maxNodes to 6 or more",
        ),
        (
            SIZED.replace("sized: {instanceType: p5.48xlarge}", "slurm: {partition: gpu}"),
            "slurm: {partition: gpu}",
            "a Slurm partition names its nodes",
            "remove slurm, or make it a static pool of the nodes the partition names",
        ),
    ],
    ids=["nodes", "no-size", "count-and-range", "min-above-max", "slurm"],
)
def test_a_pool_by_size_states_its_size(sized, compile_text, pools: str, at: str, message: str, hint: str) -> None:
    text = policy(pools)
    result = compile_text(text)
    [d] = [d for d in result.report.diagnostics if d.code == "meaning/pool-nodes-or-size"]
    assert message in d.message and d.hint == hint
    assert d.line == line_of(text, at)


def test_a_pool_with_another_provisioners_settings(sized, compile_text) -> None:
    text = policy(STATIC.replace("count: 4}}", "count: 4}, sized: {instanceType: p5}}"))
    [d] = compile_text(text).report.errors
    assert (d.code, d.line) == ("meaning/settings-of-another-provisioner", line_of(text, "sized: {instanceType"))
    assert d.message == "pool 'l4' states settings of sized, but its provisioning is static"
    assert d.hint == "remove sized, or set provisioning: sized"


def test_an_unknown_provisioning_gets_a_did_you_mean(sized, compile_text) -> None:
    result = compile_text(policy(SIZED.replace("provisioning: sized, minNodes", "provisioning: sizd, minNodes")))
    [d] = result.report.errors
    assert d.code == "PC104" and "'sizd'" in d.message and d.hint == "did you mean 'sized'?"


def test_a_provisioners_rules_run_only_where_a_pool_selects_it(sized, compile_text) -> None:
    unnamed = SIZED.replace(", sized: {instanceType: p5.48xlarge}", "")
    assert codes(compile_text(policy(unnamed))) == ["sized/sized-without-instance-type"]
    assert codes(compile_text(policy(STATIC))) == []


def test_the_schema_has_each_provisioners_blocks(sized) -> None:
    from policyc.language.model import json_schema

    defs = json_schema()["$defs"]
    shipped = {"static", "karpenter", "nfd", "clusterapi", "gke", "eks", "aks"}
    assert set(defs["Provisioning"]["properties"]) == {"default", "sized", *shipped}
    assert {"provisioning", "count", "minNodes", "maxNodes", "sized"} <= set(defs["NodePool"]["properties"])


def test_the_registry_is_restored_after_a_tests_provisioner(compile_text) -> None:
    """What `registered` adds goes: the shipped language knows the shipped provisioners alone again."""
    with registered():
        assert compile_text(policy(SIZED)).ok
    errors = compile_text(policy(SIZED)).report.errors
    assert sorted((d.code, d.message) for d in errors) == [
        ("PC101", "unknown field 'sized' in 'nodePools[0]'"),
        ("PC101", "unknown field 'sized' in 'nodePools[1]'"),
        *(
            (
                "PC104",
                f"'nodePools[{i}].provisioning' is 'sized', which is not one of 'static', 'karpenter', 'nfd', "
                "'clusterapi', 'gke', 'eks' or 'aks'",
            )
            for i in (0, 1)
        ),
    ]


# --- the static provisioner: NodeFeatureRules ----------------------------------------------------------------------


def rules_of(result: Compilation) -> dict[str, dict]:
    docs = YAML(typ="safe").load_all(io.BytesIO(result.files["nfd/static-pools.yaml"].data))
    return {d["metadata"]["name"]: d for d in docs}


def test_each_static_pool_gets_a_node_feature_rule_of_its_names(compile_text) -> None:
    pools = STATIC.replace(
        "count: 4}}", "count: 4}, labels: {topology.kubernetes.io/zone: a, team: serving, example.org/tier: gold}}"
    )
    result = compile_text(policy(pools))
    assert result.ok, codes(result)
    rules = rules_of(result)
    assert sorted(rules) == ["policyc-pool-h100", "policyc-pool-l4"]
    [rule] = rules["policyc-pool-l4"]["spec"]["rules"]
    pool = next(p for p in result.cluster.pools if p.name == "l4")
    # NFD sets neither the kubernetes.io key nor the unprefixed one (it would put it under feature.node.kubernetes.io)
    assert rule["labels"] == {k: v for k, v in pool.labels.items() if k not in ("topology.kubernetes.io/zone", "team")}
    assert rule["labels"]["example.org/tier"] == "gold" and rule["labels"]["ai.example.com/node.pool"] == "l4"
    assert rule["taints"] == [
        {"key": "ai.example.com/node.usage", "value": "inference", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu.product", "value": "NVIDIA-L4", "effect": "NoSchedule"},
    ]
    [term] = rule["matchFeatures"]
    assert term == {
        "feature": "system.name",
        "matchExpressions": {"nodename": {"op": "InRegexp", "value": ["^l4-[1-8]$"]}},
    }
    [h100] = rules["policyc-pool-h100"]["spec"]["rules"]
    assert h100["matchFeatures"][0]["matchExpressions"]["nodename"]["value"] == ["^h100-0[1-4]$"]
    # nfd-master taints only with enableTaints: the GPU Operator's values turn it on
    values = YAML(typ="safe").load(io.BytesIO(result.files["nodes/gpu-operator-values.yaml"].data))
    assert values["node-feature-discovery"]["master"] == {"config": {"enableTaints": True}}


def test_node_feature_rules_off(compile_text) -> None:
    result = compile_text(policy(extra="  provisioning: {static: {nodeFeatureRules: false}}\n"))
    assert result.ok, codes(result)
    assert not any(path.startswith("nfd/") for path in result.files)
    values = YAML(typ="safe").load(io.BytesIO(result.files["nodes/gpu-operator-values.yaml"].data))
    assert "master" not in values["node-feature-discovery"]
    # The nodes still register closed, and nodes/apply.sh then release.sh let them in.
    assert {"nodes/apply.sh", "nodes/kubelet-config.yaml", "nodes/release.sh"} <= set(result.files)
    taint = STATIC.replace("count: 4}}", "count: 4}, taints: [{key: dedicated, value: x, effect: PreferNoSchedule}]}")
    quiet = compile_text(policy(taint, extra="  provisioning: {static: {nodeFeatureRules: false}}\n"))
    assert codes(quiet) == []  # no rule leaves the taint out
    assert codes(compile_text(policy(taint))) == ["static/not-set-by-nfd"]


def test_a_node_restriction_domain_leaves_static_rules_without_policycs_keys_and_nodes_closed(
    compile_text, tmp_path: Path
) -> None:
    """A domain under node-restriction.kubernetes.io (PC412 lets it through, for Cluster API): NFD sets nothing under
    it, so the static pools' rules carry the product taint alone; said once, at the domain; a node that joins keeps
    its registration taint (under the same domain: a kubelet may register with it) until nodes/apply.sh has run."""
    nr = "ai.example.com.node-restriction.kubernetes.io"
    result = compile_text(policy().replace("domain: ai.example.com", f"domain: {nr}"))
    assert result.ok
    assert [(d.code, d.path) for d in result.report.diagnostics] == [
        ("static/domain-not-set-by-nfd", ("spec", "domain"))
    ]
    [rule] = rules_of(result)["policyc-pool-l4"]["spec"]["rules"]
    assert "labels" not in rule  # the pool's label and tier and usage labels all under the domain
    assert rule["taints"] == [{"key": "nvidia.com/gpu.product", "value": "NVIDIA-L4", "effect": "NoSchedule"}]
    # What NFD sets (the product taint) is not enough: the node lacks its pool's label and its usage taint.
    cluster = FakeCluster(tmp_path, {"l4-1": {"labels": {}, "taints": [
        {"key": f"{nr}/node.registering", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu.product", "value": "NVIDIA-L4", "effect": "NoSchedule"}]}})  # fmt: skip
    cluster.script = tmp_path / "release.sh"
    cluster.script.write_bytes(result.files["nodes/release.sh"].data)
    run = cluster.run()
    assert run.returncode == 0, run.stderr
    assert "node l4-1 waits: it has no label of a pool of the policy (none)" in run.stderr
    assert cluster.nodes["l4-1"]["taints"][0]["key"] == f"{nr}/node.registering"
    # Following the hint: the rules off, nothing to say.
    off = compile_text(policy(extra="  provisioning: {static: {nodeFeatureRules: false}}\n").replace(
        "domain: ai.example.com", f"domain: {nr}"))  # fmt: skip
    assert off.ok and codes(off) == []


NAME_PART = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=4)


@st.composite
def ranges(draw) -> str:
    """A node name pattern: a prefix, a range (padded or not), maybe a second range, a suffix."""
    pattern = draw(NAME_PART) + "-"
    for _ in range(draw(st.integers(1, 2))):
        low = draw(st.integers(0, 120))
        high = draw(st.integers(low, low + draw(st.sampled_from([0, 3, 9, 30, 150]))))
        if draw(st.booleans()):
            width = len(str(high))
            pattern += f"[{low:0{width}d}-{high:0{width}d}]" if width > 1 else f"[{low}-{high}]"
        else:
            pattern += f"[{low}-{high}]"
        pattern += draw(st.sampled_from(["", "x", "-b"]))
    return pattern + draw(st.sampled_from(["", ".rack1"]))


def _near(name: str) -> Iterator[str]:
    """Names a regex for `name` could wrongly take: each number one off, widened and narrowed, and the name with text
    around it."""
    for match in re.finditer(r"\d+", name):
        digits = match.group()
        for other in {str(int(digits) + 1).zfill(len(digits)), str(max(int(digits) - 1, 0)).zfill(len(digits)),
                      "0" + digits, digits[1:] or "0", digits + "0"}:  # fmt: skip
            yield name[: match.start()] + other + name[match.end() :]
    yield from ("x" + name, name + "x", name + "\n1", name.replace(".", "x"), name.replace("-", ""))


@settings(max_examples=150, deadline=None)
@given(st.lists(ranges(), min_size=1, max_size=3))
def test_the_names_regex_matches_exactly_the_pools_names(patterns: list[str]) -> None:
    """Every name of the pool's ranges matches (searched, as NFD's InRegexp does: the regex is anchored), and every
    name near them that is not one of them does not."""
    names = {n for p in patterns for n in expand(p)}
    regex = re.compile(names_regex(tuple(sorted(names))))
    assert all(regex.search(n) for n in names)
    outside = {m for n in names for m in _near(n)} - names
    assert not [m for m in outside if regex.search(m)]


# --- Argo CD: the node side before what makes pods ----------------------------------------------------------------


def test_node_side_objects_come_before_what_makes_pods() -> None:
    rule = {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": "policyc-pool-a"}}
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "b"}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    pods = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ml"},
            "spec": {"template": {"spec": {"containers": []}}}}  # fmt: skip
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ml"}}
    graph = dependencies.needs([rule, pool, namespace, pods, config], ())
    ids = {o["kind"]: dependencies.identity(o) for o in (rule, pool, namespace, pods, config)}
    assert graph[ids["Deployment"]] == {ids["Namespace"], ids["NodeFeatureRule"], ids["NodePool"]}
    assert graph[ids["ConfigMap"]] == {ids["Namespace"]}  # makes no pods
    assert graph[ids["NodeFeatureRule"]] == graph[ids["NodePool"]] == frozenset()
    waves = dependencies.depths(graph)
    assert (waves[ids["NodeFeatureRule"]], waves[ids["Deployment"]]) == (0, 1)


def test_slurm_node_sets_sync_after_the_pools_node_feature_rules(compile_text) -> None:
    pools = STATIC.replace(
        "count: 8}}", "count: 8}, allocatable: {cpu: '96', memory: 1000Gi}, slurm: {partition: gpu, shared: true}}"
    )
    result = compile_text(policy(pools, extra="  slurm: {operator: slinky}\n").replace("'96'", '"96"'))
    assert result.ok, codes(result)
    kustomization = YAML(typ="safe").load(io.BytesIO(result.files["kustomization.yaml"].data))["resources"]
    assert kustomization.index("nfd/static-pools.yaml") < kustomization.index("slinky/nodesets.yaml")
    wave = "argocd.argoproj.io/sync-wave"
    rules = rules_of(result)
    [node_set] = YAML(typ="safe").load_all(io.BytesIO(result.files["slinky/nodesets.yaml"].data))
    assert {r["metadata"]["annotations"][wave] for r in rules.values()} == {"0"}
    assert int(node_set["metadata"]["annotations"][wave]) >= 1


# --- capacity and sizing: what can exist ---------------------------------------------------------------------------


def test_capacity_counts_a_pool_by_size_at_its_most_and_warns_below_its_fewest(sized, compile_text) -> None:
    # h100 (the only pool of tier big, which both the guarantee's workloads and train reach... the tenant's
    # workloads reach h100 and l4): fewest 1 x 8 + 8 x 4 = 40 GPUs, most 4 x 8 + 8 x 4 = 64.
    assert codes(compile_text(policy(SIZED, guarantee=40))) == []
    over = compile_text(policy(SIZED, guarantee=65))
    [d] = over.report.errors
    assert d.code == "PC414" and "the pools it can use have 64 (h100 32, l4 32)" in d.message
    waits = compile_text(policy(SIZED, guarantee=48))
    [w] = waits.report.diagnostics
    assert w.code == "meaning/guarantee-waits-for-scale-up"
    assert w.message == (
        "tenant 'ml' is guaranteed 48 nvidia.com/gpu, but the pools it can use have 40 at their fewest nodes "
        "(h100 8, l4 32; h100 1-4 nodes): it is kept only once they scale up"
    )
    assert (
        w.hint
        == "raise the minNodes of h100 until they hold 48 nvidia.com/gpu (now 40), if the guarantee must hold at once"
    )
    followed = compile_text(policy(SIZED.replace("minNodes: 1", "minNodes: 2"), guarantee=48))  # 2 x 8 + 32 = 48
    assert codes(followed) == []


def test_a_workload_fits_a_pool_by_size_at_its_most_nodes(sized, compile_text) -> None:
    assert compile_text(policy(SIZED, replicas=4)).ok  # 4 pods of 8 GPUs on at most 4 nodes of 8
    [d] = compile_text(policy(SIZED, replicas=5)).report.errors
    assert d.code == "PC426" and "hold at most 4 such pods (h100 up to 4 nodes x 1)" in d.message


# --- the placement proof on templates, and the fresh node ----------------------------------------------------------


def test_placement_evaluates_each_pool_by_size_by_its_template(sized, compile_text) -> None:
    result = compile_text(policy(SIZED))
    assert result.ok, codes(result)
    cells = placement.matrix(result.cluster, result.backend.KINDS, placement.workload_templates(result.artifacts))
    admitted = {(c.workload, c.target) for c in cells if c.admitted}
    assert admitted == {("train", "h100"), ("serve", "l4")}
    h100 = next(t for t in placement.targets(result.cluster) if t.name == "h100")
    assert h100.node["metadata"]["name"] == "h100" and h100.nodes == ()  # no node name: the pool's template
    assert result.cluster.pools[0].labels.items() <= h100.node["metadata"]["labels"].items()
    # A pod naming a node no pool lists may be on any pool by size: its kubelet admits it by the pool's template.
    pod = {"spec": {"nodeName": "ip-10-0-0-1", "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "c", "image": "x"}]}}  # fmt: skip
    assert [(t, ok) for t, ok, _ in placement.placement_of(result.cluster, pod)] == [("h100", True), ("l4", True)]


def test_a_static_pools_fresh_node_takes_no_pod_of_any_tenant(compile_text) -> None:
    result = compile_text(policy())
    assert result.ok, codes(result)
    cluster = result.cluster
    fresh = placement.fresh_targets(cluster)
    assert [(t.name, t.node["metadata"]["labels"], t.node["spec"]["taints"]) for t in fresh] == [
        (f"{p} (registering)", {}, [{"key": "ai.example.com/node.registering", "effect": "NoSchedule"}])
        for p in ("h100", "l4")
    ]
    c = contract.contracts(cluster, result.backend)["ml"]
    assert list(fresh_node_landings(cluster, c)) == []
    # The tenant's contract refuses the one toleration that would let a pod in: the registration taint's.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
           "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "x"}],
                    "tolerations": [{"key": "ai.example.com/node.registering", "operator": "Equal",
                                     "effect": "NoSchedule"}]}}  # fmt: skip
    assert "foreign-toleration" in {r.rule for r in contract.refusals(c, pod)}


def without_registration(result: Compilation):
    """The cluster as if its pools' nodes registered with no taint at all (a kubelet not set up)."""
    pools = tuple(dataclasses.replace(p, registration_taints=()) for p in result.cluster.pools)
    return dataclasses.replace(result.cluster, pools=pools)


def test_the_fresh_node_attack_catches_an_untainted_registration(compile_text) -> None:
    text = policy().replace("replicas: 1}", "replicas: 1, placement: preferred}")
    result = compile_text(text)
    assert result.ok, codes(result)
    open_ = without_registration(result)
    found = placement.prove(open_, result.artifacts, result.backend.KINDS)
    [d] = [d for d in found if d.code == "proof/placement-fresh-node"]
    assert "template 'train' (templates/train.yaml) can land on a node as it registers" in d.message
    # A fresh node has no label to keep the pods off: the inference pool's takes them (its own pool's may, as its
    # labelled nodes do).
    assert "are set: 'l4 (registering)'; on 'l4 (registering)', no required node affinity excludes it" in d.message
    c = contract.contracts(open_, result.backend)["ml"]
    assert sorted(fresh for fresh, _ in fresh_node_landings(open_, c)) == ["h100 (registering)", "l4 (registering)"]


def test_a_node_that_registers_tainted_takes_only_its_own_pools_pods(sized, compile_text) -> None:
    """Nodes of the tests' provisioner carry their pool's taints from registration: a class granted the pool may land
    there early (it tolerates them), no other."""
    text = policy(SIZED).replace("replicas: 1}", "replicas: 1, placement: preferred}")
    result = compile_text(text)
    assert result.ok, codes(result)
    fresh = {t.name: t for t in placement.fresh_targets(result.cluster)}
    assert fresh["h100 (registering)"].node["spec"]["taints"] == [t.to_dict() for t in result.cluster.pools[0].taints]
    landed = {t for t, ok, _ in placement.fresh_placement_of(result.cluster, _pod_of(result, "train")) if ok}
    assert landed == {"h100 (registering)"}
    c = contract.contracts(result.cluster, result.backend)["ml"]
    assert list(fresh_node_landings(result.cluster, c)) == []


def _pod_of(result: Compilation, workload: str) -> dict:
    """The (first) pod of a workload's template."""
    template = placement.workload_templates(result.artifacts)[workload]
    return pod_templates(result.backend.KINDS, template)[0][2]


# --- explain and report ------------------------------------------------------------------------------------------


def test_explain_and_report_show_how_each_pool_comes_to_be(sized, compile_text) -> None:
    from policyc.commands import explain, report

    result = compile_text(policy(MIXED))
    assert result.ok, codes(result)
    assert explain.render_pools_text(explain.pool_rows(result)) == (
        "Pools (how their nodes come to be):\n"
        "  h100: sized, 1-4 nodes: sized/pools.yaml ConfigMap sized-h100\n"
        "  l4: static, 8 nodes: nodes/apply.sh, NodeFeatureRule policyc-pool-l4"
    )
    text = report.render_markdown(result)
    assert "| h100 | training | big | NVIDIA-H100-80GB | 1-4 | sized (sized/pools.yaml ConfigMap sized-h100) | " in text
    assert "2 pools, 9-12 nodes, 64 nvidia.com/gpu" in text  # 1..4 + 8 nodes; 4 x 8 + 8 x 4 GPUs at the most
    assert "A range of nodes is a pool by size" in text


# --- the registration taint and its release ------------------------------------------------------------------------


def test_the_kubelet_setting_registers_nodes_with_the_registration_taint(compile_text) -> None:
    result = compile_text(policy())
    text = result.files["nodes/kubelet-config.yaml"].data.decode()
    config = YAML(typ="safe").load(text)
    assert config == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "registerWithTaints": [{"key": "ai.example.com/node.registering", "effect": "NoSchedule"}],
    }
    assert "--register-with-taints=ai.example.com/node.registering:NoSchedule" in text
    assert "#   pools: h100, l4\n" in text


STATE = {
    # released: its pool's label and taints are there
    "h100-01": {"labels": {"ai.example.com/node.pool": "h100"}, "taints": [
        {"key": "ai.example.com/node.registering", "effect": "NoSchedule"},
        {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu.product", "value": "NVIDIA-H100-80GB", "effect": "NoSchedule"}]},
    # waits: NFD set the labels, not yet the product taint
    "h100-02": {"labels": {"ai.example.com/node.pool": "h100"}, "taints": [
        {"key": "ai.example.com/node.registering", "effect": "NoSchedule"},
        {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"}]},
    # waits: the usage taint has another value than its pool's
    "l4-1": {"labels": {"ai.example.com/node.pool": "l4"}, "taints": [
        {"key": "ai.example.com/node.registering", "effect": "NoSchedule"},
        {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu.product", "value": "NVIDIA-L4", "effect": "NoSchedule"}]},
    # waits: no pool yet
    "x-1": {"labels": {}, "taints": [{"key": "ai.example.com/node.registering", "effect": "NoSchedule"}]},
    # already released: untouched
    "l4-2": {"labels": {"ai.example.com/node.pool": "l4"}, "taints": []},
}  # fmt: skip


@pytest.fixture
def release(compile_text, tmp_path: Path) -> FakeCluster:
    result = compile_text(policy())
    cluster = FakeCluster(tmp_path, STATE)
    cluster.script = tmp_path / "release.sh"
    cluster.script.write_bytes(result.files["nodes/release.sh"].data)
    return cluster


def test_release_removes_the_registration_taint_only_from_nodes_that_carry_their_pools_taints(release) -> None:
    run = release.run()
    assert run.returncode == 0, run.stderr
    assert [c for c in release.calls if c[0] == "taint"] == [
        ["taint", "node", "h100-01", "--overwrite", "ai.example.com/node.registering:NoSchedule-"]
    ]
    assert release.nodes["h100-01"]["taints"] == STATE["h100-01"]["taints"][1:]
    assert "node h100-02 of pool h100 waits: it lacks nvidia.com/gpu.product=NVIDIA-H100-80GB:NoSchedule" in run.stderr
    assert "node l4-1 of pool l4 waits: it lacks ai.example.com/node.usage=inference:NoSchedule" in run.stderr
    assert "node x-1 waits: it has no label of a pool of the policy (none)" in run.stderr
    assert "released 1 node(s), 3 wait" in run.stderr
    again = release.run()  # nothing left to release: idempotent
    assert [c for c in release.calls if c[0] == "taint"] == [] and "released 0 node(s), 3 wait" in again.stderr


def test_release_of_named_nodes_and_as_a_dry_run(release) -> None:
    dry = release.run("--dry-run")
    assert dry.returncode == 0 and release.nodes == STATE and [c[0] for c in release.calls] == ["get"]
    assert "taint node h100-01 --overwrite ai.example.com/node.registering:NoSchedule-" in dry.stdout
    only = release.run("h100-02", "x-1", "gone-1")
    assert [c[0] for c in release.calls] == ["get"] and "released 0 node(s), 2 wait" in only.stderr
    assert "release.sh: warning: no node gone-1 in the cluster" in only.stderr
    assert release.run("--bogus").returncode == 2


def test_release_script_is_clean_bash(release) -> None:
    subprocess.run(["bash", "-n", str(release.script)], check=True)
    require("shellcheck")
    run = subprocess.run(["shellcheck", str(release.script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_the_fake_kubectl_answers_release_like_kubectl(release) -> None:
    require("kubectl")
    template = re.search(r"^TEMPLATE='(.*)'$", release.script.read_text(), re.MULTILINE).group(1)
    fake = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("fake_kubectl.py")),
            "get",
            "nodes",
            "-o",
            f"go-template={template}",
        ],
        env={"FAKE_KUBECTL_STATE": str(release.state), "FAKE_KUBECTL_LOG": str(release.log), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    per_node = template.removeprefix("{{range .items}}").removesuffix("{{end}}")
    real = "".join(kubectl_local(name, node, "{}", f"go-template={per_node}") for name, node in STATE.items())
    assert fake == real
    assert "\nP\th100-01\th100\n" in real and "\nV\tx-1\tai.example.com/node.registering:NoSchedule\n" in real


# --- scale: pools by size have no node-count cap, and their output does not grow with their nodes -----------------


def test_pools_by_size_have_no_node_cap_and_output_that_does_not_grow_with_nodes(sized) -> None:
    import sys as _sys

    from policyc.compiler import compile_text as compile_policy

    _sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        from generate import policy as generated
    finally:
        _sys.path.pop(0)
    sizes = {}
    for nodes in (900, 130_000):  # 9 pools of 100 nodes, and of 14,444: beyond the 100,000 named nodes of a policy
        result = compile_policy(generated(nodes, 9, 4, 4, provisioning="sized"), "bench.yaml")
        assert result.ok, [d.message for d in result.report.diagnostics if d.severity.value == "error"]
        assert sum(p.max_nodes for p in result.cluster.pools) == 9 * (nodes // 9)
        sizes[nodes] = {path: len(f.data) for path, f in result.files.items()}
    assert sizes[900].keys() == sizes[130_000].keys()
    # Only numbers grow: the pools' node counts (nodes/plan.json, the tests' ConfigMaps) and what the generator sizes
    # by the GPUs (guarantees, quotas): a few digits each, under 1 % of the output in all.
    grown = sum(sizes[130_000].values()) - sum(sizes[900].values())
    assert 0 < grown < sum(sizes[900].values()) / 100
    named = compile_policy(generated(130_000, 9, 4, 4), "bench.yaml")
    assert [d.code for d in named.report.errors] == ["PC205"]  # named nodes keep their cap


def test_a_misspelt_setting_of_a_provisioner_is_located_with_its_fix(compile_text) -> None:
    text = policy(extra="  provisioning: {static: {nodeFeatureRule: false}}\n")
    [d] = compile_text(text).report.errors
    assert (d.code, d.line) == ("PC101", line_of(text, "nodeFeatureRule: false"))
    assert d.message == "unknown field 'nodeFeatureRule' in 'provisioning.static'"
    assert d.hint == "did you mean 'nodeFeatureRules'?"


def test_explain_prints_and_returns_the_pools(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from policyc.commands.cli import main

    path = tmp_path / "policy.yaml"
    path.write_text(policy(), encoding="utf-8")
    text = CliRunner().invoke(main, ["explain", str(path), "--pool", "l4"])
    assert text.exit_code == 0
    assert text.stdout.endswith(
        "Pools (how their nodes come to be):\n  l4: static, 8 nodes: nodes/apply.sh, NodeFeatureRule policyc-pool-l4\n"
    )
    doc = json.loads(CliRunner().invoke(main, ["explain", str(path), "--format", "json"]).stdout)
    assert doc["pools"] == [
        {"pool": "h100", "provisioning": "static", "min_nodes": 4, "max_nodes": 4,
         "how": "nodes/apply.sh, NodeFeatureRule policyc-pool-h100"},
        {"pool": "l4", "provisioning": "static", "min_nodes": 8, "max_nodes": 8,
         "how": "nodes/apply.sh, NodeFeatureRule policyc-pool-l4"},
    ]  # fmt: skip


def test_a_provisioners_namespaces_and_label_domains_are_its_own(sized, compile_text) -> None:
    claimed = compile_text(policy(SIZED).replace("namespaces: [ml]", "namespaces: [sized-system]"))
    assert [(d.code, "where Sized runs" in d.message) for d in claimed.report.errors] == [("PC430", True)]
    domain = compile_text(policy(SIZED).replace("domain: ai.example.com", "domain: gpu.sized.example"))
    assert [(d.code, "belongs to Sized" in d.message) for d in domain.report.errors] == [("PC412", True)]


def test_a_pool_whose_provisioning_is_null_states_none_so_the_default_has_an_effect(sized, compile_text) -> None:
    # `provisioning:` with nothing after it is YAML's null: the pool takes spec.provisioning.default
    pools = SIZED.replace("provisioning: sized, count: 8", "provisioning: null, count: 8")
    result = compile_text(policy(pools, extra="  provisioning: {default: sized}\n"))
    assert result.ok and codes(result) == []
    assert {p.name: p.provisioning for p in result.cluster.pools} == {"h100": "sized", "l4": "sized"}
    # every pool stating its own: the default has none
    stated = compile_text(policy(SIZED, extra="  provisioning: {default: sized}\n"))
    assert codes(stated) == ["PC493"]

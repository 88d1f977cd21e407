"""Labels a provisioner sets to values it chooses as it makes a node (`Pool.chosen_labels`, the backend's
`chosen_labels`): Karpenter labels each node with one value of each requirement of its NodePool and with its
well-known labels (zone, instance type, capacity type, ...). The placement proof evaluates a pod on the node the
provisioner would make for it: a value the requirement allows and the pod asks for is chosen; a pod asking for none
of the allowed values lands nowhere.

Expected values are written by hand from the policy texts."""

from __future__ import annotations

import copy

import pytest

from policyc.backends.workloads import pod_templates
from policyc.compiler import Compilation
from policyc.ir import ChosenLabel
from policyc.pods import reachable_pools
from policyc.proof import placement
from policyc.proof.chosen_values import ANY_VALUE, nodes_for
from policyc.provisioners.karpenter.backend import chosen_labels
from policyc.provisioners.karpenter.label_rules import AWS_WELL_KNOWN, WELL_KNOWN
from tests.conftest import POLICIES
from tests.test_karpenter import POLICY, build

ZONE = "topology.kubernetes.io/zone"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
EKS = (POLICIES / "ai-eks.yaml").read_text(encoding="utf-8")
TRAIN_MEMORY = "      memory: 1600Gi\n"
"""The last line of the EKS example's training workload (llm-pretraining, on pool h100-train only)."""
SERVE = "gpus: 1, cpu:"
"""In `POLICY`, the workload 'serve' (tier l4: pool 'shared' only, zones us-east-1a and us-east-1c)."""


def _selecting(text: str, selector: str) -> str:
    return text.replace(SERVE, f"gpus: 1, nodeSelector: {{{selector}}}, cpu:")


def _errors(result: Compilation) -> list[tuple[str, str, str | None]]:
    return [(d.code, d.message, d.hint) for d in result.report.errors]


# --- what Karpenter chooses -------------------------------------------------------------------------------------------


def test_karpenters_chosen_labels_of_the_eks_training_pool() -> None:
    """h100-train: instanceTypes [p5.48xlarge], zones [us-east-1b], capacity on-demand (the default); every
    well-known key of Karpenter and of its AWS provider, with no value stated, and the NodePool's name."""
    pool = next(p for p in build(POLICIES / "ai-eks.yaml").cluster.pools if p.name == "h100-train")
    narrowed = {label.key: label.requirements for label in pool.chosen_labels if label.requirements}
    assert narrowed == {
        CAPACITY_TYPE: (("In", ("on-demand",)),),
        "karpenter.sh/nodepool": (("In", ("policyc-h100-train",)),),
        INSTANCE_TYPE: (("In", ("p5.48xlarge",)),),
        ZONE: (("In", ("us-east-1b",)),),
    }
    keys = [label.key for label in pool.chosen_labels]
    assert keys == sorted(WELL_KNOWN | AWS_WELL_KNOWN)  # the nodepool key is among the well-known ones
    assert "kubernetes.io/arch" in keys and "karpenter.k8s.aws/instance-gpu-count" in keys


def test_inclusive_comparisons_and_does_not_exist(compile_text) -> None:
    """Gte 7 is Gt 6 and Lte 8 is Lt 9 as a node selector says them; DoesNotExist leaves the key off the node,
    well-known or not."""
    text = POLICY.replace(
        'requirements: [{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["6"]}]',
        'requirements: [{key: karpenter.k8s.aws/instance-generation, operator: Gte, values: ["7"]}, '
        '{key: karpenter.k8s.aws/instance-cpu, operator: Lte, values: ["8"]}, '
        "{key: karpenter.k8s.aws/instance-local-nvme, operator: DoesNotExist}]",
    )
    result = compile_text(text)
    assert result.ok, _errors(result)
    pool = next(p for p in result.cluster.pools if p.name == "cpu")
    said = {label.key: label.requirements for label in pool.chosen_labels}
    assert said["karpenter.k8s.aws/instance-generation"] == (("Gt", ("6",)),)
    assert said["karpenter.k8s.aws/instance-cpu"] == (("Lt", ("9",)),)
    assert "karpenter.k8s.aws/instance-local-nvme" not in said
    assert chosen_labels(pool) == pool.chosen_labels


def test_a_pool_label_is_the_pools_not_a_chosen_one() -> None:
    """A template label fixes its value: the key is not among those Karpenter chooses."""
    result = build(POLICIES / "ai-eks.yaml")
    for pool in result.cluster.pools:
        assert not {label.key for label in pool.chosen_labels} & set(pool.labels), pool.name


def test_only_karpenter_chooses_labels() -> None:
    """The static and NFD examples: no provisioner of theirs chooses a value."""
    for name in ("ai-prod.yaml", "ai-onprem.yaml"):
        assert all(p.chosen_labels == () for p in build(POLICIES / name).cluster.pools), name


# --- the placement proof on the node Karpenter makes ------------------------------------------------------------------


def test_zone_instance_type_and_capacity_type_selected_on_a_karpenter_pool_place(compile_text) -> None:
    """The EKS example's training pool allows exactly these three values: its workload selecting them builds with no
    diagnostic, the tenancy proof (its class injected) included."""
    selector = f"      nodeSelector: {{{ZONE}: us-east-1b, {INSTANCE_TYPE}: p5.48xlarge, {CAPACITY_TYPE}: on-demand}}\n"
    result = compile_text(EKS.replace(TRAIN_MEMORY, TRAIN_MEMORY + selector, 1))
    assert result.ok and not result.report.diagnostics, _errors(result)
    w = next(w for w in result.cluster.workloads if w.name == "llm-pretraining")
    assert [p.name for p in reachable_pools(result.cluster, w)] == ["h100-train"]
    template = result.files["templates/llm-pretraining.yaml"].data.decode()
    assert f"{ZONE}: us-east-1b" in template


@pytest.mark.parametrize("zone", ["us-east-1a", "us-east-1c"])
def test_either_zone_of_a_two_zone_pool_places(compile_text, zone: str) -> None:
    """Pool 'shared' has zones [us-east-1a, us-east-1c]: Karpenter makes a node in the zone the pod asks for."""
    result = compile_text(_selecting(POLICY, f"{ZONE}: {zone}"))
    assert result.ok and not result.report.diagnostics, _errors(result)
    pod = _pod(result, "serve")
    assert [(t, ok) for t, ok, _ in placement.placement_of(result.cluster, pod) if ok] == [("shared", True)]


def test_a_zone_outside_the_pools_zones_lands_nowhere_at_the_selector(compile_text) -> None:
    result = compile_text(_selecting(POLICY, f"{ZONE}: us-east-1b"))
    [error] = result.report.errors
    assert error.code == "PC504"
    assert error.path == ("spec", "workloads", 0, "nodeSelector", ZONE)
    assert error.message == (
        "template 'serve' can land nowhere: pool 'shared': nodeSelector topology.kubernetes.io/zone=us-east-1b does "
        "not match (karpenter makes the pool's nodes with topology.kubernetes.io/zone In [us-east-1a, us-east-1c])"
    )
    assert error.hint == (
        "select a value karpenter may give the nodes of pool 'shared' (topology.kubernetes.io/zone In [us-east-1a, "
        "us-east-1c]): nodeSelector {topology.kubernetes.io/zone: us-east-1a}, or drop topology.kubernetes.io/zone "
        "from the nodeSelector"
    )
    # Followed, the hint builds.
    fixed = compile_text(_selecting(POLICY, f"{ZONE}: us-east-1a"))
    assert fixed.ok and not fixed.report.diagnostics, _errors(fixed)


def test_a_capacity_type_the_pool_does_not_buy_lands_nowhere(compile_text) -> None:
    """Pool 'shared' buys on-demand (the default): spot is no value Karpenter may choose for it."""
    result = compile_text(_selecting(POLICY, f"{CAPACITY_TYPE}: spot"))
    assert [(d.code, d.path) for d in result.report.errors] == [
        ("PC504", ("spec", "workloads", 0, "nodeSelector", CAPACITY_TYPE))
    ]
    assert "karpenter makes the pool's nodes with karpenter.sh/capacity-type In [on-demand]" in (
        result.report.errors[0].message
    )


def test_a_well_known_label_no_requirement_narrows_places(compile_text) -> None:
    """kubernetes.io/arch: Karpenter labels every node with it; no requirement of the pool narrows it. It used to
    pass karpenter/not-provisionable and fail PC504: the two now agree."""
    result = compile_text(_selecting(POLICY, "kubernetes.io/arch: amd64"))
    assert result.ok and not result.report.diagnostics, _errors(result)


def test_not_provisionable_and_the_proof_agree_on_a_key_karpenter_leaves_off(compile_text) -> None:
    """A DoesNotExist requirement: Karpenter makes no node with the key, so a workload selecting it is one no node is
    made for (karpenter/not-provisionable, before the proof)."""
    text = POLICY.replace(
        "karpenter: {gpuName: l4, zones: [us-east-1a, us-east-1c], nodeClass: {name: l4-class}}",
        "karpenter: {gpuName: l4, zones: [us-east-1a, us-east-1c], nodeClass: {name: l4-class}, requirements: "
        "[{key: kubernetes.io/arch, operator: DoesNotExist}]}",
    )
    result = compile_text(_selecting(text, "kubernetes.io/arch: amd64"))
    assert [d.code for d in result.report.errors] == ["karpenter/not-provisionable"]


def _pod(result: Compilation, workload: str) -> dict:
    template = placement.workload_templates(result.artifacts)[workload]
    return copy.deepcopy(pod_templates(result.backend.KINDS, template)[0][2])


def _with_term(pod: dict, *terms: list[dict]) -> dict:
    """The pod with `terms` ANDed into its required affinity's (single) term, one copy of that term per one given."""
    required = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    [own] = required["nodeSelectorTerms"]
    required["nodeSelectorTerms"] = [{"matchExpressions": [*own["matchExpressions"], *extra]} for extra in terms]
    return pod


def _on_shared(result: Compilation, pod: dict) -> tuple[bool, str | None]:
    [(admitted, why)] = [(ok, why) for t, ok, why in placement.placement_of(result.cluster, pod) if t == "shared"]
    return admitted, why


@pytest.fixture(scope="module")
def shared_result(tmp_path_factory) -> Compilation:
    path = tmp_path_factory.mktemp("chosen") / "policy.yaml"
    path.write_text(POLICY, encoding="utf-8")
    return build(path)


def test_an_affinity_excluding_every_allowed_zone_lands_nowhere(shared_result: Compilation) -> None:
    """Zones [us-east-1a, us-east-1c]: NotIn both leaves Karpenter no zone; NotIn one, it chooses the other."""
    excluded = [{"key": ZONE, "operator": "NotIn", "values": ["us-east-1a", "us-east-1c"]}]
    both = _with_term(_pod(shared_result, "serve"), excluded)
    assert _on_shared(shared_result, both) == (
        False,
        "expression topology.kubernetes.io/zone NotIn [us-east-1a, us-east-1c] does not match (karpenter makes the "
        "pool's nodes with topology.kubernetes.io/zone In [us-east-1a, us-east-1c])",
    )
    one = _with_term(_pod(shared_result, "serve"), [{"key": ZONE, "operator": "NotIn", "values": ["us-east-1a"]}])
    assert _on_shared(shared_result, one) == (True, None)
    absent = _with_term(_pod(shared_result, "serve"), [{"key": ZONE, "operator": "DoesNotExist"}])
    assert _on_shared(shared_result, absent)[0] is False


def test_one_term_of_several_that_karpenter_can_meet_is_enough(shared_result: Compilation) -> None:
    """Terms are ORed: zone us-east-1b (not allowed) or us-east-1c (allowed) lands; b or d does not, each term said."""
    b = [{"key": ZONE, "operator": "In", "values": ["us-east-1b"]}]
    c = [{"key": ZONE, "operator": "In", "values": ["us-east-1c"]}]
    d = [{"key": ZONE, "operator": "In", "values": ["us-east-1d"]}]
    assert _on_shared(shared_result, _with_term(_pod(shared_result, "serve"), b, c)) == (True, None)
    admitted, why = _on_shared(shared_result, _with_term(_pod(shared_result, "serve"), b, d))
    assert not admitted
    assert why == (
        "no nodeSelectorTerm matches: nodeSelectorTerms[0]: expression topology.kubernetes.io/zone In [us-east-1b] "
        "does not match (karpenter makes the pool's nodes with topology.kubernetes.io/zone In [us-east-1a, "
        "us-east-1c]); nodeSelectorTerms[1]: expression topology.kubernetes.io/zone In [us-east-1d] does not match "
        "(karpenter makes the pool's nodes with topology.kubernetes.io/zone In [us-east-1a, us-east-1c])"
    )


def test_a_chosen_value_does_not_open_another_pool(shared_result: Compilation) -> None:
    """The fixed labels still decide: the serve pod selecting a zone 'mig' (tier a100) allows lands only on
    'shared', which its tier and usage allow."""
    pod = _pod(shared_result, "serve")
    pod["spec"]["nodeSelector"] = {ZONE: "us-east-1a"}
    landed = {t for t, ok, _ in placement.placement_of(shared_result.cluster, pod) if ok}
    assert landed == {"shared"}


def test_fresh_nodes_carry_no_chosen_label(shared_result: Compilation) -> None:
    """A node as it registers is judged as before: no label of the pool's, chosen or not."""
    for target in placement.fresh_targets(shared_result.cluster):
        assert target.chosen == {} and target.node["metadata"]["labels"] == {}


# --- choosing a value -------------------------------------------------------------------------------------------------

NODE = {"metadata": {"name": "n", "labels": {"fixed": "yes"}}, "spec": {"taints": []}}


def _choose(chosen: list[ChosenLabel], selector: dict | None = None, *terms: list[dict]) -> tuple[list, str | None]:
    spec: dict = {"nodeSelector": selector or {}}
    if terms:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}  # fmt: skip
    nodes, why = nodes_for({"spec": spec}, NODE, {c.key: c for c in chosen}, "maker")
    return [n["metadata"]["labels"] for n in nodes], why


def test_a_value_meeting_both_sides_is_chosen() -> None:
    gen = ChosenLabel("gen", (("Gt", ("6",)),))
    # Gt 6 and the pod's In [5, 7]: 7.
    assert _choose([gen], None, [{"key": "gen", "operator": "In", "values": ["5", "7"]}]) == (
        [{"fixed": "yes", "gen": "7"}],
        None,
    )
    # The pod's Lt 9 with Gt 6: 8, the integer below the pod's bound (the pod's constraints are tried first).
    below = [{"key": "gen", "operator": "Lt", "values": ["9"]}]
    assert _choose([gen], None, below)[0] == [{"fixed": "yes", "gen": "8"}]
    # Lt 7 with Gt 6: no integer.
    assert _choose([gen], None, [{"key": "gen", "operator": "Lt", "values": ["7"]}]) == (
        [],
        "expression gen Lt [7] does not match (maker makes the pool's nodes with gen Gt [6])",
    )


def test_a_label_of_any_value_meets_exists_and_notin_but_no_in_it_does_not_name() -> None:
    arch = ChosenLabel("arch")
    assert _choose([arch], None, [{"key": "arch", "operator": "NotIn", "values": ["arm64"]}])[0] == [
        {"fixed": "yes", "arch": ANY_VALUE}
    ]
    assert _choose([arch], {"arch": "amd64"})[0] == [{"fixed": "yes", "arch": "amd64"}]
    assert _choose([arch], None, [{"key": "arch", "operator": "DoesNotExist"}]) == (
        [],
        "expression arch DoesNotExist does not match (maker makes the pool's nodes with arch Exists)",
    )


def test_a_pod_asking_nothing_of_a_chosen_label_gets_the_template() -> None:
    """Nothing chosen, nothing added: the node is the template itself."""
    nodes, why = nodes_for({"spec": {"nodeSelector": {"fixed": "yes"}}}, NODE, {"zone": ChosenLabel("zone")}, "maker")
    assert nodes == [NODE] and why is None


def test_the_selector_and_the_term_together_must_be_met() -> None:
    """nodeSelector zone=a is ANDed with each term: a term asking for zone b cannot be met; the first constraint
    that, with those before it, no allowed value meets is the one named."""
    zone = ChosenLabel("zone", (("In", ("a", "b")),))
    assert _choose([zone], {"zone": "a"}, [{"key": "zone", "operator": "In", "values": ["b"]}]) == (
        [],
        "expression zone In [b] does not match (maker makes the pool's nodes with zone In [a, b])",
    )


# --- sameZone on a Karpenter pool -------------------------------------------------------------------------------------


def _same_zone(compile_text, zones: str) -> list[str]:
    """The PC493 messages of 'serve' with sameZone on pool 'shared' with `zones`."""
    text = POLICY.replace("zones: [us-east-1a, us-east-1c], ", zones).replace(SERVE, "gpus: 1, replicas: 2, "
                                                                              "sameZone: true, cpu:")  # fmt: skip
    result = compile_text(text)
    assert result.ok, _errors(result)
    return [d.message for d in result.report.diagnostics if d.code == "PC493"]


def test_same_zone_on_a_karpenter_pool_reads_the_zones_karpenter_chooses(compile_text) -> None:
    """Karpenter labels every node with its zone: with two zones (or any) sameZone keeps the pods in one; with one
    zone they are in it anyway."""
    assert _same_zone(compile_text, "zones: [us-east-1a, us-east-1c], ") == []
    assert _same_zone(compile_text, "") == []
    assert _same_zone(compile_text, "zones: [us-east-1a], ") == [
        "'workloads[0].sameZone' has no effect: every pool workload 'serve' can use is in zone 'us-east-1a' "
        "(topology.kubernetes.io/zone): its pods are in one zone anyway"
    ]

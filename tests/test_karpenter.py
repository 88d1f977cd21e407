"""The Karpenter provisioner (issue 26): a `karpenter.sh/v1` NodePool per pool, judged by the NodePool CRD with its
CEL rules as a kube-apiserver v1.36 judges it; what Karpenter refuses beyond the CRD, by its version; the disruption
rule; the fresh-node proof with the taints Karpenter registers nodes with; `explain` and `report`.

Expected values are written by hand from the policy texts (the arithmetic in comments)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from policyc.backends.workloads import pod_templates
from policyc.commands.cli import main
from policyc.compiler import Compilation, compile_file
from policyc.proof import placement
from policyc.provisioners.karpenter.label_rules import refused
from policyc.provisioners.karpenter.rules import ill_formed
from policyc.tenancy import contract
from policyc.tenancy.proof import fresh_node_landings
from tests.conftest import POLICIES
from tests.crd_validation import validate

EKS = POLICIES / "ai-eks.yaml"

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: eks}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  scheduler: {backend: volcano, actions: [allocate, preempt, reclaim, backfill]}
  provisioning:
    default: karpenter
    karpenter: {nodeClass: {name: gpu}}
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-80GB]}
    - {name: l4, products: [NVIDIA-L4]}
  nodePools:
    - name: mig
      usage: inference
      maxNodes: 3
      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8, mig: {devices: {1g.10gb: 7}}}
      allocatable: {cpu: "90", memory: 1000Gi}
      karpenter: {instanceTypes: [p4de.24xlarge]}
    - name: shared
      usage: hybrid
      maxNodes: 5
      gpu: {product: NVIDIA-L4, count: 4, sharing: {strategy: time-slicing, replicas: 4}}
      allocatable: {cpu: "44", memory: 180Gi}
      karpenter: {gpuName: l4, zones: [us-east-1a, us-east-1c], nodeClass: {name: l4-class}}
    - name: cpu
      usage: inference
      maxNodes: 10
      allocatable: {cpu: "30", memory: 120Gi}
      karpenter:
        instanceTypes: [m7i.8xlarge, c7i.8xlarge]
        capacityTypes: [spot, on-demand]
        requirements: [{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["6"]}]
  tenants:
    - {name: ml, namespaces: [ml], queue: {capability: {gpu: 80}}}
  workloads:
    - {name: serve, type: inference, tenant: ml, gpuTier: l4, gpus: 1, cpu: "4", memory: 16Gi}
"""


def build(path: Path) -> Compilation:
    result = compile_file(path, path.name)
    assert result.ok, [(d.code, d.message) for d in result.report.diagnostics]
    return result


def node_pools(result: Compilation) -> dict[str, dict]:
    """The emitted NodePools, by name."""
    [artifact] = [a for a in result.artifacts if a.path == "karpenter/nodepools.yaml"]
    return {m.obj["metadata"]["name"]: m.obj for m in artifact.manifests}


@pytest.fixture
def policy_result(tmp_path: Path) -> Compilation:
    path = tmp_path / "eks.yaml"
    path.write_text(POLICY, encoding="utf-8")
    return build(path)


# --- what the NodePools say ----------------------------------------------------------------------------------------


def test_the_eks_example_nodepools_as_written_by_hand() -> None:
    pools = node_pools(build(EKS))
    assert sorted(pools) == ["policyc-h100-train", "policyc-l4-serve", "policyc-l4-serve-spot"]
    train = pools["policyc-h100-train"]["spec"]
    assert train["template"]["metadata"]["labels"] == {
        "ai.example.com/gpu.tier": "high-performance",
        "ai.example.com/node.pool": "h100-train",
        "ai.example.com/node.usage": "training",
    }
    assert train["template"]["spec"] == {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
        "requirements": [
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1b"]},
        ],
        "taints": [
            {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu.product", "value": "NVIDIA-H100-80GB", "effect": "NoSchedule"},
        ],
        "expireAfter": "Never",
    }
    # A training pool: only empty nodes go, never for drift; 8 nodes of 8 cards: 64 GPUs.
    assert train["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "10m",
        "budgets": [{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "10%"}],
    }
    assert train["limits"] == {"nodes": 8, "nvidia.com/gpu": 64}
    assert "weight" not in train
    spot = pools["policyc-l4-serve-spot"]["spec"]
    assert spot["template"]["spec"]["requirements"] == [
        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["l4"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": ["4"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
    ]
    # An inference pool: empty or underused nodes go, 10% at a time; it expires as Karpenter's default says.
    assert spot["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "10m",
        "budgets": [{"nodes": "10%"}],
    }
    assert "expireAfter" not in spot["template"]["spec"]
    assert (spot["limits"], spot["weight"]) == ({"nodes": 16, "nvidia.com/gpu": 64}, 50)  # 16 nodes x 4 L4s
    assert pools["policyc-l4-serve"]["spec"]["weight"] == 10


def test_limits_count_the_cards_an_instance_has_not_mig_devices_or_shares(policy_result: Compilation) -> None:
    pools = node_pools(policy_result)
    # MIG: 8 cards of 7 devices each are 56 devices a node, but Karpenter counts the instance's 8 GPUs: 3 x 8 = 24.
    assert pools["policyc-mig"]["spec"]["limits"] == {"nodes": 3, "nvidia.com/gpu": 24}
    # Time-slicing: 4 cards shared 4 ways are 16 a node to pods; the instance has 4: 5 x 4 = 20, and 4 cards asked.
    shared = pools["policyc-shared"]["spec"]
    assert shared["limits"] == {"nodes": 5, "nvidia.com/gpu": 20}
    assert shared["template"]["spec"]["requirements"][:2] == [
        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["l4"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": ["4"]},
    ]
    # CPU-only: nodes alone (no cpu or memory: Karpenter counts capacity, above the allocatable stated).
    assert pools["policyc-cpu"]["spec"]["limits"] == {"nodes": 10}


def test_node_class_capacity_zones_and_further_requirements(policy_result: Compilation) -> None:
    pools = node_pools(policy_result)
    shared = pools["policyc-shared"]["spec"]["template"]["spec"]
    assert shared["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "l4-class"}
    assert shared["requirements"][2:] == [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a", "us-east-1c"]},
    ]
    cpu = pools["policyc-cpu"]["spec"]["template"]["spec"]
    assert cpu["nodeClassRef"]["name"] == "gpu"  # the cluster's default of the policy
    assert cpu["requirements"] == [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c7i.8xlarge", "m7i.8xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["6"]},
    ]
    # A hybrid pool runs gangs: consolidated only when empty, as a training pool.
    assert pools["policyc-shared"]["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert pools["policyc-shared"]["spec"]["template"]["spec"]["expireAfter"] == "Never"


def test_a_policy_that_names_no_node_class_gets_ec2nodeclass_default(compile_text) -> None:
    result = compile_text(POLICY.replace("    karpenter: {nodeClass: {name: gpu}}\n", ""))
    assert result.ok, [d.message for d in result.report.diagnostics]
    refs = {name: obj["spec"]["template"]["spec"]["nodeClassRef"] for name, obj in node_pools(result).items()}
    default = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
    assert refs == {"policyc-mig": default, "policyc-cpu": default,
                    "policyc-shared": {**default, "name": "l4-class"}}  # fmt: skip


# --- the CRD, with its CEL rules ----------------------------------------------------------------------------------


def _every_nodepool() -> list[tuple[str, dict]]:
    return [(f"ai-eks/{name}", obj) for name, obj in node_pools(build(EKS)).items()]


@pytest.mark.parametrize(("name", "obj"), _every_nodepool(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_emitted_nodepool_passes_its_crd_with_its_cel_rules(name: str, obj: dict) -> None:
    assert validate(obj) == []


def test_the_policy_nodepools_pass_their_crd(policy_result: Compilation) -> None:
    for obj in node_pools(policy_result).values():
        assert validate(obj) == [], obj["metadata"]["name"]


def test_the_judge_refuses_a_nodepool_karpenter_would_and_a_broken_one() -> None:
    """The judge is not blind: an emitted NodePool with a restricted label (a CEL rule) or without its node class (a
    required field) is refused."""
    obj = node_pools(build(EKS))["policyc-h100-train"]
    labelled = copy.deepcopy(obj)
    labelled["spec"]["template"]["metadata"]["labels"]["karpenter.sh/nodepool"] = "x"
    assert [p.detail for p in validate(labelled)] == ['label "karpenter.sh/nodepool" is restricted']
    broken = copy.deepcopy(obj)
    del broken["spec"]["template"]["spec"]["nodeClassRef"]
    assert validate(broken) != []


def _requirement(obj: dict, requirement: dict) -> None:
    obj["spec"]["template"]["spec"]["requirements"].append(requirement)


def _name(obj: dict, name: str) -> None:
    obj["metadata"]["name"] = name


def _taint(obj: dict, key: str) -> None:
    obj["spec"]["template"]["spec"]["taints"].append({"key": key, "effect": "NoSchedule"})


def _label(obj: dict, key: str) -> None:
    obj["spec"]["template"]["metadata"]["labels"][key] = "x"


ACCEPTED_BUT_REFUSED = {
    # 64 characters: a valid object name, one more than the label karpenter.sh/nodepool=<name> holds
    "nodepool-name-too-long": lambda o: _name(o, "policyc-" + "x" * 56),
    "exists-with-values": lambda o: _requirement(o, {"key": "a.example/b", "operator": "Exists", "values": ["x"]}),
    "notin-without-values": lambda o: _requirement(o, {"key": "a.example/b", "operator": "NotIn"}),
    "value-not-a-label-value": lambda o: _requirement(
        o, {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5/48xlarge"]}
    ),
    "karpenter-taint": lambda o: _taint(o, "karpenter.sh/unregistered"),
    "kubernetes-io-label-before-1-9": lambda o: _label(o, "team.kubernetes.io/owner"),
}
"""What the NodePool CRD accepts and Karpenter refuses, each refused by a rule of policyc's (its invalid case)."""


@pytest.mark.parametrize("variant", sorted(ACCEPTED_BUT_REFUSED))
def test_the_crd_accepts_what_karpenters_rules_refuse(variant: str) -> None:
    obj = copy.deepcopy(node_pools(build(EKS))["policyc-h100-train"])
    ACCEPTED_BUT_REFUSED[variant](obj)
    assert validate(obj) == []


@pytest.mark.parametrize(
    ("operator", "values", "min_values", "wrong"),
    [
        ("In", [], None, "operator In needs at least one value"),
        ("NotIn", [], None, "operator NotIn needs at least one value"),
        ("Exists", ["a"], None, "operator Exists takes no values"),
        ("DoesNotExist", ["a"], None, "operator DoesNotExist takes no values"),
        ("Gt", ["4", "5"], None, "operator Gt takes exactly one value, a non-negative integer"),
        ("Lte", ["-1"], None, "operator Lte takes exactly one value, a non-negative integer"),
        ("Gte", ["x"], None, "operator Gte takes exactly one value, a non-negative integer"),
        ("In", ["a", "b"], 3, "minValues 3 is more than its 2 value(s)"),
        ("In", ["a", "b"], 2, None),
        ("Exists", [], None, None),
        ("Lt", ["0"], None, None),
    ],
)
def test_ill_formed_requirements(operator: str, values: list[str], min_values: int | None, wrong: str | None) -> None:
    found = ill_formed(operator, values, min_values)
    assert (found[0] if found else None) == wrong


@pytest.mark.parametrize(
    "key",
    [
        "karpenter.sh/capacity-type",
        "karpenter.sh/nodepool",
        "karpenter.sh/team",
        "team.karpenter.sh/x",
        "kubernetes.io/hostname",
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/owner",
        "ai.example.com/node.usage",
        "team.kubernetes.io/x",
    ],
)
def test_the_label_rules_of_karpenter_1_14_agree_with_its_crd(key: str) -> None:
    """From 1.9 on, the CRD's CEL rules are Karpenter's rules on a template's label keys: policyc refuses a key exactly
    when the CRD does."""
    obj = copy.deepcopy(node_pools(build(EKS))["policyc-h100-train"])
    obj["spec"]["template"]["metadata"]["labels"][key] = "x"
    assert (refused(key, (1, 14)) is not None) == (validate(obj) != [])


@pytest.mark.parametrize(
    ("key", "before_1_9", "from_1_9"),
    [
        # kubernetes.io and k8s.io: refused before 1.9, but well-known keys and the excepted domains
        ("team.kubernetes.io/owner", True, False),
        ("k8s.io/x", True, False),
        ("kubernetes.io/arch", False, False),
        ("topology.kubernetes.io/zone", False, False),
        ("node.kubernetes.io/instance-type", False, False),
        ("feature.node.kubernetes.io/rdma.capable", False, False),
        ("example.com.node-restriction.kubernetes.io/usage", False, False),
        ("a.kops.k8s.io/x", False, False),
        # Karpenter's own, in every version
        ("karpenter.sh/nodepool", True, True),
        ("kubernetes.io/hostname", True, True),
        ("karpenter.sh/capacity-type", False, False),
        ("karpenter.k8s.aws/instance-family", False, False),
        ("karpenter.k8s.aws/owner", True, True),
        ("nvidia.com/mig.config", False, False),
    ],
)
def test_restricted_label_keys_by_version(key: str, before_1_9: bool, from_1_9: bool) -> None:
    assert (refused(key, (1, 8)) is not None, refused(key, (1, 9)) is not None) == (before_1_9, from_1_9)


@pytest.mark.parametrize("domain", ["ai.k8s.io", "ai.karpenter.sh"])
def test_a_policy_domain_karpenter_refuses_is_one_error_at_the_domain(compile_text, domain: str) -> None:
    """The core refuses such a domain (PC412): Karpenter's rules do not say it again for each label of each pool."""
    text = POLICY.replace("domain: ai.example.com", f"domain: {domain}").replace(
        "karpenter: {nodeClass: {name: gpu}}", 'karpenter: {nodeClass: {name: gpu}, version: "1.8"}'
    )
    assert [(d.code, d.path) for d in compile_text(text).report.errors] == [("PC412", ("spec", "domain"))]


def test_a_version_that_is_not_major_minor_is_located(compile_text) -> None:
    text = POLICY.replace("karpenter: {nodeClass: {name: gpu}}", 'karpenter: {version: "v1.14"}')
    [d] = compile_text(text).report.errors
    assert d.path == ("spec", "provisioning", "karpenter", "version")
    assert d.hint == 'write e.g. "1.14"'


# --- no window: nodes register with their pool's taints -------------------------------------------------------------


def test_karpenter_nodes_register_with_their_pools_taints_and_no_release_script() -> None:
    result = build(EKS)
    for p in result.cluster.pools:
        assert p.registration_taints == p.taints
    fresh = {t.name: t for t in placement.fresh_targets(result.cluster)}
    assert fresh["h100-train (registering)"].node["spec"]["taints"] == [
        {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu.product", "value": "NVIDIA-H100-80GB", "effect": "NoSchedule"},
    ]
    paths = {a.path for a in result.artifacts}
    assert not paths & {"nodes/kubelet-config.yaml", "nodes/release.sh", "nodes/apply.sh"}


def test_a_fresh_karpenter_node_takes_only_pods_of_its_own_pool() -> None:
    result = build(EKS)
    template = placement.workload_templates(result.artifacts)["chat-serving"]
    pod = pod_templates(result.backend.KINDS, template)[0][2]
    # Its required affinity keeps it off every node without the pool's labels, a fresh one among them ...
    assert not any(ok for _, ok, _ in placement.fresh_placement_of(result.cluster, pod))
    # ... and without it, the taints alone keep it to the fresh nodes of the pools it tolerates.
    loose = copy.deepcopy(pod)
    del loose["spec"]["affinity"]
    landed = {t for t, ok, _ in placement.fresh_placement_of(result.cluster, loose) if ok}
    assert landed == {"l4-serve (registering)", "l4-serve-spot (registering)"}
    untolerating = copy.deepcopy(loose)
    untolerating["spec"].pop("tolerations", None)
    assert not any(ok for _, ok, _ in placement.fresh_placement_of(result.cluster, untolerating))
    for tenant in ("research", "serving"):
        c = contract.contracts(result.cluster, result.backend)[tenant]
        assert list(fresh_node_landings(result.cluster, c)) == []


# --- what Karpenter provisions for ------------------------------------------------------------------------------------


def test_every_label_a_template_requires_is_one_its_nodepools_give() -> None:
    """Karpenter makes a node for a pod only if a NodePool's node matches its required node affinity: every key a
    template's pods require with In is a template label of each NodePool they are admitted on."""
    result = build(EKS)
    pools = {p.name: node_pools(result)[f"policyc-{p.name}"] for p in result.cluster.pools}
    checked = 0
    for name, template in placement.workload_templates(result.artifacts).items():
        for _, _, pod in pod_templates(result.backend.KINDS, template):
            affinity = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            keys = {e["key"] for term in affinity["nodeSelectorTerms"] for e in term["matchExpressions"]}
            for target, ok, _ in placement.placement_of(result.cluster, pod):
                if ok:
                    labels = pools[target]["spec"]["template"]["metadata"]["labels"]
                    assert keys <= set(labels), (name, target)
                    checked += 1
    assert checked == 3  # llm-pretraining on h100-train; chat-serving on both L4 pools


def test_a_workload_selects_a_zone_its_pool_is_labelled_with(compile_text) -> None:
    """The documented way to select a zone of a Karpenter pool: the pool's label, a template label of its NodePool,
    which agrees with its zones."""
    text = POLICY.replace(
        "karpenter: {gpuName: l4, zones: [us-east-1a, us-east-1c], nodeClass: {name: l4-class}}",
        "karpenter: {gpuName: l4, zones: [us-east-1a], nodeClass: {name: l4-class}}\n"
        "      labels: {topology.kubernetes.io/zone: us-east-1a}",
    ).replace("gpus: 1, cpu:", "gpus: 1, nodeSelector: {topology.kubernetes.io/zone: us-east-1a}, cpu:")
    result = compile_text(text)
    assert result.ok and not result.report.diagnostics, [d.message for d in result.report.diagnostics]
    shared = node_pools(result)["policyc-shared"]
    assert shared["spec"]["template"]["metadata"]["labels"]["topology.kubernetes.io/zone"] == "us-east-1a"
    assert validate(shared) == []
    # The same label outside the pool's zones: its NodePool would make no node.
    wrong = compile_text(text.replace("zones: [us-east-1a]", "zones: [us-east-1c]"))
    assert [d.code for d in wrong.report.errors] == ["karpenter/conflicting-requirement"]


def test_explain_and_report_show_each_pools_nodepool_and_size() -> None:
    explained = CliRunner().invoke(main, ["explain", str(EKS)])
    assert explained.exit_code == 0, explained.output
    assert (
        "  h100-train: karpenter, 0-8 nodes: NodePool policyc-h100-train: p5.48xlarge, on-demand, EC2NodeClass gpu, "
        "at most 8 nodes and 64 nvidia.com/gpu, nodes removed only when empty\n"
    ) in explained.stdout
    assert (
        "  l4-serve-spot: karpenter, 0-16 nodes: NodePool policyc-l4-serve-spot: any instance with 4 l4 GPUs, spot, "
        "EC2NodeClass gpu, at most 16 nodes and 64 nvidia.com/gpu, nodes removed when empty or underused\n"
    ) in explained.stdout
    report = CliRunner().invoke(main, ["report", str(EKS)])
    assert report.exit_code == 0, report.output
    assert "| h100-train | training | high-performance | NVIDIA-H100-80GB | 0-8 | karpenter (NodePool" in report.stdout


def test_the_nodepools_are_synced_in_the_first_wave() -> None:
    result = build(EKS)
    nodepools = YAML(typ="safe").load_all(result.files["karpenter/nodepools.yaml"].data.decode())
    waves = {o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] for o in nodepools}
    assert waves == {"0"}
    assert b"- karpenter/nodepools.yaml\n" in result.files["kustomization.yaml"].data


@pytest.mark.parametrize("version", ["1.8", "1.14"])
def test_a_node_restriction_domain_is_one_karpenter_sets_before_and_after_1_9(compile_text, version: str) -> None:
    """Karpenter before 1.9 refuses kubernetes.io's subdomains but node-restriction.kubernetes.io's (and 1.9 and
    later refuse none); its controller sets the labels, so no kubelet is asked to."""
    nr = "ai.example.com.node-restriction.kubernetes.io"
    text = EKS.read_text(encoding="utf-8").replace("domain: ai.example.com", f"domain: {nr}")
    result = compile_text(text.replace('version: "1.14"', f'version: "{version}"'))
    assert result.ok and not result.report.diagnostics, [d.message for d in result.report.diagnostics]
    pools = list(YAML(typ="safe").load_all(result.files["karpenter/nodepools.yaml"].data))
    assert all(f"{nr}/node.pool" in p["spec"]["template"]["metadata"]["labels"] for p in pools)
    assert all(validate(p) == [] for p in pools)

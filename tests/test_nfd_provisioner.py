"""The nfd provisioner (issue 26): pools matched by their hardware through a NodeFeatureRule per pool; what
nfd-master refuses though the CRD accepts it; pools whose matches nothing tells apart; the registration taint and its
release for nodes no policy names; a pool moved from static to nfd keeps its rule's object.

Expected values are written by hand from the policy text of each test (the PCI IDs are those lspci -nn prints:
10de:2330 an H100 SXM5 80GB, 10de:26b9 an L40S, 1002:74a1 an MI300X, 19e5:d802 an Ascend 910B, the last two of
class 1200, processing accelerators)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from policyc.commands import explain, report
from policyc.compiler import Compilation, compile_file
from policyc.proof import placement
from policyc.provisioners.nfd.backend import Hardware
from policyc.provisioners.nfd.rules import apart
from policyc.provisioners.nfd.settings import FeatureTerm
from policyc.tenancy import contract
from policyc.tenancy.proof import fresh_node_landings
from tests import crd_validation
from tests.conftest import REPO
from tests.test_node_script import FakeCluster

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: hw}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: big, products: [NVIDIA-H100-80GB-HBM3]}
    - {name: small, products: [NVIDIA-L40S]}
  nodePools:
    - {name: h100, usage: training, provisioning: nfd, minNodes: 2, maxNodes: 8,
       gpu: {product: NVIDIA-H100-80GB-HBM3, count: 8}, H100_NFD}
    - {name: l40s, usage: inference, provisioning: nfd, count: 4, gpu: {product: NVIDIA-L40S, count: 4},
       L40S_NFD}
  tenants:
    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 8}}}
  workloads:
    - {name: train, type: training, tenant: ml, gpuTier: big, gpus: 8, cpu: "8", memory: 64Gi}
    - {name: serve, type: inference, tenant: ml, gpuTier: small, gpus: 1, cpu: "4", memory: 16Gi}
"""
H100 = 'nfd: {devices: ["2330"]}'
L40S = 'nfd: {devices: ["26b9"]}'
REGISTERING = {"key": "ai.example.com/node.registering", "effect": "NoSchedule"}


def policy(h100: str = H100, l40s: str = L40S) -> str:
    return POLICY.replace(", H100_NFD}", f", {h100}}}" if h100 else "}").replace(
        "\n       L40S_NFD}", f"\n       {l40s}}}" if l40s else "}"
    )


def codes(result: Compilation) -> list[str]:
    return [d.code for d in result.report.diagnostics]


def rules_of(result: Compilation) -> list[dict]:
    return list(YAML(typ="safe").load_all(result.files["nfd/pools.yaml"].data))


# --- what it emits -----------------------------------------------------------------------------------------------


def test_each_pool_gets_a_rule_of_its_pci_device(compile_text) -> None:
    result = compile_text(policy())
    assert result.ok, codes(result)
    h100, l40s = rules_of(result)
    assert h100["metadata"]["name"] == "policyc-pool-h100"
    assert h100["spec"]["rules"] == [
        {
            "name": "pool h100",
            "labels": {
                "ai.example.com/gpu.tier": "big",
                "ai.example.com/node.pool": "h100",
                "ai.example.com/node.usage": "training",
            },
            "taints": [
                {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu.product", "value": "NVIDIA-H100-80GB-HBM3", "effect": "NoSchedule"},
            ],
            # NVIDIA's vendor and its display and 3D controller classes, from the pool's GPU vendor; the device stated
            "matchFeatures": [
                {
                    "feature": "pci.device",
                    "matchExpressions": {
                        "vendor": {"op": "In", "value": ["10de"]},
                        "device": {"op": "In", "value": ["2330"]},
                        "class": {"op": "In", "value": ["0300", "0302"]},
                    },
                }
            ],
        }
    ]
    assert l40s["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"]["device"] == {"op": "In", "value": ["26b9"]}
    # No node named, so no node script; the registration taint and its release instead; NFD's taints on.
    assert "nodes/apply.sh" not in result.files and "nfd/static-pools.yaml" not in result.files
    assert {"nodes/kubelet-config.yaml", "nodes/release.sh"} <= set(result.files)
    values = YAML(typ="safe").load(result.files["nodes/gpu-operator-values.yaml"].data)
    assert values["node-feature-discovery"]["master"]["config"] == {"enableTaints": True}
    assert REGISTERING | {"operator": "Exists"} in values["node-feature-discovery"]["worker"]["tolerations"]


@pytest.mark.parametrize(
    ("pool", "expressions"),
    [
        # AMD's and Intel Gaudi's vendors are known, their classes are not: no class expression.
        (
            "{name: mi, usage: training, provisioning: nfd, count: 2, gpu: {vendor: amd, product: AMD-Instinct-MI300X, "
            'count: 8}, nfd: {devices: ["74a1"]}}',
            {"vendor": {"op": "In", "value": ["1002"]}, "device": {"op": "In", "value": ["74a1"]}},
        ),
        (
            "{name: gaudi, usage: training, provisioning: nfd, count: 2, gpu: {vendor: intel-gaudi, product: Gaudi2, "
            "count: 8}}",
            {"vendor": {"op": "In", "value": ["1da3"]}},
        ),
        # Stated vendor and classes replace what policyc knows.
        (
            "{name: asc, usage: training, provisioning: nfd, count: 2, gpu: {vendor: huawei-ascend, "
            'product: Ascend910B3, count: 8}, nfd: {vendor: "19e5", devices: ["d802"], classes: ["1200"]}}',
            {
                "vendor": {"op": "In", "value": ["19e5"]},
                "device": {"op": "In", "value": ["d802"]},
                "class": {"op": "In", "value": ["1200"]},
            },
        ),
    ],
)
def test_the_vendor_comes_from_the_pools_gpu_vendor_or_the_policy(compile_text, pool: str, expressions: dict) -> None:
    product = pool.split("product: ")[1].split(",")[0]
    text = (
        policy()
        .replace("      L40S_NFD", "")
        .replace("    - {name: h100,", f"    - {pool}\n    - {{name: h100,")
        .replace("  nodePools:\n", f"    - {{name: extra, products: [{product}]}}\n  nodePools:\n")
    )
    result = compile_text(text)
    assert result.ok, [d.message for d in result.report.diagnostics]
    name = pool.split(",")[0].removeprefix("{name: ")
    [first] = [r for r in rules_of(result) if r["metadata"]["name"] == f"policyc-pool-{name}"]
    assert first["spec"]["rules"][0]["matchFeatures"] == [{"feature": "pci.device", "matchExpressions": expressions}]


def test_further_terms_follow_the_pci_term(compile_text) -> None:
    extra = (
        'nfd: {devices: ["2330"], features: [{feature: system.dmiid, matchExpressions: {product_name: {op: In, '
        "value: [PowerEdge XE9680]}}}, {feature: kernel.loadedmodule, matchExpressions: {nvidia: {op: Exists}}}]}"
    )
    result = compile_text(policy(h100=extra))
    assert result.ok, codes(result)
    assert rules_of(result)[0]["spec"]["rules"][0]["matchFeatures"][1:] == [
        {"feature": "system.dmiid", "matchExpressions": {"product_name": {"op": "In", "value": ["PowerEdge XE9680"]}}},
        {"feature": "kernel.loadedmodule", "matchExpressions": {"nvidia": {"op": "Exists"}}},  # no empty value
    ]


def test_every_emitted_rule_passes_its_crd_strictly_with_its_cel_rules(compile_text) -> None:
    shipped = built(REPO / "policies" / "ai-onprem.yaml")
    extra = (
        'nfd: {devices: ["2330", "2331"], classes: ["0302"], features: [{feature: system.dmiid, matchExpressions: '
        "{product_name: {op: In, value: [PowerEdge XE9680]}}}, {feature: kernel.version, matchExpressions: {major: "
        "{op: Gt, value: ['5']}}}]}"
    )
    other = compile_text(policy(h100=extra))
    assert other.ok, codes(other)
    rules = rules_of(shipped) + rules_of(other)
    assert len(rules) == 4
    for rule in rules:
        assert crd_validation.validate(rule) == [], rule["metadata"]["name"]
    # The judge is not lenient: an operator the CRD does not list is refused, as a real API server refuses it.
    wrong = copy.deepcopy(rules[0])
    wrong["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"]["vendor"]["op"] = "Regexp"
    assert [str(p).split(":")[0] for p in crd_validation.validate(wrong)] == [
        "spec.rules[0].matchFeatures[0].matchExpressions.vendor.op"
    ]


def built(path: Path) -> Compilation:
    result = compile_file(path, path.name)
    assert result.ok, codes(result)
    return result


# --- pools that overlap ------------------------------------------------------------------------------------------


def hw(vendor: str | None = "10de", devices: tuple[str, ...] = (), classes=("0300", "0302"), *terms: dict) -> Hardware:
    return Hardware(vendor, devices, classes, tuple(FeatureTerm.model_validate(t) for t in terms))


def dmi(op: str, *models: str) -> dict:
    return {"feature": "system.dmiid", "matchExpressions": {"product_name": {"op": op, "value": list(models)}}}


@pytest.mark.parametrize(
    ("a", "b", "apart_"),
    [
        (hw(), hw(), False),  # NVIDIA alone, twice
        (hw(devices=("2330",)), hw(devices=("26b9",)), True),
        (hw(devices=("2330", "2331")), hw(devices=("2331",)), False),  # 2331 in both
        (hw(devices=("2330",)), hw(), False),  # any NVIDIA device includes 2330
        (hw("10de", ("2330",)), hw("1002", ("2330",)), True),  # another vendor
        (hw(classes=("0302",)), hw(classes=("0300",)), True),
        (hw(devices=("2330",)), hw(devices=("2330",)), False),  # the same GPU: a count apart is no help
        (hw("10de", ("2330",), (), dmi("In", "XE9680")), hw("10de", ("2330",), (), dmi("In", "R760xa")), True),
        (
            hw("10de", ("2330",), (), dmi("In", "XE9680", "R760xa")),
            hw("10de", ("2330",), (), dmi("In", "R760xa")),
            False,
        ),
        (hw("10de", (), (), dmi("In", "XE9680")), hw("10de", (), (), dmi("NotIn", "XE9680", "R760xa")), True),
        (hw("10de", (), (), dmi("In", "XE9680")), hw("10de", (), (), dmi("NotIn", "R760xa")), False),
        (hw("10de", (), (), dmi("Exists")), hw("10de", (), (), dmi("DoesNotExist")), True),
        (hw(None, (), (), dmi("In", "R660")), hw(devices=("2330",)), False),  # an H100 may sit in an R660
        (hw(None, (), (), dmi("In", "R660")), hw("10de", ("2330",), (), dmi("In", "XE9680")), True),
    ],
)
def test_which_matches_are_apart(a: Hardware, b: Hardware, apart_: bool) -> None:
    assert apart(a, b) is apart_ and apart(b, a) is apart_


def test_overlapping_pools_are_an_error_at_the_second(compile_text) -> None:
    text = policy(h100="", l40s='nfd: {classes: ["0302"]}')
    result = compile_text(text)
    [d] = result.report.errors
    assert d.code == "nfd/hardware-overlap"
    # h100: any NVIDIA display or 3D controller; l40s: any NVIDIA 3D controller: an H100 node matches both.
    assert d.message == (
        "pools 'h100' and 'l40s' are matched by the same hardware (PCI 10de:any): a node that has it would get the "
        "labels and taints of both"
    )
    assert d.line == next(i for i, line in enumerate(text.splitlines(), 1) if "nfd: {classes" in line)
    assert d.related == ("spec", "nodePools", 0)  # pool h100


# --- what nfd-master refuses -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stated", "message", "hint"),
    [
        ('vendor: "0x10DE"', "PCI vendor ID '0x10DE'", "write '10de'"),
        ('vendor: ""', "PCI vendor ID ''", "write the vendor ID as lspci -nn prints it on a node, 4 hex digits such as "
         "10de"),  # not the default's
        ('devices: ["10de:2330"]', "PCI device ID '10de:2330'",
         "write the device ID alone, '2330' (lspci -nn prints [vendor:device]; the vendor is nfd.vendor)"),
        ('vendor: "10de:2330"', "PCI vendor ID '10de:2330'",
         "write the vendor ID alone, '10de' (lspci -nn prints [vendor:device]; the device goes in devices)"),
        ('classes: ["3D controller"]', "PCI class ID '3D controller'",
         "write the class ID as lspci -nn prints it on a node, 4 hex digits such as 0302"),
    ],
)  # fmt: skip
def test_a_pci_id_in_another_form_is_refused_with_its_fix(compile_text, stated: str, message: str, hint: str) -> None:
    result = compile_text(policy(h100=f"nfd: {{{stated}}}"))
    [d] = result.report.errors
    assert (d.code, d.hint) == ("nfd/pci-id-form", hint)
    assert d.message.startswith(f"{message} of pool 'h100' is not 4 lower-case hex digits")


@pytest.mark.parametrize(
    ("expression", "wrong"),
    [
        ("{op: Exists}", None),
        ("{op: IsTrue, value: ['true']}", "has values, which IsTrue takes none of"),
        ("{op: Gt, value: ['5']}", None),
        ("{op: Gt, value: ['5.4']}", "Gt takes one integer, not ['5.4']"),
        ("{op: Le, value: ['1', '2']}", "Le takes one integer, not ['1', '2']"),
        ("{op: GtLt, value: ['4', '6']}", None),
        ("{op: GeLe, value: ['6', '4']}", "GeLe takes two integers, the lower first, not ['6', '4']"),
        ("{op: In}", "has no value, which In needs"),
        ("{op: InRegexp, value: ['^5']}", None),
    ],
)
def test_an_expressions_values_fit_its_operator(compile_text, expression: str, wrong: str | None) -> None:
    term = f"{{feature: kernel.version, matchExpressions: {{major: {expression}}}}}"
    result = compile_text(policy(h100=f'nfd: {{devices: ["2330"], features: [{term}]}}'))
    found = [d.message for d in result.report.errors]
    assert found == ([] if wrong is None else [
        f"the expression on 'major' of feature 'kernel.version' of pool 'h100' {wrong}: nfd-master refuses the rule"
    ])  # fmt: skip


def test_an_operator_the_crd_does_not_list_is_refused_by_the_language(compile_text) -> None:
    term = "{feature: kernel.version, matchExpressions: {major: {op: Regexp, value: ['5']}}}"
    result = compile_text(policy(h100=f'nfd: {{devices: ["2330"], features: [{term}]}}'))
    [d] = result.report.errors
    assert d.code == "PC104" and "'Regexp'" in d.message


def test_labels_and_taints_nfd_does_not_set_are_errors_of_an_nfd_pool(compile_text) -> None:
    pool = (
        H100
        + ", labels: {kubernetes.io/role: gpu, rack: r1}, taints: [{key: node.kubernetes.io/gpu, effect: NoSchedule}]"
    )
    result = compile_text(policy(h100=pool))
    assert sorted((d.code, d.message.split(" is not")[0]) for d in result.report.errors) == [
        ("nfd/label-nfd-refuses", "label 'kubernetes.io/role' of pool 'h100'"),
        ("nfd/label-nfd-refuses", "label 'rack' of pool 'h100'"),
        ("nfd/taint-nfd-refuses", "taint 'node.kubernetes.io/gpu' of pool 'h100'"),
    ]
    # The same on a static pool is left to the node script: a warning for the taint, nothing for the labels.
    static = policy(h100="", l40s="").replace("provisioning: nfd, minNodes: 2, maxNodes: 8", 'nodes: ["h-[1-2]"]')
    static = static.replace("provisioning: nfd, count: 4", 'nodes: ["l-[1-4]"]').replace(
        "count: 8}}",
        "count: 8}, labels: {kubernetes.io/role: gpu}, taints: [{key: node.kubernetes.io/gpu, effect: NoSchedule}]}",
    )
    found = [d.code for d in compile_text(static).report.diagnostics]
    assert [c for c in found if c.startswith(("nfd/", "static/"))] == ["static/not-set-by-nfd"]


# --- nodes no policy names: the registration taint, the proof, the release ---------------------------------------


def test_a_fresh_node_of_an_nfd_pool_takes_no_pod_of_any_tenant(compile_text) -> None:
    result = compile_text(policy())
    assert result.ok, codes(result)
    fresh = placement.fresh_targets(result.cluster)
    assert [(t.name, t.node["metadata"]["labels"], t.node["spec"]["taints"]) for t in fresh] == [
        ("h100 (registering)", {}, [REGISTERING]),
        ("l40s (registering)", {}, [REGISTERING]),
    ]
    c = contract.contracts(result.cluster, result.backend)["ml"]
    assert list(fresh_node_landings(result.cluster, c)) == []
    kubelet = YAML(typ="safe").load(result.files["nodes/kubelet-config.yaml"].data)
    assert kubelet["registerWithTaints"] == [REGISTERING]
    assert "#   pools: h100, l40s\n" in result.files["nodes/kubelet-config.yaml"].data.decode()


def test_release_opens_a_node_of_any_name_once_nfd_has_labelled_and_tainted_it(compile_text, tmp_path: Path) -> None:
    result = compile_text(policy())
    state = {
        # NFD has matched its H100s: the pool's label and both taints
        "srv-7f3a": {"labels": {"ai.example.com/node.pool": "h100"}, "taints": [
            REGISTERING,
            {"key": "ai.example.com/node.usage", "value": "training", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu.product", "value": "NVIDIA-H100-80GB-HBM3", "effect": "NoSchedule"}]},
        # NFD's worker has not reported it yet
        "srv-91c2": {"labels": {}, "taints": [REGISTERING]},
    }  # fmt: skip
    cluster = FakeCluster(tmp_path, state)
    cluster.script = tmp_path / "release.sh"
    cluster.script.write_bytes(result.files["nodes/release.sh"].data)
    run = cluster.run()
    assert run.returncode == 0, run.stderr
    assert [c for c in cluster.calls if c[0] == "taint"] == [
        ["taint", "node", "srv-7f3a", "--overwrite", "ai.example.com/node.registering:NoSchedule-"]
    ]
    assert "node srv-91c2 waits: it has no label of a pool of the policy (none)" in run.stderr


# --- explain and report ------------------------------------------------------------------------------------------


def test_explain_and_report_show_each_pools_match_and_size(compile_text) -> None:
    result = compile_text(policy(l40s='nfd: {devices: ["26b9", "26ba"], features: [{feature: system.dmiid, '
                                 "matchExpressions: {product_name: {op: In, value: [R760xa]}}}]}"))  # fmt: skip
    assert result.ok, codes(result)
    assert explain.render_pools_text(explain.pool_rows(result)) == (
        "Pools (how their nodes come to be):\n"
        "  h100: nfd, 2-8 nodes: NodeFeatureRule policyc-pool-h100 by PCI 10de:2330\n"
        "  l40s: nfd, 4 nodes: NodeFeatureRule policyc-pool-l40s by PCI 10de:26b9,26ba + system.dmiid"
    )
    text = report.render_markdown(result)
    # 2..8 nodes of 8 GPUs (up to 64) and 4 nodes of 4 (16)
    assert (
        "| h100 | training | big | NVIDIA-H100-80GB-HBM3 | 2-8 | nfd (NodeFeatureRule policyc-pool-h100 by PCI " in text
    )
    assert "2 pools, 6-12 nodes, 80 nvidia.com/gpu" in text


# --- from the script to NFD --------------------------------------------------------------------------------------


def test_a_pool_moved_from_static_to_nfd_keeps_its_rule_and_what_it_gives(compile_text) -> None:
    """docs/provisioning/nfd.md's move: the pool keeps its name, so its NodeFeatureRule keeps its object (Argo CD
    updates it in place, nothing is pruned) and gives the same labels and taints; only the match changes."""
    static = compile_text(
        policy(h100="", l40s=L40S).replace(
            "provisioning: nfd, minNodes: 2, maxNodes: 8", 'provisioning: static, nodes: ["h100-[01-08]"]'
        )
    )
    moved = compile_text(policy())
    assert static.ok and moved.ok, (codes(static), codes(moved))
    [before] = [r for r in YAML(typ="safe").load_all(static.files["nfd/static-pools.yaml"].data)]
    after = rules_of(moved)[0]
    assert (before["metadata"], after["metadata"]["name"]) == (after["metadata"], "policyc-pool-h100")
    rule_before, rule_after = before["spec"]["rules"][0], after["spec"]["rules"][0]
    assert {k: v for k, v in rule_before.items() if k != "matchFeatures"} == {
        k: v for k, v in rule_after.items() if k != "matchFeatures"
    }
    assert rule_before["matchFeatures"] == [
        {"feature": "system.name", "matchExpressions": {"nodename": {"op": "InRegexp", "value": ["^h100-0[1-8]$"]}}}
    ]


MIXED = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: mixed}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: small, products: [NVIDIA-L40S, NVIDIA-L4]}
  nodePools:
    - {name: old, usage: inference, nodes: ["old-[1-2]"], gpu: {product: PRODUCT, count: 4}}
    - {name: l40s, usage: inference, provisioning: nfd, count: 4, gpu: {product: NVIDIA-L40S, count: 4}NFD}
  tenants:
    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 4}}}
  workloads:
    - {name: serve, type: inference, tenant: ml, gpuTier: small, gpus: 1, cpu: "4", memory: 16Gi}
"""
DMI = ", features: [{feature: system.dmiid, matchExpressions: {product_name: {op: In, value: [R760xa]}}}]"


@pytest.mark.parametrize(
    ("nfd", "product", "match"),
    [
        ("", "NVIDIA-L4", "PCI 10de:any"),  # any NVIDIA device: the L4 nodes too
        (', nfd: {devices: ["26b9"]}', "NVIDIA-L4", None),  # 26b9 is not the L4's device
        (', nfd: {devices: ["26b9"]}', "NVIDIA-L40S", "PCI 10de:26b9"),  # the same GPU product: the same device
        (f', nfd: {{devices: ["26b9"]{DMI}}}', "NVIDIA-L40S", None),  # a further term policyc cannot judge
    ],
)
def test_nodes_of_another_provisioners_pool_that_a_rule_matches(compile_text, nfd, product, match) -> None:
    result = compile_text(MIXED.replace("NFD}", f"{nfd}}}").replace("PRODUCT", product))
    found = [(d.message, d.related) for d in result.report.diagnostics if d.code == "nfd/hardware-overlap"]
    message = (
        f"the nodes of static pool 'old' ({product}) match pool 'l40s' ({match}): they would get the labels and "
        "taints of both"
    )
    assert found == ([] if match is None else [(message, ("spec", "nodePools", 0))])

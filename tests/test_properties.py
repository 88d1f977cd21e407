"""Property-based tests: generated valid policies always compile, and generated mistakes always get located errors.

A valid policy has pools of training, inference and hybrid usage over a few GPU tiers and products, tenants
with namespaces, queues and quotas within capacity, priority classes (at most one the global default),
workloads of every kind the backend takes whose tier has a pool of their usage or a hybrid one, and either the
Volcano backend (with plugin settings, float arguments among them) or Kueue. Each must compile without
errors (verification against the API schemas and the placement proof are part of compiling), every
emitted YAML file must read back (with ruamel.yaml) as the objects it was built from, and compiling twice
must give the same bytes. Each mutation of a valid policy (a required key dropped, a value of the wrong
type, a name Kubernetes rejects, a broken reference, a duplicate name, an unknown key) must give at least
one error with a line and a column, and never an exception.

Example counts come from a hypothesis profile: "ci" (the default, quick) or "long" (1,000 examples), chosen
with the environment variable POLICYC_HYPOTHESIS_PROFILE, e.g.

    POLICYC_HYPOTHESIS_PROFILE=long pytest tests/test_properties.py
"""

from __future__ import annotations

import copy
import io
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from policyc.compiler import Compilation, compile_file

settings.register_profile(
    "ci", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile(
    "long", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
PROFILE = settings.get_profile(os.environ.get("POLICYC_HYPOTHESIS_PROFILE", "ci"))

PRODUCTS = ["NVIDIA-H100-80GB", "NVIDIA-H20", "NVIDIA-A100-SXM4-40GB", "NVIDIA-L4", "Tesla-T4", "NVIDIA-A40"]
TIER_NAMES = ["high-performance", "inference", "general", "legacy"]
USAGES = ["training", "inference", "hybrid"]
KINDS = {"volcano": ["VolcanoJob", "Deployment", "PyTorchJob"], "kueue": ["Job", "Deployment", "PyTorchJob"]}
PLUGIN_SETTINGS = [  # (plugin, argument, values Volcano accepts for it)
    ("overcommit", "overcommit-factor", st.floats(1.0, 10.0, allow_nan=False)),
    ("network-topology-aware", "hypernode.binpack.normal-pod.fading", st.floats(0.0, 1e6, allow_nan=False)),
    ("binpack", "binpack.weight", st.integers(0, 100)),
    ("nodeorder", "leastrequested.weight", st.integers(0, 100)),
]
DNS_LABEL = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
FREE_TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)  # any character, control ones too


# --- valid policies ---------------------------------------------------------------------------------------------


@st.composite
def valid_policies(draw) -> dict:
    backend = draw(st.sampled_from(["volcano", "kueue"]))
    tier_count = draw(st.integers(1, 3))
    tier_names = draw(st.lists(st.sampled_from(TIER_NAMES), min_size=tier_count, max_size=tier_count, unique=True))
    products = draw(st.permutations(PRODUCTS))
    tiers, pools = [], []
    for t, tier in enumerate(tier_names):
        tier_products = products[2 * t : 2 * t + draw(st.integers(1, 2))]
        tiers.append({"name": tier, "products": tier_products})
        for p in range(draw(st.integers(1, 2))):  # every tier has a pool
            pool = {
                "name": f"{tier}-{p}",
                "usage": draw(st.sampled_from(USAGES)),
                "nodes": [f"{tier[:4]}{p}-[{draw(st.sampled_from(['1', '01']))}-{draw(st.integers(2, 9)):0>2}]"],
                "gpu": {"product": draw(st.sampled_from(tier_products)), "count": draw(st.sampled_from([1, 2, 4, 8]))},
            }
            if pool["nodes"][0].count("[1-"):  # unpadded bounds must not carry a leading zero
                pool["nodes"] = [pool["nodes"][0].replace("-0", "-")]
            # Pods are sized from the allocatable (workloads state no cpu or memory here).
            pool["allocatable"] = {"cpu": draw(st.sampled_from(["64", "96", 128])), "memory": "1000Gi"}
            if draw(st.booleans()):
                pool["labels"] = {"topology.kubernetes.io/zone": draw(st.sampled_from(["zone-a", "zone-b", "yes"]))}
            if draw(st.booleans()):
                pool["rdma"] = True
            if draw(st.booleans()):
                pool["gpuFeatureDiscovery"] = False
            if draw(st.booleans()):
                pool["description"] = draw(FREE_TEXT)
            pools.append(pool)
    smallest_pool_gpus = min(_gpus(pool) for pool in pools)

    class_names = draw(st.lists(DNS_LABEL, max_size=3, unique=True))
    default = draw(st.sampled_from([None, *class_names]))
    classes = []
    for name in class_names:
        cls = {"name": name, "value": draw(st.integers(-1000, 1_000_000_000))}
        if name == default:
            cls["globalDefault"] = True
        if draw(st.booleans()):
            cls["preemptionPolicy"] = draw(st.sampled_from(["Never", "PreemptLowerPriority"]))
        if draw(st.booleans()):
            cls["description"] = draw(FREE_TEXT)
        classes.append(cls)

    tenant_names = draw(st.lists(DNS_LABEL, min_size=1, max_size=3, unique=True))
    tenants = []
    for i, name in enumerate(tenant_names):
        share = smallest_pool_gpus // len(tenant_names)
        guarantee = draw(st.integers(0, share))
        queue: dict = {"weight": draw(st.integers(1, 10))}
        if guarantee:
            queue["guarantee"] = {"gpu": guarantee}
        if draw(st.booleans()):
            queue["capability"] = {"gpu": guarantee + draw(st.integers(0, 64))}
        tenant: dict = {"name": name, "namespaces": [f"ns{i}-{name}"[:63]], "queue": queue}
        if draw(st.booleans()):
            tenant["namespaces"].append(f"ns{i}-extra")
        if draw(st.booleans()):  # raised below to hold the tenant's workloads
            tenant["quota"] = {"requests": {"cpu": draw(st.sampled_from(["10k", "20000", 40000])), "gpu": guarantee}}
        if draw(st.booleans()):
            tenant["limitRange"] = {"defaultRequest": {"cpu": "500m", "memory": "1Gi"}, "default": {"cpu": "1"}}
        tenants.append(tenant)

    eligible = [
        (tier["name"], kind, matching)
        for tier in tiers
        for kind in ("training", "inference")
        if (matching := [p for p in pools if _in_tier(p, tier) and p["usage"] in (kind, "hybrid")])
    ]
    workloads = []
    for w in range(draw(st.integers(0, 4)) if eligible else 0):
        tier, kind, matching = draw(st.sampled_from(eligible))
        gpus = draw(st.integers(1, min(_gpus_per_node(p) for p in matching)))
        workload = {
            "name": f"w{w}-{kind}",
            "type": kind,
            "tenant": draw(st.sampled_from(tenant_names)),
            "gpuTier": tier,
            "gpus": gpus,
            "kind": draw(st.sampled_from(KINDS[backend])),
        }
        room = sum(_gpus(p) // p["gpu"]["count"] * (p["gpu"]["count"] // gpus) for p in matching)  # pods that fit
        if draw(st.booleans()):
            workload["replicas"] = draw(st.integers(1, min(8, room)))
        if class_names and draw(st.booleans()):
            workload["priorityClass"] = draw(st.sampled_from(class_names))
        if backend == "volcano" and draw(st.booleans()):  # Kueue would admit it to any flavor of its queue
            workload["placement"] = "preferred"
        workloads.append(workload)

    for tenant in tenants:  # quotas and capabilities hold every workload of the tenant at once
        gangs = [w["gpus"] * w.get("replicas", 1) for w in workloads if w["tenant"] == tenant["name"]]
        if "quota" in tenant:
            tenant["quota"]["requests"]["gpu"] = max(tenant["quota"]["requests"]["gpu"], sum(gangs))
        if "capability" in tenant["queue"]:
            tenant["queue"]["capability"]["gpu"] = max([tenant["queue"]["capability"]["gpu"], *gangs])

    spec = {
        "kubernetesVersion": draw(st.sampled_from(["1.31", "1.33"])),
        "domain": draw(st.sampled_from(["ai.example.com", "gpu.example.org"])),
        "gpuTiers": draw(st.permutations(tiers)),
        "nodePools": draw(st.permutations(pools)),
        "priorityClasses": classes,
        "tenants": tenants,
        "workloads": workloads,
    }
    if draw(st.booleans()):
        spec["controlPlane"] = {"nodes": ["cp-[1-3]"]}
    scheduler: dict = {"backend": backend}
    if draw(st.booleans()):
        scheduler["placement"] = draw(st.sampled_from(["binpack", "spread"]))
    if backend == "volcano":
        settings_ = draw(st.lists(st.sampled_from(PLUGIN_SETTINGS), max_size=3, unique_by=lambda p: p[0]))
        scheduler["plugins"] = [{"name": name, "arguments": {arg: draw(values)}} for name, arg, values in settings_]
    spec["scheduler"] = scheduler
    metadata = {"name": draw(DNS_LABEL)}
    if draw(st.booleans()):
        metadata["description"] = draw(FREE_TEXT)
    return {"apiVersion": "policyc.io/v1alpha1", "kind": "ClusterPolicy", "metadata": metadata, "spec": spec}


ANY_ARGUMENT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=6,
)


@settings(PROFILE)
@given(valid_policies(), st.sampled_from(["overcommit", "binpack", "nodeorder", "gang", "no-such-plugin"]),
       st.dictionaries(st.text(max_size=30), ANY_ARGUMENT, max_size=3))  # fmt: skip
def test_any_plugin_arguments_build_or_get_located_errors(policy, plugin, arguments) -> None:
    """Floats (inf and nan too), strings, lists and maps as plugin arguments: never an exception."""
    policy["spec"]["scheduler"] = {"backend": "volcano", "plugins": [{"name": plugin, "arguments": arguments}]}
    policy["spec"]["workloads"] = [w for w in policy["spec"]["workloads"] if w["kind"] != "Job"]
    text = dump(policy)
    result = compile_text(text)
    lines = len(text.splitlines()) + 1  # YAML breaks lines at NEL and U+2028 too, as splitlines does
    assert result.ok or result.report.errors
    for d in result.report.diagnostics:
        assert d.line is not None and 1 <= d.line <= lines, d
        assert not d.code.startswith("PC9"), d
    assert bool(result.files) == result.ok


def _gpus_per_node(pool: dict) -> int:
    return pool["gpu"]["count"]


def _gpus(pool: dict) -> int:
    low, high = pool["nodes"][0].split("[")[1].rstrip("]").split("-")
    return (int(high) - int(low) + 1) * pool["gpu"]["count"]


def _in_tier(pool: dict, tier: dict) -> bool:
    return pool["gpu"]["product"] in tier["products"]


def dump(policy: dict) -> str:
    out = io.StringIO()
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.dump(policy, out)
    return out.getvalue()


def compile_text(text: str) -> Compilation:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "policy.yaml"
        path.write_text(text, encoding="utf-8")
        return compile_file(path, "policy.yaml")


def canonical(objects) -> list[str]:
    return sorted(json.dumps(o, sort_keys=True) for o in objects)


@settings(PROFILE)
@given(valid_policies())
def test_valid_policies_compile_verify_and_read_back(policy) -> None:
    text = dump(policy)
    first = compile_text(text)
    errors = [f"{d.line}:{d.column} {d.code} {d.message}" for d in first.report.errors]
    assert first.ok and not errors, "\n".join(errors) + "\n" + text
    assert first.files
    reader = YAML(typ="safe", pure=True)
    for artifact in first.artifacts:
        if artifact.text is not None:
            continue
        data = first.files[artifact.path].data.decode()
        read_back = [doc for doc in reader.load_all(data) if doc is not None]
        assert canonical(read_back) == canonical(m.obj for m in artifact.manifests), artifact.path
    plan = json.loads(first.files["nodes/plan.json"].data)
    assert sorted(p["name"] for p in plan["pools"]) == sorted(p["name"] for p in policy["spec"]["nodePools"])
    second = compile_text(text)
    assert {k: v.data for k, v in second.files.items()} == {k: v.data for k, v in first.files.items()}


# --- mutations of valid policies ----------------------------------------------------------------------------------

REQUIRED = [
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("spec", "domain"),
    ("spec", "kubernetesVersion"),
    ("spec", "gpuTiers", 0, "name"),
    ("spec", "gpuTiers", 0, "products"),
    ("spec", "nodePools", 0, "usage"),
    ("spec", "nodePools", 0, "nodes"),
    ("spec", "nodePools", 0, "gpu", "count"),  # without its gpu block a pool is a valid CPU pool
    ("spec", "nodePools", 0, "gpu", "product"),
    ("spec", "tenants", 0, "namespaces"),
]
WRONG_TYPES = [
    (("spec", "nodePools", 0, "gpu", "count"), "8"),
    (("spec", "nodePools", 0, "gpu", "count"), 2.5),
    (("spec", "nodePools", 0, "nodes"), "gpu-1"),
    (("spec", "nodePools", 0, "rdma"), "yes"),
    (("spec", "gpuTiers"), {"name": "x"}),
    (("metadata", "name"), 123),
    (("spec", "kubernetesVersion"), 1.33),
    (("spec", "tenants", 0, "queue", "weight"), "2"),
    (("spec", "tenants", 0, "namespaces"), [["nested"]]),
    (("spec",), None),
]
NAMES = [
    ("spec", "nodePools", 0, "name"),
    ("spec", "gpuTiers", 0, "name"),
    ("spec", "tenants", 0, "name"),
    ("spec", "tenants", 0, "namespaces", 0),
    ("spec", "nodePools", 0, "nodes", 0),
    ("spec", "domain"),
    ("metadata", "name"),
]
REFERENCES = [
    ("spec", "workloads", 0, "tenant"),
    ("spec", "workloads", 0, "gpuTier"),
    ("spec", "workloads", 0, "priorityClass"),
    ("spec", "nodePools", 0, "gpu", "product"),
]
NAMED_LISTS = ["gpuTiers", "nodePools", "tenants", "workloads", "priorityClasses"]
MAPPINGS = [
    ("spec",),
    ("metadata",),
    ("spec", "nodePools", 0),
    ("spec", "nodePools", 0, "gpu"),
    ("spec", "tenants", 0),
    ("spec", "tenants", 0, "queue"),
    ("spec", "gpuTiers", 0),
    ("spec", "workloads", 0),
]


def _parent(policy: dict, path: tuple):
    node = policy
    for part in path[:-1]:
        node = node[part]
    return node


def _exists(policy: dict, path: tuple) -> bool:
    node = policy
    for part in path:
        found = part in node if isinstance(node, dict) else isinstance(part, int) and part < len(node)
        if not found:
            return False
        node = node[part]
    return True


@st.composite
def mutated_policies(draw) -> tuple[str, dict]:
    policy = copy.deepcopy(draw(valid_policies()))
    spec = policy["spec"]
    choices = ["drop", "type", "name", "duplicate", "unknown"]
    if spec["workloads"]:
        choices.append("reference")
    mutation = draw(st.sampled_from(choices))
    if mutation == "drop":
        path = draw(st.sampled_from([p for p in REQUIRED if _exists(policy, p)]))
        del _parent(policy, path)[path[-1]]
    elif mutation == "type":
        path, value = draw(st.sampled_from([(p, v) for p, v in WRONG_TYPES if _exists(policy, p)]))
        _parent(policy, path)[path[-1]] = value
    elif mutation == "name":
        path = draw(st.sampled_from(NAMES))
        bad = draw(st.sampled_from(["Upper", "under_score", "sp ace", "$(x)", "-lead", "trail-", "a" * 300, "é", ""]))
        _parent(policy, path)[path[-1]] = bad
    elif mutation == "reference":
        path = draw(st.sampled_from(REFERENCES))
        _parent(policy, path)[path[-1]] = "does-not-exist"
    elif mutation == "duplicate":
        name = draw(st.sampled_from([n for n in NAMED_LISTS if spec.get(n)]))
        items = spec[name]
        items.insert(draw(st.integers(0, len(items))), copy.deepcopy(draw(st.sampled_from(items))))
    else:
        path = draw(st.sampled_from([p for p in MAPPINGS if _exists(policy, p)]))
        target = policy
        for part in path:
            target = target[part]
        target[draw(st.sampled_from(["colour", "capabilty", "nodeSelector", "x-extra"]))] = "red"
    return mutation, policy


@settings(PROFILE)
@given(mutated_policies())
def test_mutated_policies_get_located_errors_and_never_raise(mutated) -> None:
    mutation, policy = mutated
    text = dump(policy)
    result = compile_text(text)
    assert result.report.errors, f"{mutation}: no error for\n{text}"
    assert not [d for d in result.report.diagnostics if d.code.startswith("PC9")], f"{mutation}: a policyc bug"
    lines = len(text.splitlines()) + 1  # YAML breaks lines at NEL and U+2028 too, as splitlines does
    for d in result.report.diagnostics:
        assert d.line is not None and d.column is not None, d
        assert 1 <= d.line <= lines and d.column >= 1, d
    assert not result.files

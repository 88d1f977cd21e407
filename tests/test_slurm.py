"""Slurm partitions from the pools (`nodePools[].slurm`): the slurm.conf and gres.conf lines, checked by Debian's
slurmctld 22.05 (the real parser: unknown keys and unknown nodes are fatal there), Slinky's NodeSets, and the checks.
"""

from __future__ import annotations

import getpass
import json
import os
import queue
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from policyc.commands.cli import main
from policyc.compiler import Compilation, compile_text
from policyc.gpu import slurm
from policyc.k8s.crd_schemas import crd_schema
from tests.conftest import POLICIES, require_tool

HYBRID = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata:
  name: hybrid
spec:
  kubernetesVersion: "1.33"
  domain: gpu.example.org
  gpuTiers:
    - name: a100
      products: [NVIDIA-A100-SXM4-80GB]
    - name: h100
      products: [NVIDIA-H100-80GB]
  nodePools:
    - name: train
      usage: training
      nodes: ["gpu-[1-20]"]                 # 160 GPUs: the tenant's quota, within Kubernetes' own capacity
      gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8}
      allocatable: {cpu: "128", memory: 1000Gi}
    - name: slurm-h100
      usage: training
      nodes: ["h100-[01-16]", "h100-18"]
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "95500m", memory: 2000Gi}
      slurm: {partition: batch, default: true, maxTime: "7-0", priorityClass: slurm-high-priority}
    - name: cpu-prep
      usage: training
      nodes: ["cpu-[001-008]"]
      allocatable: {cpu: "64", memory: 256Gi}
      slurm: {partition: prep, maxTime: "12:00:00"}
  priorityClasses:
    - {name: slurm-high-priority, value: 5000}
  tenants:
    - name: ml
      namespaces: [ml]
      queue: {guarantee: {gpu: 8}, capability: {gpu: 160}}   # what its quota holds (PC496)
      quota:
        requests: {gpu: 160}
        perPriorityClass:
          slurm-high-priority: {gpu: 64}
  workloads:
    - name: train-job
      type: training
      tenant: ml
      gpuTier: a100
      gpus: 8
"""

PREP = 'slurm: {partition: prep, maxTime: "12:00:00"}'
"""The cpu-prep pool's slurm in HYBRID."""
IN_BATCH = 'slurm: {partition: batch, default: true, maxTime: "7-00:00:00", priorityClass: slurm-high-priority}'
"""A slurm that agrees with slurm-h100's, for another pool."""
SHARED = "priorityClass: slurm-high-priority, shared: true}"

SLINKY = HYBRID.replace('  kubernetesVersion: "1.33"\n', '  kubernetesVersion: "1.33"\n  slurm: {operator: slinky}\n')

AI_PROD_POOL = """\
    - name: h100-slurm
      usage: training
      nodes: ["slurm-h100-[01-08]"]
      gpu: {product: NVIDIA-H100-80GB, count: 8, memory: 80Gi}
      allocatable: {cpu: "96", memory: 1000Gi}
      rdma: true
      slurm: {partition: gpu, default: true, maxTime: "7-00:00:00", priorityClass: slurm-high-priority}
"""
"""The Slurm partition pool proposed for policies/ai-prod.yaml (with the class and the quota below)."""
AI_PROD_CLASS = """\
    - name: slurm-high-priority
      value: 1500
      description: Slurm's batch jobs on the h100-slurm partition
"""
AI_PROD_QUOTA = "        objects: {pods: 2000, count/jobs.batch.volcano.sh: 100}\n"


def ai_prod_with_slurm() -> str:
    """policies/ai-prod.yaml with the proposed pool, class, and team-a's quota for the class (as it is once it has
    them)."""
    text = (POLICIES / "ai-prod.yaml").read_text()
    if "slurm:" in text:
        return text
    edits = (
        ("\n  priorityClasses:\n", "\n" + AI_PROD_POOL + "\n  priorityClasses:\n" + AI_PROD_CLASS),
        (
            "      priorityClasses: [production-training, development-training, low-priority-training]\n",
            "      priorityClasses: [production-training, development-training, low-priority-training, "
            "slurm-high-priority]\n",
        ),
        (AI_PROD_QUOTA, AI_PROD_QUOTA + "        perPriorityClass: {slurm-high-priority: {gpu: 64}}\n"),
    )
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def build(text: str) -> Compilation:
    result = compile_text(text, "policy.yaml")
    assert result.ok, [(d.code, d.message) for d in result.report.diagnostics]
    return result


def codes(text: str) -> list[str]:
    return [d.code for d in compile_text(text, "policy.yaml").report.diagnostics]


def lines(result: Compilation, path: str) -> list[str]:
    return [line for line in result.files[path].data.decode().splitlines() if not line.startswith("#")]


# --- the formats ---------------------------------------------------------------------------------------------


def test_host_lists_bracket_only_trailing_numbers_of_one_width() -> None:
    names = ["t4-01", "t4-02", "t4-03", "t4-05", "t4-spare-1", "gpu9", "gpu10", "gpu11", "n01", "n1", "x"]
    # sorted by (prefix, digits, first number); 9 and 10 differ in width, so are two brackets
    assert slurm.hostlist(names) == "gpu9,gpu[10-11],n1,n01,t4-[01-03,05],t4-spare-1,x"
    assert slurm.hostlist([f"h100-{i:02d}" for i in range(1, 17)]) == "h100-[01-16]"


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("10080", 10080),  # minutes
        ("90:30", 91),  # minutes:seconds, 30 s rounded up
        ("12:00:00", 720),  # hours:minutes:seconds
        ("7-0", 7 * 1440),  # days-hours
        ("2-12:30", 2 * 1440 + 12 * 60 + 30),  # days-hours:minutes = 3630
        ("7-00:00:00", 10080),
        ("UNLIMITED", None),
        ("INFINITE", None),
    ],
)
def test_time_limits(text: str, minutes: int | None) -> None:
    assert slurm.minutes(text) == minutes


def test_time_limits_are_written_as_days_hours_minutes_seconds() -> None:
    assert slurm.time_text(10080) == "7-00:00:00"
    assert slurm.time_text(91) == "0-01:31:00"
    assert slurm.time_text(None) == "UNLIMITED"


@pytest.mark.parametrize("text", ["7 days", "1-2-3", "0", "00:00", ":30", "unlimited", "7d", "1:2:3:4"])
def test_time_limits_slurm_does_not_read_are_refused(text: str) -> None:
    with pytest.raises(slurm.TimeError):
        slurm.minutes(text)


@pytest.mark.parametrize(
    ("product", "gres"),
    [
        ("NVIDIA-H100-80GB", "h100"),
        ("NVIDIA-H100-80GB-HBM3", "h100"),
        ("NVIDIA-A100-SXM4-80GB", "a100"),
        ("Tesla-T4", "t4"),
        ("NVIDIA-L40S", "l40s"),
        ("NVIDIA-RTX-A6000", "rtx"),
    ],
)
def test_gres_types_are_the_model_word(product: str, gres: str) -> None:
    assert slurm.gres_type(product) == gres
    # a substring of the name NVML autodetection gives the card: lower case, spaces (GFD's '-') as '_'
    assert gres in product.lower().replace("-", "_")


def test_priority_tiers_keep_the_classes_order_within_slurms_range() -> None:
    values = [-5, 0, 100, 1000, 65533, 65534, 1_000_000_000]
    tiers = [slurm.priority_tier(v) for v in values]
    assert tiers == [0, 0, 100, 1000, 65533, 65533, 65533]
    assert tiers == sorted(tiers)


# --- what is written -----------------------------------------------------------------------------------------


def test_slurm_conf_and_gres_conf_lines() -> None:
    result = build(HYBRID)
    assert lines(result, "slurm/slurm.conf") == [
        # 256Gi = 256 x 1024 MiB = 262144; a CPU-only pool has no Gres
        "NodeName=cpu-[001-008] CPUs=64 RealMemory=262144 Features=cpu-prep State=CLOUD",
        # 95500m -> 95 CPUs (rounded down); 2000Gi = 2048000 MiB; h100-17 is not in the pool
        "NodeName=h100-[01-16,18] CPUs=95 RealMemory=2048000 Gres=gpu:h100:8 Features=slurm-h100 State=CLOUD",
        # 7-0 = 7 days; PriorityTier = the class's value 5000
        "PartitionName=batch Nodes=h100-[01-16,18] Default=YES MaxTime=7-00:00:00 PriorityTier=5000 State=UP",
        "PartitionName=prep Nodes=cpu-[001-008] Default=NO MaxTime=0-12:00:00 State=UP",
    ]
    assert lines(result, "slurm/gres.conf") == ["NodeName=h100-[01-16,18] Name=gpu Type=h100 File=/dev/nvidia[0-7]"]
    assert "slinky/nodesets.yaml" not in result.files


def test_a_partition_of_several_pools_holds_all_their_nodes() -> None:
    text = HYBRID.replace(PREP, IN_BATCH)
    [part] = [line for line in lines(build(text), "slurm/slurm.conf") if line.startswith("PartitionName=")]
    assert part == (
        "PartitionName=batch Nodes=cpu-[001-008],h100-[01-16,18] Default=YES MaxTime=7-00:00:00 PriorityTier=5000 "
        "State=UP"
    )


def test_slurm_only_pools_are_tainted_and_their_agents_tolerate_it() -> None:
    result = build(HYBRID)
    plan = {p["name"]: p for p in json.loads(result.files["nodes/plan.json"].data)["pools"]}
    only = {"key": "gpu.example.org/slurm-only", "effect": "NoSchedule"}
    assert only in plan["slurm-h100"]["taints"] and only in plan["cpu-prep"]["taints"]
    assert only not in plan["train"]["taints"]
    assert (
        "- key: gpu.example.org/slurm-only\n  operator: Exists\n  effect: NoSchedule"
        in result.files["nodes/agent-tolerations.yaml"].data.decode()
    )
    shared = build(HYBRID.replace("priorityClass: slurm-high-priority}", SHARED))
    plan = {p["name"]: p for p in json.loads(shared.files["nodes/plan.json"].data)["pools"]}
    assert only not in plan["slurm-h100"]["taints"]


def test_no_slurm_pool_no_slurm_files() -> None:
    result = build((POLICIES / "minimal.yaml").read_text())
    assert not [path for path in result.files if path.startswith(("slurm/", "slinky/"))]
    assert result.cluster is not None and result.cluster.slurm is None


# --- the real slurmctld ----------------------------------------------------------------------------------------

STARTED = "Running as primary controller"
NOISE = (
    "Configured MailProg is invalid",  # no mail program in the test's container
    "mpi/pmix",  # Debian builds the PMIx plugin, whose library the test does not install
    "Couldn't load specified plugin name for mpi/pmix",
    "MPI: Cannot create context for mpi/pmix",
    "state file",  # a new StateSaveLocation: nothing to recover
    "NOTE: Trying backup state save file",
)
"""Errors slurmctld logs in any fresh test set-up, whatever its slurm.conf says."""


def require_slurmctld() -> None:
    require_tool("slurmctld", "apt-get install slurmctld")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurmctld(tmp_path: Path, fragment: str, gres: str | None = None, *, slinky: bool = False) -> tuple[bool, str]:
    """Start Debian's slurmctld on a slurm.conf that includes `fragment` (and on `gres` as gres.conf beside it):
    (accepted, its log). Accepted: it reads the configuration, logs no error but the set-up's `NOISE`, and runs as
    the controller; rejected: it exits (a `fatal:` line says why) or logs another error. It is a daemon: the test
    stops it once it runs, or after 8 s."""
    etc, state = tmp_path / "etc", tmp_path / "state"
    etc.mkdir(parents=True)
    state.mkdir()
    (etc / "policyc.conf").write_text(fragment)
    if gres is not None:
        (etc / "gres.conf").write_text(gres)
    wrapper = [
        "ClusterName=policyc",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={free_port()}",
        "AuthType=auth/none",  # no munge daemon in the test
        "CredType=cred/none",
        f"SlurmUser={getpass.getuser()}",
        f"StateSaveLocation={state}",
        f"SlurmdSpoolDir={tmp_path / 'spool'}",
        f"SlurmctldPidFile={tmp_path / 'slurmctld.pid'}",
        "SelectType=select/cons_tres",
        "GresTypes=gpu",
        *(["MaxNodeCount=1024"] if slinky else []),  # as Slinky's Controller writes: nodes register dynamically
        f"include {etc / 'policyc.conf'}",
    ]
    (etc / "slurm.conf").write_text("\n".join(wrapper) + "\n")
    proc = subprocess.Popen(
        ["slurmctld", "-D", "-i", "-f", str(etc / "slurm.conf")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"},
    )
    log: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=lambda: [*map(log.put, proc.stdout), log.put(None)], daemon=True).start()  # type: ignore[arg-type]
    seen: list[str] = []
    deadline = time.monotonic() + 8
    try:
        while time.monotonic() < deadline:
            try:
                line = log.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None or STARTED in line:
                seen.append(line or "")
                break
            seen.append(line)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    text = "".join(seen)
    errors = [x for x in seen if ("error:" in x or "fatal:" in x) and not any(n in x for n in NOISE)]
    return STARTED in text and not errors, text


def test_scontrol_expands_host_lists_to_the_names(tmp_path) -> None:
    """Slurm's own host list parser (`scontrol show hostnames`) reads back exactly the names."""
    require_slurmctld()
    names = [f"gpu{i}" for i in (1, 2, 3, 9, 10, 11, 99, 100)] + ["n1", "n01", "n001", "x", "rack1-node07", "a.b-3"]
    names += [f"t4-{i:02d}" for i in (1, 2, 3, 5, 7, 8)] + ["t4-spare-1", "h20-8", "h20-9", "h20-10"]
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=policyc\nSlurmctldHost=localhost\nAuthType=auth/none\n")
    out = subprocess.run(
        ["scontrol", "show", "hostnames", slurm.hostlist(names)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SLURM_CONF": str(conf)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(out.stdout.split()) == sorted(names)


def test_slurmctld_accepts_the_generated_files(tmp_path) -> None:
    require_slurmctld()
    result = build(HYBRID)
    accepted, log = slurmctld(
        tmp_path, result.files["slurm/slurm.conf"].data.decode(), result.files["slurm/gres.conf"].data.decode()
    )
    assert accepted, log


def test_slurmctld_rejects_an_unknown_key_and_an_unknown_node(tmp_path) -> None:
    require_slurmctld()
    result = build(HYBRID)
    conf, gres = result.files["slurm/slurm.conf"].data.decode(), result.files["slurm/gres.conf"].data.decode()
    typo = conf.replace("PartitionName=prep", "PartitionNme=prep")
    accepted, log = slurmctld(tmp_path / "typo", typo, gres)
    assert not accepted and "unrecognized key: PartitionNme" in log and "fatal:" in log
    ghost = conf.replace("Nodes=cpu-[001-008]", "Nodes=cpu-[001-009]")
    accepted, log = slurmctld(tmp_path / "ghost", ghost, gres)
    assert not accepted and "fatal: Invalid node names in partition prep" in log
    accepted, log = slurmctld(tmp_path / "gres", conf, gres.replace("Type=", "Tpye="))
    assert not accepted and "unrecognized key: Tpye" in log


def test_slurmctld_accepts_the_full_example_with_a_slurm_partition(tmp_path) -> None:
    require_slurmctld()
    result = build(ai_prod_with_slurm())
    assert lines(result, "slurm/slurm.conf") == [
        # 96 CPUs; 1000Gi = 1024000 MiB
        "NodeName=slurm-h100-[01-08] CPUs=96 RealMemory=1024000 Gres=gpu:h100:8 Features=h100-slurm State=CLOUD",
        "PartitionName=gpu Nodes=slurm-h100-[01-08] Default=YES MaxTime=7-00:00:00 PriorityTier=1500 State=UP",
    ]
    accepted, log = slurmctld(
        tmp_path, result.files["slurm/slurm.conf"].data.decode(), result.files["slurm/gres.conf"].data.decode()
    )
    assert accepted, log


# --- Slinky ----------------------------------------------------------------------------------------------------


def node_sets(result: Compilation) -> dict[str, dict]:
    return {
        m.obj["metadata"]["name"]: m.obj for a in result.artifacts for m in a.manifests if m.obj["kind"] == "NodeSet"
    }


def test_slinky_node_sets() -> None:
    result = build(SLINKY)
    assert not [path for path in result.files if path.startswith("slurm/")]
    sets = node_sets(result)
    assert sorted(sets) == ["batch", "prep"]
    batch = sets["batch"]
    assert batch["metadata"]["namespace"] == "slurm"
    # after its priority class (wave 0): Slinky's namespace is no tenant's here, so nothing else acts on its pods
    assert batch["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "1"
    spec = batch["spec"]
    assert spec["controllerRef"] == {"name": "slurm"}
    assert spec["scalingMode"] == "DaemonSet"
    assert spec["partition"] == {"enabled": True, "config": "Default=YES MaxTime=7-00:00:00 PriorityTier=5000 State=UP"}
    assert spec["extraConf"] == "Gres=gpu:h100:8"
    assert spec["slurmd"] == {"resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}}}
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {"gpu.example.org/node.pool": "slurm-h100"}
    assert pod["priorityClassName"] == "slurm-high-priority"
    assert pod["tolerations"] == [
        {"key": "gpu.example.org/node.usage", "operator": "Equal", "value": "training", "effect": "NoSchedule"},
        {"key": "gpu.example.org/slurm-only", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu.product", "operator": "Equal", "value": "NVIDIA-H100-80GB", "effect": "NoSchedule"},
    ]
    shared = node_sets(build(SLINKY.replace("priorityClass: slurm-high-priority}", SHARED)))["batch"]["spec"]
    # a shared pool's NodeSet starts with a pod on each of its 17 nodes, and can be scaled down
    assert (shared["scalingMode"], shared["replicas"]) == ("StatefulSet", 17)
    assert "replicas" not in spec
    prep = sets["prep"]["spec"]
    assert "slurmd" not in prep and "extraConf" not in prep and "priorityClassName" not in prep["template"]["spec"]
    schema = crd_schema("slinky.slurm.net/v1beta1", "NodeSet")
    assert schema is not None
    for obj in sets.values():
        assert not [e.message for e in Draft202012Validator(schema).iter_errors(obj)]
    assert "slinky/nodesets.yaml" in result.files["kustomization.yaml"].data.decode()


def test_slurmctld_accepts_the_partition_lines_slinky_writes(tmp_path) -> None:
    """Slinky writes `NodeSet=<name> Feature=<name>` and `PartitionName=<name> Nodes=<name> <partition.config>`."""
    require_slurmctld()
    sets = node_sets(build(SLINKY))
    fragment = "".join(f"NodeSet={n} Feature={n}\nPartitionName={n} Nodes={n} {s['spec']['partition']['config']}\n"
                       for n, s in sorted(sets.items()))  # fmt: skip
    accepted, log = slurmctld(tmp_path, fragment, slinky=True)
    assert accepted, log


def test_explain_names_the_policy_lines_of_a_node_set(tmp_path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(SLINKY)
    result = CliRunner().invoke(main, ["explain", str(policy), "--object", "NodeSet/batch"])
    assert result.exit_code == 0, result.output
    pool_line = SLINKY.splitlines().index("    - name: slurm-h100") + 1
    class_line = SLINKY.splitlines().index("    - {name: slurm-high-priority, value: 5000}") + 1
    slurm_line = SLINKY.splitlines().index("  slurm: {operator: slinky}") + 1
    [row] = result.stdout.strip().splitlines()
    target, places = row.split(" <- ")
    assert target == "slinky/nodesets.yaml: NodeSet slurm/batch"
    # spec.slurm, the pool, and the priority class its PriorityTier comes from, in file order
    assert places.split("; ") == [
        f"{policy}:{slurm_line}:10 'slurm'",
        f"{policy}:{pool_line}:7 'nodePools[1]'",
        f"{policy}:{class_line}:7 'priorityClasses[0]'",
    ]


# --- the checks ------------------------------------------------------------------------------------------------


def diagnostics(text: str) -> list:
    return compile_text(text, "policy.yaml").report.diagnostics


def test_unknown_priority_class_of_a_partition() -> None:
    [d] = diagnostics(HYBRID.replace("priorityClass: slurm-high-priority}", "priorityClass: slurm-hi-priority}"))
    assert d.code == "PC304" and d.path[-3:] == (1, "slurm", "priorityClass")
    assert d.hint == "did you mean 'slurm-high-priority'?"


def test_partition_settings_must_agree_and_the_hint_fixes_it() -> None:
    disagreeing = 'slurm: {partition: batch, maxTime: "12:00:00"}'
    text = HYBRID.replace(PREP, disagreeing)
    found = {(d.code, d.path[-1]) for d in diagnostics(text)}
    # the cpu pool (nodePools[2]) disagrees with slurm-h100 on default, maxTime and priorityClass
    assert found == {("PC460", "default"), ("PC460", "maxTime"), ("PC460", "priorityClass")}
    # the hint: write what slurm-h100 writes
    assert codes(text.replace(disagreeing, IN_BATCH)) == []


def test_one_default_partition() -> None:
    text = HYBRID.replace(PREP, "slurm: {partition: prep, default: true}")
    [d] = diagnostics(text)
    assert d.code == "PC461" and d.path[-4:] == ("nodePools", 2, "slurm", "default")


def test_a_slurm_pool_needs_its_allocatable() -> None:
    text = HYBRID.replace('      allocatable: {cpu: "64", memory: 256Gi}\n', "      allocatable: {cpu: 500m}\n")
    [d] = diagnostics(text)
    assert d.code == "PC462" and "cpu (at least 1" in d.message and "memory" in d.message


def test_a_quota_for_the_partitions_class_must_fit_its_gpus() -> None:
    # 17 nodes x 8 GPUs = 136 GPUs in partition batch: 137 is one too many, 136 fits
    text = HYBRID.replace("slurm-high-priority: {gpu: 64}", "slurm-high-priority: {gpu: 137}")
    [d] = diagnostics(text)
    assert d.code == "PC463" and "137 nvidia.com/gpu" in d.message and "has 136" in d.message
    assert d.hint == "lower it to at most 136, or add nodes to the partition"
    assert codes(text.replace("{gpu: 137}", "{gpu: 136}")) == []


TOLERATION = "      tolerations: [{key: gpu.example.org/slurm-only, operator: Exists}]\n"


def test_a_workload_that_tolerates_a_slurm_only_pool() -> None:
    text = HYBRID.replace(
        "      gpuTier: a100\n      gpus: 8\n",
        "      gpuTier: h100\n      gpus: 8\n" + TOLERATION,
    )
    [d] = diagnostics(text)
    assert d.code == "PC464" and d.path[-2:] == ("tolerations", 0)
    # without the toleration the template lands nowhere: the placement proof says so
    assert codes(text.replace(TOLERATION, "")) == ["PC504"]
    # following the hint: Kubernetes may use the pool, without the toleration (which, kept, is beyond the class's
    # grant: operator Exists on the Slurm-only key still reaches the Slurm-only pool 'cpu-prep')
    shared = text.replace("priorityClass: slurm-high-priority}", SHARED)
    assert codes(shared.replace(TOLERATION, "")) == ["PC467"]
    assert codes(shared) == ["PC509", "PC467"]


def test_mig_pools_are_not_described_to_slurm() -> None:
    text = HYBRID.replace(
        "      gpu: {product: NVIDIA-H100-80GB, count: 8}\n",
        '      gpu: {product: NVIDIA-H100-80GB, count: 8, mig: {devices: {"1g.10gb": 7}}}\n',
    )
    assert "PC465" in codes(text)


def test_priority_tiers_that_would_tie() -> None:
    text = HYBRID.replace(
        "    - {name: slurm-high-priority, value: 5000}\n",
        "    - {name: slurm-high-priority, value: 100000}\n    - {name: slurm-low, value: 70000}\n",
    ).replace(PREP, "slurm: {partition: prep, priorityClass: slurm-low}")
    [d] = diagnostics(text)
    assert d.code == "PC466" and "PriorityTier 65533" in d.message
    assert codes(text.replace("value: 70000", "value: 60000")) == []


def test_a_shared_pool_without_an_operator_warns() -> None:
    text = HYBRID.replace("priorityClass: slurm-high-priority}", SHARED)
    result = compile_text(text, "policy.yaml")
    assert result.ok and [d.code for d in result.report.warnings] == ["PC467"]
    # the hint: Slinky's slurmd pods request the GPUs from Kubernetes
    assert codes(SLINKY.replace("priorityClass: slurm-high-priority}", SHARED)) == []


SLURM_QUOTA = "        perPriorityClass: {slurm-high-priority: {gpu: 136}}\n"
SLURM_TENANT = (
    "    - name: slurm-ops\n      namespaces: [slurm]\n      quota:\n        requests: {gpu: 136}\n" + SLURM_QUOTA
)


def test_slinky_pods_in_a_tenants_namespace_must_fit_its_quota() -> None:
    # ml keeps 32 GPUs: with slurm-ops' 136 the quotas hold the cluster's 168 GPUs (4 x 8 + 17 x 8)
    ml_quota = "requests: {gpu: 160}\n        perPriorityClass:\n          slurm-high-priority: {gpu: 64}\n"
    text = SLINKY.replace(ml_quota, "requests: {gpu: 32}\n").replace("  workloads:\n", SLURM_TENANT + "  workloads:\n")
    text = text.replace("capability: {gpu: 160}", "capability: {gpu: 32}")  # the queue admits what the quota holds
    # batch's slurmd pods request 17 nodes x 8 = 136 GPUs, prep's none: within 136 and 136
    assert codes(text) == []
    tight = text.replace("{gpu: 136}", "{gpu: 100}")
    found = [(d.code, d.path[-2:]) for d in diagnostics(tight)]
    assert found == [("PC468", ("requests", "gpu")), ("PC468", ("slurm-high-priority", "gpu"))]
    # a quota of cpu: slurmd's pods state none, so a LimitRange must default it
    cpu = text.replace("        requests: {gpu: 136}\n", '        requests: {gpu: 136, cpu: "500"}\n')
    [d] = diagnostics(cpu)
    assert d.code == "PC468" and "requests.cpu" in d.message and d.path[-1] == "quota"
    # the hint: a limitRange with defaultRequest.cpu
    assert codes(cpu.replace(SLURM_QUOTA, SLURM_QUOTA + "      limitRange: {defaultRequest: {cpu: 500m}}\n")) == []
    classes = text.replace("      namespaces: [slurm]\n", "      namespaces: [slurm]\n      priorityClasses: "
                           "[slurm-high-priority]\n")  # fmt: skip
    [d] = diagnostics(classes)
    # partition prep names no class, and no class is globalDefault: its pods name none, which the tenant refuses
    assert d.code == "PC468" and "partition 'prep'" in d.message


def test_slinky_node_sets_in_a_tenants_namespace_come_after_what_admits_their_pods() -> None:
    """The slurmd pods are counted by the namespace's quotas, defaulted by its LimitRange and checked by the tenant's
    admission policy as they are created: all of those go first, in Argo CD's waves and in the kustomization."""
    text = SLINKY.replace("requests: {gpu: 160}\n        perPriorityClass:\n          slurm-high-priority: {gpu: 64}\n",
                          "requests: {gpu: 32}\n")  # fmt: skip
    tenant = SLURM_TENANT + "      limitRange: {defaultRequest: {cpu: 500m}}\n"
    result = build(text.replace("  workloads:\n", tenant + "  workloads:\n"))
    waves = {(m.obj["kind"], m.obj["metadata"].get("namespace"), m.obj["metadata"]["name"]):
             m.obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
             for a in result.artifacts if a.synced for m in a.manifests}  # fmt: skip
    # the namespace (0); its quotas, limit range and the tenant's policy binding (1, after the namespace and the
    # policy); the NodeSets (2)
    assert waves["Namespace", None, "slurm"] == "0"
    assert {waves[k] for k in waves if k[1] == "slurm" and k[0] in ("ResourceQuota", "LimitRange")} == {"1"}
    assert waves["ValidatingAdmissionPolicyBinding", None, "policyc-tenant-slurm-ops"] == "1"
    assert waves["NodeSet", "slurm", "batch"] == waves["NodeSet", "slurm", "prep"] == "2"
    listed = YAML(typ="safe").load(result.files["kustomization.yaml"].data)["resources"]
    assert listed.index("slinky/nodesets.yaml") > listed.index("tenants/slurm-ops.yaml")


def test_a_slinky_partition_is_one_pool() -> None:
    text = SLINKY.replace(PREP, IN_BATCH)
    [d] = diagnostics(text)
    assert d.code == "PC469" and d.path[-2:] == ("slurm", "partition")


@pytest.mark.parametrize(
    ("slurm", "rule"),
    [
        ('{partition: prep, maxTime: "7 days"}', "PC104"),
        ("{partition: default}", "PC104"),
        ("{partition: Batch}", "PC201"),
        ("{partition: prep, gresType: h100-80gb}", "PC104"),
    ],
)
def test_invalid_values(slurm: str, rule: str) -> None:
    assert rule in codes(HYBRID.replace(PREP, f"slurm: {slurm}"))

"""PC496: a namespace quota that holds fewer gangs than the queue admits. Figures worked out by hand, and ai-prod's
as a real Volcano recorded them (`ai-prod/scenario/team-a-capability-with-quota`, `...-no-quota`).

The pool of every policy below: 4 nodes x 8 H100, 96 cpu and 1000Gi each (32 GPUs in the cluster).
"""

from __future__ import annotations

import re
import time

import pytest

from policyc.checks.quota_queue import alone_by_queue, alone_by_quota, caps, gang, overflow
from policyc.commands.report import figures
from tests.conftest import POLICIES
from tests.volcano_recorded import recorded

BASE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: quota-queue}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  SCHEDULER
  gpuTiers: [{name: h100, products: [NVIDIA-H100-80GB]}]
  nodePools:
    - {name: train, usage: training, nodes: ["gpu-[1-4]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
  tenants:
    - {name: ml, namespaces: [ml], queue: {QUEUE}, quota: {QUOTA}}
  workloads:
WORKLOADS"""


def policy(queue: str, quota: str, *workloads: str, scheduler: str = "scheduler: {backend: volcano}") -> str:
    rows = "".join(f"    - {{type: training, tenant: ml, gpuTier: h100, {w}}}\n" for w in workloads)
    return (BASE.replace("SCHEDULER", scheduler).replace("QUEUE", queue).replace("QUOTA", quota)
            .replace("WORKLOADS", rows))  # fmt: skip


def pc496(result) -> list:
    return [d for d in result.report.diagnostics if d.code == "PC496"]


def test_a_quota_that_holds_fewer_gangs_than_the_queue_warns_with_both_ways_out(compile_text) -> None:
    # a gang: 2 pods x (4 GPUs, 100Gi) = 8 GPUs, 200Gi. The queue: 24 / 8 = 3 gangs; the quota: 500 / 200 = 2.
    text = policy("capability: {gpu: 24}", "requests: {memory: 500Gi}",
                  "name: job, gpus: 4, replicas: 2, kind: VolcanoJob, cpu: '8', memory: 100Gi")  # fmt: skip
    result = compile_text(text)
    [d] = pc496(result)
    assert d.path[-3:] == ("quota", "requests", "memory")
    assert "admits 3 gangs of job at once (queue.capability.gpu 24, 8 each)" in d.message
    assert "holds 2 (quota.requests.memory 500Gi, 200Gi each)" in d.message
    assert "Volcano admits 3 (24 nvidia.com/gpu, 600Gi requests.memory)" in d.message
    # raise the quota to 3 x 200Gi, or lower the capability to 2 x 8 (3 gangs, 24, overflow)
    assert d.hint == ("raise quota.requests.memory to 600Gi (what the gangs the queue admits take at most), or lower "
                      "queue.capability.gpu to 16 (anything below 24) if the quota is the limit you mean")  # fmt: skip
    assert not pc496(compile_text(text.replace("memory: 500Gi", "memory: 600Gi")))
    assert not pc496(compile_text(text.replace("gpu: 24", "gpu: 16")))
    assert not pc496(compile_text(text.replace("gpu: 24", "gpu: 23")))  # anything below 24


def test_gangs_that_fit_alone_can_overflow_together(compile_text) -> None:
    # big: 6 GPUs, 600Gi; small: 4 GPUs, 400Gi. The queue's 10 GPUs admit 1 big, or 2 small, or 1 of each (10);
    # the quota's 900Gi holds 1 big (600) or 2 small (800), not 1 of each (1000).
    text = policy("capability: {gpu: 10}", "requests: {memory: 900Gi}",
                  "name: big, gpus: 6, kind: VolcanoJob, cpu: '8', memory: 600Gi",
                  "name: small, gpus: 4, kind: VolcanoJob, cpu: '8', memory: 400Gi")  # fmt: skip
    result = compile_text(text)
    ml = result.cluster.tenants[0]
    o = overflow(result.cluster, ml, "ml")
    assert o is not None and [g.workload.name for g in o.gangs] == ["big", "small"]
    assert o.first == (1, 1) and o.below == 8  # 2 small take 8 GPUs, below the 10 of the first overflow
    assert {key[1]: v for key, v in o.worst.items()} == {"requests.memory": 1000 * 2**30}  # 1000Gi, in bytes
    for g, queue, quota in zip(o.gangs, (1, 2), (1, 2), strict=True):
        assert alone_by_queue(g, o.caps)[0] == queue and alone_by_quota(g)[0] == quota
    [d] = pc496(result)
    assert "Volcano admits 1 of big and 1 of small (10 nvidia.com/gpu, 1000Gi requests.memory)" in d.message


def test_the_queue_counts_the_gang_the_quota_every_pod(compile_text) -> None:
    # 4 pods x (8 GPUs, 100Gi), a gang of 2: Volcano's queue counts 2 x 8 = 16 GPUs, so 32 / 16 = 2 jobs at once;
    # each creates all 4 pods, 400Gi: a quota of 700Gi holds 1. Kueue counts all 4 pods: 32 / 32 = 1, held.
    job = "name: job, gpus: 8, replicas: 4, minMember: 2, kind: KIND, cpu: '8', memory: 100Gi"
    volcano = policy("capability: {gpu: 32}", "requests: {memory: 700Gi}", job.replace("KIND", "VolcanoJob"))
    g = gang(compile_text(volcano).cluster, compile_text(volcano).cluster.workloads[0])
    assert g is not None and str(g.queue["nvidia.com/gpu"]) == "16"
    assert [str(u.need) for u in g.quota.values()] == ["400Gi"]
    assert len(pc496(compile_text(volcano))) == 1
    kueue = policy("capability: {gpu: 32}", "requests: {memory: 700Gi}", job.replace("KIND", "Job"),
                   scheduler="scheduler: {backend: kueue}")  # fmt: skip
    assert not pc496(compile_text(kueue))
    assert len(pc496(compile_text(kueue.replace("memory: 700Gi", "memory: 300Gi")))) == 0  # one job alone: PC507


def test_kinds_whose_pods_exist_before_the_queue_admits_them_are_not_counted(compile_text) -> None:
    # a Deployment's pods (and, under KAI, every kind's) are created at once: the quota refuses them before any
    # queue admits them, so no admitted gang is cut short
    deployment = policy("capability: {gpu: 24}", "requests: {memory: 500Gi}",
                        "name: job, gpus: 4, replicas: 2, kind: Deployment, cpu: '8', memory: 100Gi")  # fmt: skip
    assert not pc496(compile_text(deployment))
    kai = policy("capability: {gpu: 24}", "requests: {memory: 500Gi}",
                 "name: job, gpus: 4, replicas: 2, kind: Job, cpu: '8', memory: 100Gi",
                 scheduler="scheduler: {backend: kai}")  # fmt: skip
    assert not pc496(compile_text(kai))


def test_a_queue_without_a_capability_admits_what_the_cluster_holds(compile_text) -> None:
    # 1 pod x 8 GPUs: the cluster's 32 GPUs admit 4; a quota of 16 GPUs holds 2
    text = policy("guarantee: {gpu: 8}", "requests: {gpu: 16}", "name: job, gpus: 8, kind: VolcanoJob")
    [d] = pc496(compile_text(text))
    assert "(the cluster's 32 nvidia.com/gpu: no queue caps it, 8 each)" in d.message
    assert d.hint.endswith("or set queue.capability.gpu: 16 (anything below 24) if the quota is the limit you mean")
    assert not pc496(compile_text(text.replace("guarantee: {gpu: 8}", "guarantee: {gpu: 8}, capability: {gpu: 16}")))


def test_no_capability_below_the_queues_share_is_offered(compile_text) -> None:
    # the safe capability would be 16, below the guarantee (deserved) of 24, which Volcano's webhook refuses
    text = policy("guarantee: {gpu: 24}, capability: {gpu: 24}", "requests: {memory: 500Gi}",
                  "name: job, gpus: 4, replicas: 2, kind: VolcanoJob, cpu: '8', memory: 100Gi")  # fmt: skip
    [d] = pc496(compile_text(text))
    assert d.hint == "raise quota.requests.memory to 600Gi (what the gangs the queue admits take at most)"


def test_a_priority_class_quota_counts_its_pods(compile_text) -> None:
    # the class's quota holds 8 / 8 = 1 gang of the 3 the queue admits (24 / 8)
    text = policy("capability: {gpu: 24}", "requests: {gpu: 32}, perPriorityClass: {hi: {gpu: 8}}",
                  "name: job, gpus: 8, kind: VolcanoJob, priorityClass: hi")  # fmt: skip
    text = text.replace("  tenants:", "  priorityClasses: [{name: hi, value: 100}]\n  tenants:")
    [d] = pc496(compile_text(text))
    assert d.path[-4:] == ("quota", "perPriorityClass", "hi", "gpu")
    assert d.hint.startswith("raise quota.perPriorityClass.hi.gpu to 24")


def test_too_many_mixes_are_tried_one_workload_at_a_time(compile_text) -> None:
    # four workloads of 1-GPU gangs under a capability of 100: 101^4 mixes; each workload alone: 100 by queue, 50
    # by the quota's 50 GPUs
    rows = [f"name: w{i}, gpus: 1, kind: VolcanoJob, cpu: '1', memory: 1Gi" for i in range(4)]
    text = policy("capability: {gpu: 100}", "requests: {gpu: 50}", *rows).replace('["gpu-[1-4]"]', '["gpu-[1-16]"]')
    start = time.perf_counter()
    [d] = pc496(compile_text(text))
    assert time.perf_counter() - start < 5
    assert "tried alone" in d.message and d.hint.startswith("raise quota.requests.gpu to 100")


# --- the recorded cases -----------------------------------------------------------------------------------------


AI_PROD = (POLICIES / "ai-prod.yaml").read_text(encoding="utf-8")
SHIPPED = 'requests: {cpu: "1500", memory: 16000Gi, gpu: 160}'


def test_ai_prods_recorded_figures_are_the_checks() -> None:
    """As recorded: 6 copies of llm-pretraining in ai-team-a. The queue let 5 leave Pending, the quota let 3 create
    all their pods; with no quota, 5 ran. The check's figures for the recorded quota are those."""
    import policyc

    case = recorded("ai-prod/scenario/team-a-capability-with-quota")
    jobs = case["observed"]["jobs"]
    admitted = [j for j in jobs if j["podGroup"]["phase"] != "Pending"]
    whole = [j for j in jobs if j["podsCreated"] == j["podGroup"]["minMember"]]
    assert (len(jobs), len(admitted), len(whole)) == (6, 5, 3)
    limited = re.search(r"limited: requests\.memory=(\S+)", case["observed"]["quotaRefusal"]["message"]).group(1)
    assert limited == "12000Gi"
    free = recorded("ai-prod/scenario/team-a-capability-no-quota")["observed"]["jobs"]
    assert sum(j["podGroup"]["phase"] == "Running" for j in free) == len(admitted)

    assert SHIPPED in AI_PROD
    comp = policyc.compile(AI_PROD.replace(SHIPPED, SHIPPED.replace("16000Gi", limited)), name="ai-prod.yaml")
    w = next(w for w in comp.cluster.workloads if w.name == "llm-pretraining")
    g = gang(comp.cluster, w)
    assert g is not None
    assert alone_by_queue(g, caps(comp.cluster, w))[0] == len(admitted)
    assert alone_by_quota(g)[0] == len(whole)
    [d] = [d for d in comp.report.diagnostics if d.code == "PC496"]
    assert "admits 5 gangs of llm-pretraining" in d.message and "holds 3 (quota.requests.memory 12000Gi" in d.message
    row = next(r for r in figures(comp.cluster).workloads if r.name == "llm-pretraining")
    assert row.gangs == "quota: 3 (requests.memory); queue 5 (nvidia.com/gpu)"


@pytest.mark.parametrize("name", ["ai-prod", "ai-prod-kueue"])
def test_the_shipped_examples_quotas_hold_what_their_queues_admit(name: str) -> None:
    import policyc

    comp = policyc.compile((POLICIES / f"{name}.yaml").read_text(encoding="utf-8"), name=f"{name}.yaml")
    assert not [d for d in comp.report.diagnostics if d.code == "PC496"]
    row = next(r for r in figures(comp.cluster).workloads if r.name == "llm-pretraining")
    assert row.gangs == "queue: 5 (nvidia.com/gpu); quota 5 (limits.memory)"  # 160 / 32; 16000Gi / 3200Gi


def test_each_backend_says_which_of_its_kinds_wait_for_the_queue() -> None:
    from policyc.registry import SCHEDULERS, settings

    for name in SCHEDULERS:
        waits = settings(name).PODS_AFTER_ADMISSION
        assert set(waits) <= set(settings(name).WORKLOAD_KINDS) and set(waits.values()) <= {"gang", "all"}, name
    assert settings("volcano").PODS_AFTER_ADMISSION == {"VolcanoJob": "gang", "PyTorchJob": "gang"}

"""Preemption under the emitted Volcano conf, as a real Volcano did it (the vectors' scenarios, cited by id), and
PC699, which warns where a tenant's higher class would need it in a full queue.

- preempt: a job whose queue is full is held before enqueue and never preempts (`minimal/scenario/preempt-lower`,
  `minimal-preempt/scenario/preempt-lower-4gpu`);
- preemptionPolicy Never: held the same (`minimal-preempt/scenario/preempt-never-4gpu`);
- reclaim: took a one-pod job's share back from another queue (`synth-hier/scenario/solo-reclaims-one-pod`), never a
  2-pod gang's (`synth-hier/scenario/solo-reclaims-under-deserved`).
"""

from __future__ import annotations

import yaml

import policyc
from policyc.backends.volcano.backend import scheduler_conf
from tests.conftest import POLICIES
from tests.volcano_recorded import recorded, trees

MINIMAL = (POLICIES / "minimal.yaml").read_text(encoding="utf-8")
HELD = "queue resource quota insufficient"


def _classes_and_jobs(case: dict) -> str:
    """minimal.yaml with the scenario's priority classes, and a workload at each for its tenant (in place of
    train-job)."""
    classes = "".join(
        f"    - {{name: {c['name']}, value: {c['value']}"
        + (f", preemptionPolicy: {c['preemptionPolicy']}" if "preemptionPolicy" in c else "")
        + "}\n"
        for c in case["input"]["priorityClasses"]
    )
    jobs = "".join(
        f"    - {{name: at-{c['name']}, type: training, tenant: ml, gpuTier: a100, gpus: 8, "
        f"priorityClass: {c['name']}}}\n"
        for c in case["input"]["priorityClasses"]
    )
    head = MINIMAL[: MINIMAL.index("  workloads:\n")]
    return head.replace("  tenants:\n", "  priorityClasses:\n" + classes + "  tenants:\n") + "  workloads:\n" + jobs


def _pc699(text: str) -> list:
    return [d for d in policyc.compile(text, name="minimal.yaml").report.diagnostics if d.code == "PC699"]


def _held(job: dict) -> bool:
    """A job the queue never admitted: its PodGroup still Pending, none of its pods created."""
    return job["podGroup"]["phase"] == "Pending" and job["podsCreated"] == 0


def test_the_vectors_ran_the_conf_policyc_emits() -> None:
    comp = policyc.compile(MINIMAL, name="minimal.yaml")
    for case_id in ("minimal/scenario/preempt-lower", "minimal-preempt/scenario/preempt-lower-4gpu"):
        tree = recorded(case_id)["tree"]
        assert trees()[tree]["policy"].endswith("/policies/minimal.yaml"), tree
        ran = trees()[tree]["steps"]["scheduler-conf"]
        assert ran["loaded"] and yaml.safe_load(ran["conf"]) == scheduler_conf(comp.cluster), tree


def test_a_higher_class_in_a_full_queue_is_held_and_preempts_nothing() -> None:
    for case_id in ("minimal/scenario/preempt-lower", "minimal-preempt/scenario/preempt-lower-4gpu"):
        case = recorded(case_id)
        [high] = case["observed"]["jobs"]
        low = case["observed"]["lowJobsAfter"]
        assert _held(high), case_id
        # the four priority-10 jobs run on, every pod still bound: nothing was evicted
        assert len(low) == 4 and all(j["jobPhase"] == "Running" and j["podsBound"] == 1 for j in low), case_id
        assert not [e for e in case["observed"]["events"] if e.get("reason") == "Evict"], case_id
        [pc699] = _pc699(_classes_and_jobs(case))
        assert "held before enqueue" in pc699.message and pc699.path[-1] == "priorityClass"
    # 4 GPUs of the priority-1000 job: within the overcommit plugin's slack, still refused by the queue
    four = recorded("minimal-preempt/scenario/preempt-lower-4gpu")["observed"]["jobs"][0]
    assert any(e["message"].startswith(HELD) for e in four["events"])


def test_a_never_class_is_held_alike_and_policyc_does_not_warn() -> None:
    never = recorded("minimal-preempt/scenario/preempt-never-4gpu")
    lower = recorded("minimal-preempt/scenario/preempt-lower-4gpu")
    assert any(c.get("preemptionPolicy") == "Never" for c in never["input"]["priorityClasses"])
    for case in (never, lower):
        [high] = case["observed"]["jobs"]
        assert _held(high) and any(e["message"].startswith(HELD) for e in high["events"])
        assert all(j["jobPhase"] == "Running" for j in case["observed"]["lowJobsAfter"])
    assert _pc699(_classes_and_jobs(never)) == []
    # following PC699's hint (Never on the higher class) makes it go away
    text = _classes_and_jobs(lower).replace("value: 1000, preemptionPolicy: PreemptLowerPriority",
                                            "value: 1000, preemptionPolicy: Never")  # fmt: skip
    assert _pc699(text) == []


def test_reclaim_took_back_a_one_pod_jobs_share_never_a_gangs() -> None:
    one = recorded("synth-hier/scenario/solo-reclaims-one-pod")["observed"]
    [single] = one["jobs"]
    assert single["jobPhase"] == "Running" and single["podsBound"] == 1
    assert {(e["reason"], e["message"]) for e in one["events"]} >= {("Evict", "reclaim")}
    # the victim was one pod of alpha's 2-pod gang, which is left with 1
    a1 = next(j for j in one["alphaBetaAfter"] if j["job"] == "alpha/a-1")
    assert a1["podsBound"] == 1 and a1["podGroup"]["minMember"] == 2

    gangs = recorded("synth-hier/scenario/solo-reclaims-under-deserved")["observed"]
    s2 = next(j for j in gangs["jobs"] if j["job"] == "solo/s-2")
    assert s2["podGroup"]["minMember"] == 2 and s2["podsCreated"] == 2 and s2["podsBound"] == 0
    assert any("Try to reclaim" in line for line in gangs["schedulerLog"])
    # reclaim tried a victim, but never completed: alpha's gangs kept every pod
    a1 = next(j for j in gangs["alphaBetaAfter"] if j["job"] == "alpha/a-1")
    assert a1["podsBound"] == 2
    [pc699] = _pc699(_classes_and_jobs(recorded("minimal/scenario/preempt-lower")))
    assert "for a one-pod job only: never for a gang" in pc699.hint


def test_without_enqueue_or_preempt_there_is_nothing_to_warn_of() -> None:
    text = _classes_and_jobs(recorded("minimal/scenario/preempt-lower"))
    assert len(_pc699(text)) == 1
    for actions in ("[allocate, preempt, reclaim, backfill]", "[enqueue, allocate, reclaim, backfill]"):
        assert _pc699(text.replace("  tenants:\n", f"  scheduler: {{actions: {actions}}}\n  tenants:\n")) == []

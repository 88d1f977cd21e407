"""policyc's Volcano model against what the real Volcano did (`tests.backends.volcano.vectors`): the scheduler
configuration it loaded, where each emitted template's pods went and the gang its PodGroup got, and which jobs of
each multi-job scenario ran, waited (and why) or lost pods to reclaim and preemption
(`policyc.backends.volcano.capacity`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from policyc.backends import workloads
from policyc.backends.volcano import capacity
from policyc.backends.volcano.backend import CONFIG_KEY, CONFIGMAP_NAME
from policyc.backends.volcano.conf.check import check_actions, check_conf
from policyc.codes import Severity, rule
from policyc.proof.placement import placement_of
from tests.backends.volcano import vectors
from tests.conftest import missing_shared_data


def _cases(kind: str) -> list[Any]:
    found = vectors.cases(kind)
    return [pytest.param(c, id=c["id"]) for c in found] or [pytest.param(None, id="no-vectors")]


def _need(case: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if case is None:
        missing_shared_data(vectors.directory())
    return case


def test_every_case_is_of_a_known_kind():
    """A case of a kind this file does not judge would go unjudged: it must fail here instead."""
    loaded = vectors.load()
    if loaded is None:
        missing_shared_data(vectors.directory())
    assert {c["kind"] for c in loaded.cases} <= set(vectors.KINDS)


# ---------------------------------------------------------------------------------------------------------------
# scheduler-conf: what the scheduler loaded is what the strict model accepts


def _conf_findings(conf_text: str) -> list[Any]:
    conf = vectors.parse_yaml(conf_text)
    return [*check_actions(conf.get("actions", "")), *check_conf(conf)]


@pytest.mark.parametrize("case", _cases("scheduler-conf"))
def test_scheduler_conf(case):
    """A conf the scheduler loaded, policyc's strict model accepts (it was policyc's own); one it refused, the model
    refuses too."""
    case = _need(case)
    observed = case["observed"]
    conf = case["input"].get("conf") or vectors.load().trees[case["tree"]]["steps"]["scheduler-conf"]["conf"]
    findings = _conf_findings(conf)
    if observed["loaded"]:
        assert findings == []
    else:
        errors = [f for f in findings if rule(f.rule).severity == Severity.ERROR]
        assert errors, (observed.get("message"), observed.get("errorLines"))
    # what policyc emits for the tree today passes the same model
    texts = [
        cm["data"]["volcano-scheduler.conf"]
        for cm in vectors.emitted(case["tree"], "ConfigMap")
        if "volcano-scheduler.conf" in (cm.get("data") or {})
    ]
    assert texts, "the tree emits no volcano-scheduler.conf"
    assert all(_conf_findings(text) == [] for text in texts)


# ---------------------------------------------------------------------------------------------------------------
# scheduling: one template, as emitted


def _template_object(case: Mapping[str, Any]) -> Mapping[str, Any]:
    return case["input"].get("job") or case["input"]["object"]


def _observed_pools(case: Mapping[str, Any]) -> set[str]:
    observed = case["observed"]
    if "outcome" in observed:
        return {p["pool"] for p in observed["outcome"]["pods"].values() if p.get("pool")}
    return set(observed["pools"])


@pytest.mark.parametrize("case", _cases("scheduling"))
def test_template_lands_where_the_placement_model_admits(case):
    case = _need(case)
    obj = _template_object(case)
    compilation = vectors.compiled(case["tree"])
    namespace = obj["metadata"].get("namespace", "")
    pools = _observed_pools(case)
    assert pools, "no pod of the template was bound"
    for role, _, template in workloads.pod_templates(compilation.backend.KINDS, obj):
        pod = {**template, "metadata": {**(template.get("metadata") or {}), "namespace": namespace}}
        admitted = {target for target, ok, _ in placement_of(compilation.cluster, pod) if ok}
        assert pools <= admitted, f"{role}: the pods went to {sorted(pools - admitted)}, which the model refuses"


@pytest.mark.parametrize("case", _cases("scheduling"))
def test_template_gang_is_what_policyc_writes(case):
    """The PodGroup's minMember is the gang policyc writes: a Volcano Job's minAvailable, 1 for the pods of a
    Deployment or batch Job (the controller makes one PodGroup per owner)."""
    case = _need(case)
    obj = _template_object(case)
    observed = case["observed"]
    written = vectors.emitted(case["tree"], obj["kind"])
    ours = next((o for o in written if o["metadata"]["name"] == obj["metadata"]["name"]), None)
    assert ours is not None, f"policyc no longer emits {obj['kind']} {obj['metadata']['name']} for {case['tree']}"
    kinds = vectors.compiled(case["tree"]).backend.KINDS
    pods = [(role, replicas, t["spec"]) for role, replicas, t in workloads.pod_templates(kinds, obj)]
    assert pods == [(role, replicas, t["spec"]) for role, replicas, t in workloads.pod_templates(kinds, ours)], (
        "the recorded template's pods are no longer what policyc emits"
    )
    if "outcome" in observed:
        assert observed["outcome"]["podGroup"]["minMember"] == ours["spec"]["minAvailable"]
        # the job webhook keeps what policyc writes beside the tasks (it adds maxRetry); the job is a template,
        # which Argo CD does not apply, so nothing it adds can put an application out of sync
        written = {k: v for k, v in ours["spec"].items() if k != "tasks"}
        assert {k: observed["mutatedSpec"].get(k) for k in written} == written
        artifact = next(a for a in vectors.compiled(case["tree"]).artifacts for m in a.manifests if m.obj is ours)
        assert artifact.template and not artifact.synced
    else:
        assert {g["minMember"] for g in observed["podGroups"]} == {1}


# ---------------------------------------------------------------------------------------------------------------
# scheduling-scenario: the capacity model


def _scenarios(tree: str) -> list[Mapping[str, Any]]:
    return [c for c in vectors.load().of_kind("scheduling-scenario") if c["tree"] == tree]


def _submitted(case: Mapping[str, Any]) -> list[str]:
    return [f"{j['metadata']['namespace']}/{j['metadata']['name']}" for j in case["input"]["jobsInOrder"]]


def _after(case: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The records of earlier jobs the case shows after it ran (`...After` lists)."""
    return [r for key, value in sorted(case["observed"].items()) if key.endswith("After") for r in value]


def _evicted_pods(case: Mapping[str, Any]) -> list[str]:
    """`namespace/pod` of every pod the case's events say was evicted."""
    return sorted(
        {
            e["object"].removeprefix("Pod/")
            for e in case["observed"].get("events") or ()
            if e.get("reason") == "Evict" and e["object"].startswith("Pod/")
        }
    )


def _continues(case: Mapping[str, Any]) -> bool:
    """Whether the case ran on what earlier steps left (it says so, or shows jobs it did not submit)."""
    return "before" in case["input"] or any(r["job"] not in _submitted(case) for r in _after(case))


_ASSIGNED = re.compile(r"Successfully assigned (\S+) to (\S+)")


def _existing(record: Mapping[str, Any], evicted: Iterable[str], job: capacity.Job | None) -> capacity.Existing:
    """A job as it was before the case: its pods where its record shows them (a pod the case evicted back on the node
    its events say it was assigned to). `job`: the job as a loaded case submitted it; else it is known only by its
    record, and each pod asks its gang's minResources / minMember, in its class's default priority, with no recorded
    template (a pod of it that lost its node cannot be placed again by the model)."""
    group = record["podGroup"]
    namespace, name = record["job"].split("/")
    size = group["minMember"]
    assigned = {m[1]: m[2] for e in record.get("events") or () if (m := _ASSIGNED.search(e.get("message", "")))}
    nodes = []
    for pod_name, pod in sorted((record.get("pods") or {}).items()):
        node = pod.get("node")
        if node is None and f"{namespace}/{pod_name}" in evicted:
            node = assigned.get(f"{namespace}/{pod_name}")
        nodes.append(node)
    if job is None:
        per_pod = {n: a / size for n, a in capacity.resources(group["minResources"]).items()}
        pods = tuple(capacity.Pod(per_pod, {}, {}, None) for _ in range(max(len(nodes), size)))
        job = capacity.Job(namespace, name, group["queue"], size, pods)
    phase = capacity.RUNNING if sum(n is not None for n in nodes) >= size else group["phase"]
    return capacity.Existing(job, tuple(nodes), phase)


def _before(case: Mapping[str, Any]) -> list[capacity.Existing]:
    """What was on the cluster when the case began. Scenarios of a tree ran one after another on one cluster; one
    that continues (`_continues`) starts from
    - the jobs of the tree's records that no loaded case submitted (made by a step the vectors hold back), as first
      recorded;
    - the jobs earlier cases of the tree show (submitted, or in their `...After` lists) as they ended, those that held
      pods: a job still waiting is taken as withdrawn unless the case lists it;
    - the jobs its own `...After` lists name, as they were before it (evictions undone).
    Any other case starts on an empty cluster."""
    if not _continues(case):
        return []
    scenarios = _scenarios(case["tree"])
    submitted_anywhere = {k for c in scenarios for k in _submitted(c)}
    records: dict[str, Mapping[str, Any]] = {}
    for c in scenarios:
        for r in _after(c):
            if r["job"] not in submitted_anywhere:
                records.setdefault(r["job"], r)
    for c in scenarios[: scenarios.index(case)]:
        for r in [*c["observed"]["jobs"], *_after(c)]:
            records[r["job"]] = r
            if not r.get("podsBound"):
                records.pop(r["job"])
    evicted = _evicted_pods(case)
    for r in _after(case):
        if r["job"] not in _submitted(case):
            records[r["job"]] = r
    specs = {job.key: job for c in scenarios for job in _jobs(c)}
    return [_existing(r, evicted, specs.get(key)) for key, r in records.items() if key not in _submitted(case)]


def _jobs(case: Mapping[str, Any]) -> list[capacity.Job]:
    return [capacity.Job.from_object(j) for j in case["input"]["jobsInOrder"]]


def _cluster(case: Mapping[str, Any]) -> capacity.Cluster:
    """The tree's nodes with what policyc emits for it applied, under the scheduler conf the case ran with, and the
    case's own priority classes."""
    tree = case["tree"]
    conf = vectors.load().trees[tree]["steps"]["scheduler-conf"]["conf"]
    configmap = {"kind": "ConfigMap", "metadata": {"name": CONFIGMAP_NAME}, "data": {CONFIG_KEY: conf}}
    classes = [
        {"kind": "PriorityClass", "metadata": {"name": c["name"]}, **c}
        for c in case["input"].get("priorityClasses", ())
    ]
    objects = [
        o
        for a in vectors.compiled(tree).artifacts
        if not a.template
        for m in a.manifests
        for o in [m.obj]
        if o.get("kind") != "ConfigMap"
    ]
    nodes = [capacity.Node.from_object(n) for n in vectors.node_objects(tree)]
    return capacity.Cluster.from_objects(nodes, [*objects, configmap, *classes])


def _refusal(record: Mapping[str, Any]) -> str | None:
    """The enqueue refusal the job's PodGroup events repeat most, if any."""
    refusals = [
        e
        for e in record.get("events") or ()
        if e["message"].startswith((capacity.OVERUSED, capacity.QUEUE_INSUFFICIENT))
    ]
    return max(refusals, key=lambda e: e.get("count", 1))["message"] if refusals else None


@pytest.mark.parametrize("case", _cases("scheduling-scenario"))
def test_capacity_model_predicts_the_scenario(case):
    case = _need(case)
    outcome = capacity.simulate(_cluster(case), _jobs(case), _before(case))
    evicted = _evicted_pods(case)
    seen: dict[str, dict[str, Any]] = {}
    for record in [*case["observed"]["jobs"], *_after(case)]:
        model = outcome[record["job"]]
        namespace = record["job"].split("/")[0]
        fact = {
            "phase": model.phase,
            "created": model.created,
            "bound": model.bound,
            "evicted": model.evicted,
        }
        real = {
            "phase": record["podGroup"]["phase"],
            "created": record["podsCreated"],
            "bound": record["podsBound"],
            "evicted": sum(f"{namespace}/{pod}" in evicted for pod in record.get("pods") or {}),
        }
        # a job's events tell why enqueue refused it while the case ran only for a job the case submitted
        if record["job"] in _submitted(case) and model.phase == capacity.PENDING and (why := _refusal(record)):
            fact["held"], real["held"] = model.held, why
        seen[record["job"]] = {"model": fact, "observed": real}
    disagree = {job: v for job, v in seen.items() if v["model"] != v["observed"]}
    assert not disagree, disagree
    # nothing else was evicted
    assert sum(o.evicted for o in outcome.values()) == len(evicted), {k: o for k, o in outcome.items() if o.evicted}


@pytest.mark.parametrize("tree", sorted((vectors.load() or vectors.Vectors({}, ())).trees) or [None])
def test_nodes_of_a_policy_are_the_nodes_its_node_script_made(tree):
    """`capacity.nodes_of` (the nodes a checker can simulate on without a cluster) against the Nodes the tree's
    apply.sh labelled and tainted on the real API server: the same names, and on each every label, taint and
    allocatable amount policyc states."""
    if tree is None:
        missing_shared_data(vectors.directory())
    real = {n.name: n for n in map(capacity.Node.from_object, vectors.node_objects(tree))}
    modelled = capacity.nodes_of(vectors.compiled(tree).cluster)
    assert modelled and {n.name for n in modelled} <= set(real)
    for node in modelled:
        seen = real[node.name]
        assert dict(node.labels).items() <= dict(seen.labels).items(), node.name
        assert all(t in seen.taints for t in node.taints), node.name
        assert node.allocatable.items() <= seen.allocatable.items(), node.name

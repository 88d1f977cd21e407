"""The capacity model (`policyc.backends.volcano.capacity`) on small clusters whose outcome is worked out by hand.
(`test_vector_scheduling` holds it to what the real Volcano did.)"""

from __future__ import annotations

from fractions import Fraction

from policyc.backends.volcano import capacity as vc

GPU = "nvidia.com/gpu"
TAINT = {"key": "reserved", "value": "x", "effect": "NoSchedule"}


def node(name: str, gpus: int = 8, taints: tuple = ()) -> vc.Node:
    return vc.Node(name, {}, taints, {"cpu": Fraction(64), GPU: Fraction(gpus)})


def job(
    name: str,
    queue: str,
    pods: int,
    gpus: int,
    min_available: int | None = None,
    cls: str | None = None,
    namespace: str = "ns",
) -> vc.Job:
    pod = vc.Pod({"cpu": Fraction(1), GPU: Fraction(gpus)}, {}, {"spec": {"priorityClassName": cls}}, cls)
    return vc.Job(namespace, name, queue, pods if min_available is None else min_available, (pod,) * pods, cls)


def queue(
    name: str,
    capability: int | None = None,
    deserved: int | None = None,
    guarantee: int | None = None,
    parent: str = "root",
) -> vc.Queue:
    def gpus(n: int | None) -> vc.Resources:
        return {} if n is None else {GPU: Fraction(n)}

    return vc.Queue(name, parent, gpus(capability), gpus(deserved), gpus(guarantee))


def scheduler(plugin: str = "proportion", overcommit: Fraction | None = Fraction(6, 5), hierarchy: bool = False):
    return vc.Scheduler(("enqueue", "allocate", "preempt", "reclaim", "backfill"), plugin, hierarchy, overcommit, True)


TWO_NODES = (node("n1"), node("n2"))


def test_overcommit_holds_a_job_the_cluster_cannot_absorb():
    # 16 GPUs x 1.2 = 19.2; two jobs of 8 run (16 used), a third would need 16 + 8 > 19.2 at enqueue
    cluster = vc.Cluster(TWO_NODES, (queue("q"),), scheduler())
    out = vc.simulate(cluster, [job(f"j{i}", "q", 1, 8) for i in (1, 2, 3)])
    assert [out[f"ns/j{i}"].phase for i in (1, 2, 3)] == ["Running", "Running", "Pending"]
    assert out["ns/j3"].held == "resource in cluster is overused: overused nvidia.com/gpu"
    assert out["ns/j3"].created == 0


def test_queue_capability_holds_a_job_at_enqueue():
    # capability 8: the second job of 8 would take the queue to 16; the cluster (19.2 - 8 = 11.2) would take it
    cluster = vc.Cluster(TWO_NODES, (queue("q", capability=8),), scheduler())
    out = vc.simulate(cluster, [job("a", "q", 1, 8), job("b", "q", 1, 8)])
    assert (out["ns/a"].phase, out["ns/b"].phase) == ("Running", "Pending")
    assert out["ns/b"].held == "queue resource quota insufficient: insufficient nvidia.com/gpu"


def test_a_gang_runs_whole_or_not_at_all():
    # 3 pods of 8 on two nodes: with minAvailable 3 its gang (24) exceeds 19.2 and it is held; with minAvailable 2
    # (16) it is admitted and two of its pods run, the third waits
    cluster = vc.Cluster(TWO_NODES, (queue("q"),), scheduler())
    whole = vc.simulate(cluster, [job("g", "q", 3, 8)])["ns/g"]
    assert (whole.phase, whole.bound) == ("Pending", 0)
    elastic = vc.simulate(cluster, [job("g", "q", 3, 8, min_available=2)])["ns/g"]
    assert (elastic.phase, elastic.created, elastic.bound) == ("Running", 3, 2)


def test_a_namespace_quota_below_the_gang_leaves_it_admitted_and_idle():
    # the queue admits the 2-pod gang; the quota admits one pod; the gang never reaches 2 pods
    quota = vc.Quota("ns", "tenant-quota", {"pods": Fraction(1)})
    cluster = vc.Cluster(TWO_NODES, (queue("q"),), scheduler(), quotas=(quota,))
    out = vc.simulate(cluster, [job("g", "q", 2, 4)])["ns/g"]
    assert (out.phase, out.created, out.bound) == ("Inqueue", 1, 0)


def _borrowed(asker: vc.Job) -> dict[str, vc.Outcome]:
    """Queue a (deserved 8) runs two 8-GPU pods, borrowing 8; queue b (deserved 8) then asks with `asker`. The
    overcommit factor 2 lets b's job past enqueue (32 - 16 = 16 idle); b's real capability is the cluster's 16."""
    cluster = vc.Cluster(
        TWO_NODES, (queue("a", deserved=8), queue("b", deserved=8)), scheduler("capacity", Fraction(2))
    )
    return vc.simulate(cluster, [job("a1", "a", 1, 8), job("a2", "a", 1, 8), asker])


def test_reclaim_takes_back_a_borrowed_pod_for_one_pod():
    out = _borrowed(job("b1", "b", 1, 8))
    assert (out["ns/b1"].phase, out["ns/b1"].bound) == ("Running", 1)
    assert sum(out[f"ns/a{i}"].evicted for i in (1, 2)) == 1  # a is back at its deserved 8


def test_reclaim_never_serves_a_gang_whose_pods_share_the_freed_node():
    # the first 4-GPU pod evicts one of a's pods (a falls to its deserved 8); the second pod finds no victim on that
    # node nor any other (a is no longer above its deserved): the gang is short, the eviction is undone
    out = _borrowed(job("b1", "b", 2, 4))
    assert (out["ns/b1"].phase, out["ns/b1"].created, out["ns/b1"].bound) == ("Inqueue", 2, 0)
    assert out["ns/a1"].evicted + out["ns/a2"].evicted == 0


def _preemption(cls: str) -> vc.Outcome:
    """Two low jobs (value 10) fill the two untainted nodes; a third node, tainted, counts in the cluster (24 GPUs,
    x 1.2 = 28.8), so the queue (real capability 24) and the cluster (28.8 - 16 = 12.8) admit an 8-GPU job of `cls`."""
    nodes = (*TWO_NODES, node("n3", taints=(TAINT,)))
    classes = {"low": 10, "high": 1000, "high-never": 1000}
    cluster = vc.Cluster(
        nodes, (queue("q"),), scheduler(), priorities=classes, non_preempting=frozenset({"high-never"})
    )
    out = vc.simulate(
        cluster, [job("low1", "q", 1, 8, cls="low"), job("low2", "q", 1, 8, cls="low"), job("hi", "q", 1, 8, cls=cls)]
    )
    assert out["ns/low1"].evicted + out["ns/low2"].evicted == (1 if out["ns/hi"].phase == "Running" else 0)
    return out["ns/hi"]


def test_preempt_evicts_a_lower_priority_pod_of_the_queue():
    assert _preemption("high").phase == "Running"


def test_preemption_policy_never_preempts_nobody():
    assert _preemption("high-never").phase == "Inqueue"


def test_a_queue_at_its_real_capability_holds_the_job_before_preempt_sees_it():
    # without the third node the queue's real capability is the cluster's 16 GPUs, which the low jobs hold: the high
    # job is held at enqueue, and preempt, which serves admitted jobs only, evicts nothing (volcano#1772, #2067)
    cluster = vc.Cluster(
        TWO_NODES, (queue("q"),), scheduler(overcommit=Fraction(2)), priorities={"low": 10, "high": 1000}
    )
    out = vc.simulate(
        cluster,
        [job("low1", "q", 1, 8, cls="low"), job("low2", "q", 1, 8, cls="low"), job("hi", "q", 1, 8, cls="high")],
    )
    assert (out["ns/hi"].phase, out["ns/hi"].held) == (
        "Pending",
        vc.QUEUE_INSUFFICIENT + ": insufficient nvidia.com/gpu",
    )
    assert out["ns/low1"].evicted + out["ns/low2"].evicted == 0


def test_a_parent_capability_holds_a_child_queue_job():
    # org (capability 16) has children x and y (capability 16 each): x runs 8, y's job of 16 fits y but not org
    queues = (
        queue("org", capability=16),
        queue("x", capability=16, parent="org"),
        queue("y", capability=16, parent="org"),
    )
    cluster = vc.Cluster((*TWO_NODES, node("n3")), queues, scheduler("capacity", hierarchy=True))
    out = vc.simulate(cluster, [job("x1", "x", 1, 8), job("y1", "y", 2, 8)])
    assert (out["ns/x1"].phase, out["ns/y1"].phase) == ("Running", "Pending")
    assert out["ns/y1"].held == "queue resource quota insufficient: insufficient nvidia.com/gpu"


def test_scheduler_reads_the_conf():
    conf = {
        "actions": "enqueue, allocate, backfill",
        "tiers": [
            {
                "plugins": [
                    {"name": "overcommit", "arguments": {"overcommit-factor": 1.5}},
                    {"name": "capacity", "enableHierarchy": True},
                ]
            }
        ],
    }
    s = vc.Scheduler.from_conf(conf)
    assert (s.actions, s.queue_plugin, s.hierarchy, s.overcommit, s.binpack) == (
        ("enqueue", "allocate", "backfill"),
        "capacity",
        True,
        Fraction(3, 2),
        False,
    )


def test_jobs_from_objects():
    """A Volcano Job is one gang of its tasks' pods; a Deployment's pods are each placed alone (minMember 1), in the
    queue their annotation names."""
    template = {
        "metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "q"}},
        "spec": {"containers": [{"resources": {"limits": {GPU: "2", "memory": "1Gi"}}}]},
    }
    volcano = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "v", "namespace": "ns"},
        "spec": {"queue": "q", "tasks": [{"replicas": 3, "template": template}]},
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {"replicas": 4, "template": template},
    }
    v, d = vc.Job.from_object(volcano), vc.Job.from_object(deployment)
    # a limit without a request is the request; minAvailable defaults to all 3 pods: a gang of 3 x 2 GPUs
    assert (v.queue, v.min_available, len(v.pods), v.gang[GPU], v.gang["memory"]) == ("q", 3, 3, 6, 3 * 2**30)
    assert (d.queue, d.min_available, len(d.pods), d.gang[GPU]) == ("q", 1, 4, 2)


POLICY = """
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: deadlock}
spec:
  kubernetesVersion: "1.36"
  domain: lab.example.com
  gpuTiers: [{name: big, products: [NVIDIA-H100-80GB]}]
  nodePools:
    - {name: h100, usage: training, nodes: ["h-[1-4]"], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "64", memory: 1000Gi}}
  tenants:
    - {name: t, namespaces: [t], queue: {capability: {gpu: 32}}, quota: {requests: {memory: 300Gi}}}
  workloads:
    - {name: train, type: training, tenant: t, gpuTier: big, gpus: 8, replicas: 2, cpu: "8", memory: 100Gi}
"""


def test_policyc_output_alone_shows_a_quota_that_binds_before_the_queue(compile_text):
    """From a policy's output only (its pools as nodes, its queues, quotas and conf): the queue admits 2 gangs of
    2 x 8 GPUs (32), the namespace quota 300Gi only 3 pods of 100Gi: the second gang gets one pod and waits for good."""
    compilation = compile_text(POLICY)
    assert compilation.ok, [d.message for d in compilation.report.diagnostics]
    objects = [m.obj for a in compilation.artifacts if not a.template for m in a.manifests]
    cluster = vc.Cluster.from_objects(vc.nodes_of(compilation.cluster), objects)
    template = next(m.obj for a in compilation.artifacts if a.template for m in a.manifests)
    jobs = [
        vc.Job.from_object({**template, "metadata": {**template["metadata"], "name": f"train-{i}"}}) for i in (1, 2)
    ]
    out = vc.simulate(cluster, jobs)
    assert [(o.phase, o.created, o.bound) for o in out.values()] == [("Running", 2, 2), ("Inqueue", 1, 0)]

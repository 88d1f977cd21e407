"""The Kueue backend (`kueue.x-k8s.io/v1beta2`): a ResourceFlavor per GPU tier and usage (the pools of one tier
and one usage), a ClusterQueue per tenant, a LocalQueue per tenant namespace, Cohorts, Kueue's controller
Configuration and a kube-scheduler profile.

Kueue admits workloads against quota per (flavor, resource) and leaves placement to kube-scheduler, so the
backend also writes a GPU-weighted scheduling profile that the templates name in `schedulerName`. Priorities are
the Kubernetes PriorityClasses the pods already carry (Kueue reads the Workload's priority from them), so that the
per-tenant restriction of priority classes also restricts queueing priority.

Volcano's queue maps onto Kueue like this (fact sheet §1.1): guarantee -> nominalQuota, capability - guarantee
-> borrowingLimit, weight -> fairSharing.weight, parent -> a Cohort tree. A guarantee is split over the
tenant's flavors in their order, each taking what its pools have left after the tenants before it; what no tenant
is guaranteed is the root Cohort's shared quota, which every queue may borrow.

A flavor groups pools rather than standing for one because Kueue bounds how many flavors a queue may list (64 in
a resource group, and every queue here has one: the groups would all cover cpu, memory and the GPU, and a
resource may be in only one group). The root Cohort lists every flavor, so a flavor per pool would stop at 64
pools; a flavor per tier and usage stops at 64 tier-usage pairs (21 tiers of all three usages), which
`policyc.backends.kueue.rules` reports before anything is emitted, with Kueue's other limits on a flavor (at most
8 node labels, taints and tolerations each).

Kueue admits a workload whole: all the pods of its pod sets at once. A batch Job's smaller gang (minMember) becomes
Kueue's partial admission (`MIN_PARALLELISM`); a PyTorchJob has none, which `policyc.backends.kueue.rules` reports.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from policyc.artifacts import Artifact, Manifest
from policyc.backends import workloads
from policyc.backends.binding import Binding
from policyc.backends.kueue import settings
from policyc.diagnostics import Path
from policyc.ir import Cluster, Pool, Resources, Taint, Tenant, Workload, once_per_build
from policyc.k8s.dependencies import Reference
from policyc.k8s.objects import metadata
from policyc.k8s.quantity import Quantity
from policyc.output import yaml_emitter
from policyc.pods import usages

NAME = "kueue"
KINDS = {name: workloads.KINDS[name] for name in settings.WORKLOAD_KINDS}
API_VERSION = "kueue.x-k8s.io/v1beta2"
GROUP = API_VERSION.rpartition("/")[0]
_FLAVORS = ("spec", "resourceGroups", "*", "flavors", "*", "name")
REFERENCES = (
    Reference((GROUP, "Cohort"), ("spec", "parentName"), (GROUP, "Cohort")),
    Reference((GROUP, "Cohort"), _FLAVORS, (GROUP, "ResourceFlavor")),
    Reference((GROUP, "ClusterQueue"), ("spec", "cohortName"), (GROUP, "Cohort")),
    Reference((GROUP, "ClusterQueue"), _FLAVORS, (GROUP, "ResourceFlavor")),
    Reference((GROUP, "LocalQueue"), ("spec", "clusterQueue"), (GROUP, "ClusterQueue")),
)
"""What Kueue's objects name: a Cohort its parent, a queue its cohort and flavors, a LocalQueue its ClusterQueue.
Kueue's webhooks do not look them up: a queue whose flavors or ClusterQueue are missing is stored and inactive
until they exist, a spell this order spares."""
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
"""A batch Job's partial admission (feature gate PartialAdmission, beta and on by default since Kueue 0.5): when the
whole Job does not fit, even after borrowing and preemption, Kueue lowers its parallelism, to no less than this
(below parallelism, Kueue's webhook checks); completions stay."""

PROFILES = {"binpack": "gpu-binpack", "spread": "gpu-spread"}
"""kube-scheduler profile (the pods' schedulerName) per placement."""
SCORING = {"binpack": "MostAllocated", "spread": "LeastAllocated"}
GPU_SCORE_WEIGHT = 10
"""How much a node's GPU fill counts against its CPU and memory fill (1 each) when packing or spreading."""
SCHEDULER_NAMESPACE = "kube-system"
SCHEDULER_CONFIGMAP = "gpu-scheduler-config"
SCHEDULER_KEY = "config.yaml"

KUEUE_NAMESPACE = "kueue-system"
KUEUE_CONFIGMAP = "kueue-manager-config"
KUEUE_KEY = "controller_manager_config.yaml"
FRAMEWORKS = {"Job": ("batch/job",), "PyTorchJob": ("kubeflow.org/pytorchjob",), "Deployment": ("deployment", "pod")}
"""Kueue integrations each workload kind needs (Deployments are admitted pod by pod)."""
ALWAYS_INTEGRATED = ("batch/job",)
"""Integrations the manager configuration lists whatever the workload kinds."""
FAIR_SHARING_STRATEGIES = ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]

MAX_FLAVORS_PER_GROUP = 64
"""Flavors in one resource group of a ClusterQueue or Cohort (CRD maxItems)."""
MAX_FLAVOR_ENTRIES = 8
"""Entries of a ResourceFlavor's nodeLabels, nodeTaints and tolerations, each (CRD maxProperties / maxItems)."""
MAX_NAME = 253
"""A ResourceFlavor name is a DNS-1123 subdomain."""
ENFORCED_EFFECTS = ("NoSchedule", "NoExecute")
"""The taint effects Kueue evaluates on a flavor (it ignores PreferNoSchedule)."""

_ZERO = Quantity.from_value(0)


@dataclass(frozen=True, slots=True, eq=False)
class Flavor:
    """One ResourceFlavor: the pools of one GPU tier and one usage."""

    tier: str
    usage: str
    pools: tuple[Pool, ...]
    """In the cluster's (name) order."""

    @property
    def name(self) -> str:
        # No two groups share a name: a usage (training, inference, hybrid) has no '-', so the text after the
        # last '-' is the usage and the text before it the tier, and tier names are unique.
        return f"{self.tier}-{self.usage}"

    @property
    def gpus(self) -> int:
        return sum(p.gpus for p in self.pools)

    @property
    def products(self) -> tuple[str, ...]:
        return tuple(sorted({p.product for p in self.pools}))

    @property
    def pool_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.pools)


def emit(cluster: Cluster) -> list[Artifact]:
    manager = _configmap(cluster, KUEUE_NAMESPACE, KUEUE_CONFIGMAP, KUEUE_KEY, manager_conf(cluster))
    scheduler = _configmap(cluster, SCHEDULER_NAMESPACE, SCHEDULER_CONFIGMAP, SCHEDULER_KEY, scheduler_conf(cluster))
    out = [
        Artifact("kueue/manager-configmap.yaml", (manager,), synced=True),
        Artifact("kueue/scheduler-configmap.yaml", (scheduler,), synced=True),
        Artifact(
            "kueue/resourceflavors.yaml",
            tuple(_flavor(cluster, f) for f in sorted(all_flavors(cluster), key=lambda f: f.name)),
            synced=True,
        ),
        Artifact("kueue/cohorts.yaml", tuple(Manifest(obj, (path,)) for obj, path in cohorts(cluster)), synced=True),
    ]
    if cluster.tenants:
        queues = tuple(Manifest(obj, ((*t.path, "queue"),)) for t, obj in cluster_queues(cluster))
        out.append(Artifact("kueue/clusterqueues.yaml", queues, synced=True))
        out.append(Artifact("kueue/localqueues.yaml", tuple(_local_queues(cluster)), synced=True))
    return out


def queue_binding(cluster: Cluster, tenant: str) -> Binding:
    return Binding(
        scheduler_name=PROFILES[cluster.scheduler.placement],
        queue=tenant,
        object_labels={QUEUE_LABEL: tenant},
        suspend=True,
    )


def binding(cluster: Cluster, workload: Workload) -> Binding:
    # Only a batch Job can be admitted with fewer pods than it runs (a PyTorchJob's gang: rules.check).
    partial = workload.kind == "Job" and workload.gang < workload.replicas
    annotations = {MIN_PARALLELISM: str(workload.gang)} if partial else {}
    return replace(queue_binding(cluster, workload.tenant), object_annotations=annotations)


def tolerations_added(cluster: Cluster, workload: Workload) -> tuple[tuple[dict, ...], ...]:
    """Kueue adds the tolerations of the flavor it admits a workload to into its pod templates: one of its queue's
    flavors of the workload's tier and usages (its required affinity, or the queue rule for preferred placement,
    rules out the others)."""
    groups = {(workload.tier.name, u) for u in usages(workload)}
    tenant = cluster.tenants_by_name[workload.tenant]
    return tuple(tuple(_flavor_tolerations(cluster)[f.name]) for f in flavors(cluster, tenant)
                 if (f.tier, f.usage) in groups)  # fmt: skip


@once_per_build
def _flavor_tolerations(cluster: Cluster) -> dict[str, list[dict]]:
    return {f.name: flavor_spec(cluster, f).get("tolerations", []) for f in all_flavors(cluster)}


# --- quota --------------------------------------------------------------------------------------------------


def covered_resources(cluster: Cluster) -> tuple[str, ...]:
    """What every ClusterQueue gives quota for, in the order every flavor lists it."""
    return ("cpu", "memory", *cluster.accelerators)


def flavor_capacity(cluster: Cluster, flavor: Flavor) -> Resources:
    """The sum of the flavor's pools, for each covered resource every one of them states."""
    total = cluster.capacity(flavor.pools)
    return {r: total[r] for r in covered_resources(cluster) if r in total}


@once_per_build
def all_flavors(cluster: Cluster) -> tuple[Flavor, ...]:
    """One flavor per (tier, usage) that has pools, in Kueue's order of preference (`preference`)."""
    groups: dict[tuple[str, str], list[Pool]] = {}
    for p in cluster.pools:
        groups.setdefault((p.tier, p.usage), []).append(p)
    return tuple(sorted((Flavor(tier, usage, tuple(pools)) for (tier, usage), pools in groups.items()), key=preference))


def preference(flavor: Flavor) -> tuple:
    """Kueue tries a queue's flavors in order: dedicated before hybrid (the overflow), then larger first (by GPUs),
    then by name."""
    return (flavor.usage == "hybrid", -flavor.gpus, flavor.name)


def flavors(cluster: Cluster, tenant: Tenant) -> tuple[Flavor, ...]:
    """The flavors a tenant's ClusterQueue offers, in order of preference: the tier-usage groups its workloads may
    use, or every one when it declares no workload."""
    return _offered(cluster).get(tenant.name, all_flavors(cluster))


@once_per_build
def _offered(cluster: Cluster) -> dict[str, tuple[Flavor, ...]]:
    """Tenant -> its flavors, for tenants that declare workloads."""
    wanted: dict[str, set[tuple[str, str]]] = {}
    for w in cluster.workloads:
        wanted.setdefault(w.tenant, set()).update((w.tier.name, u) for u in usages(w))
    every = all_flavors(cluster)
    return {name: tuple(f for f in every if (f.tier, f.usage) in groups) for name, groups in wanted.items()}


def children(cluster: Cluster, tenant: Tenant) -> list[Tenant]:
    return _children(cluster).get(tenant.name, [])


@once_per_build
def _children(cluster: Cluster) -> dict[str, list[Tenant]]:
    out: dict[str, list[Tenant]] = {}
    for t in cluster.tenants:
        if t.queue.parent:
            out.setdefault(t.queue.parent, []).append(t)
    return out


def own_guarantee(cluster: Cluster, tenant: Tenant) -> Resources:
    """The tenant's guarantee less what its child tenants are guaranteed (a parent's guarantee includes theirs)."""
    out = dict(tenant.queue.guarantee)
    for child in children(cluster, tenant):
        for resource, amount in child.queue.guarantee.items():
            if resource in out:
                out[resource] = max(out[resource] - amount, _ZERO)
    return out


@once_per_build
def nominal_quotas(cluster: Cluster) -> dict[str, dict[str, Resources]]:
    """Tenant -> flavor name -> covered resource -> nominalQuota. Tenants in name order; each guarantee fills the
    tenant's flavors in order with what their pools have left; the last flavor takes any remainder (a guarantee
    its pools cannot hold, which the checks report)."""
    covered = covered_resources(cluster)
    left = {f.name: flavor_capacity(cluster, f) for f in all_flavors(cluster)}
    out: dict[str, dict[str, Resources]] = {}
    for t in cluster.tenants:
        offered = flavors(cluster, t)
        quota = {f.name: dict.fromkeys(covered, _ZERO) for f in offered}
        for resource, wanted in own_guarantee(cluster, t).items():
            if resource not in covered or not offered:
                continue
            for i, f in enumerate(offered):
                room = left[f.name].get(resource)
                take = wanted if room is None or i == len(offered) - 1 else min(wanted, max(room, _ZERO))
                quota[f.name][resource] = take
                if room is not None:
                    left[f.name][resource] = room - take
                wanted = wanted - take
                if wanted <= _ZERO:
                    break
        out[t.name] = quota
    return out


def root_cohort(cluster: Cluster) -> str:
    """The cohort every tenant belongs to, named after the policy."""
    return cluster.name


def cohort_of(cluster: Cluster, tenant: Tenant) -> str:
    """A parent tenant's queue sits in its own cohort, with its children; others in their parent's, or the root."""
    if children(cluster, tenant):
        return tenant.name
    return tenant.queue.parent or root_cohort(cluster)


def _resource_group(cluster: Cluster, quotas: dict[str, Resources], borrowing: Resources) -> dict:
    covered = covered_resources(cluster)
    group_flavors = []
    for flavor, amounts in quotas.items():
        resources = []
        for resource in covered:
            entry = {"name": resource, "nominalQuota": str(amounts[resource])}
            if resource in borrowing:
                entry["borrowingLimit"] = str(borrowing[resource])
            resources.append(entry)
        group_flavors.append({"name": flavor, "resources": resources})
    return {"coveredResources": list(covered), "flavors": group_flavors}


@once_per_build
def cluster_queues(cluster: Cluster) -> list[tuple[Tenant, dict]]:
    """(tenant, its ClusterQueue), in tenant order (the backend emits them, its rules check them)."""
    quotas = nominal_quotas(cluster)
    cohorts = {t.name: cohort_of(cluster, t) for t in cluster.tenants}
    unreclaimable: dict[str, int] = {}
    for t in cluster.tenants:
        unreclaimable[cohorts[t.name]] = unreclaimable.get(cohorts[t.name], 0) + (not t.queue.reclaimable)
    out = []
    for t in cluster.tenants:
        q = t.queue
        borrowing = {r: cap - q.guarantee.get(r, _ZERO) for r, cap in q.capability.items()}
        peers_unreclaimable = unreclaimable[cohorts[t.name]] - (not q.reclaimable)
        spec = {
            "cohortName": cohorts[t.name],
            "namespaceSelector": {"matchLabels": {cluster.keys.tenant: t.name}},
            "resourceGroups": [_resource_group(cluster, quotas[t.name], borrowing)],
            "preemption": {
                # Kueue cannot exempt one queue's borrowed workloads from reclaim: protect the non-reclaimable
                # tenants' workloads from equal or lower priority reclaimers instead.
                "reclaimWithinCohort": "LowerPriority" if peers_unreclaimable else "Any",
                "withinClusterQueue": "LowerPriority",
            },
            "fairSharing": {"weight": str(q.weight)},
        }
        out.append((t, _object(cluster, "ClusterQueue", t.name, spec, labels={cluster.keys.tenant: t.name})))
    return out


@once_per_build
def cohorts(cluster: Cluster) -> list[tuple[dict, Path]]:
    """(Cohort, policy path): the root, whose quota is what no tenant is guaranteed (shared by all; every flavor,
    in order of preference), and one per parent tenant."""
    left = {f.name: flavor_capacity(cluster, f) for f in all_flavors(cluster)}
    for quota in nominal_quotas(cluster).values():
        for flavor, amounts in quota.items():
            for resource, amount in amounts.items():
                if resource in left[flavor]:
                    left[flavor][resource] = left[flavor][resource] - amount
    covered = covered_resources(cluster)
    shared = {f: {r: max(amounts.get(r, _ZERO), _ZERO) for r in covered} for f, amounts in left.items()}
    root = {"resourceGroups": [_resource_group(cluster, shared, {})]}
    out = [(_object(cluster, "Cohort", root_cohort(cluster), root), ("metadata", "name"))]
    for t in cluster.tenants:
        if children(cluster, t):
            spec = {
                "parentName": t.queue.parent or root_cohort(cluster),
                "fairSharing": {"weight": str(t.queue.weight)},
            }
            out.append((_object(cluster, "Cohort", t.name, spec), (*t.path, "name")))
    return out


# --- other objects ------------------------------------------------------------------------------------------


def _object(cluster: Cluster, kind: str, name: str, spec: dict, **meta) -> dict:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata(name, cluster.name, **meta), "spec": spec}


def flavor_spec(cluster: Cluster, flavor: Flavor) -> dict:
    """A ResourceFlavor's spec. Kueue injects nodeLabels (as a nodeSelector) and tolerations into the pods it
    admits to the flavor, and admits there only pods tolerating its nodeTaints (but for those it tolerates itself).

    nodeLabels select the group's nodes by tier and usage (not pool); nodeTaints are the enforced taints every
    pool of the group carries; tolerations tolerate the usage taint and each product's taint of the group."""
    keys = cluster.keys
    spec: dict = {"nodeLabels": dict(sorted({keys.tier: flavor.tier, keys.usage: flavor.usage}.items()))}
    enforced = [{t for t in p.taints if t.effect in ENFORCED_EFFECTS} for p in flavor.pools]
    common = set.intersection(*enforced) if enforced else set()
    if common:
        spec["nodeTaints"] = [t.to_dict() for t in sorted(common, key=_taint_order)]
    products = {p.product_key for p in flavor.pools}
    tolerated = {t for taints in enforced for t in taints if t.key == keys.usage or t.key in products}
    if tolerated:
        spec["tolerations"] = [
            {"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
            for t in sorted(tolerated, key=_taint_order)
        ]
    return spec


def _taint_order(t: Taint) -> tuple[str, str, str]:
    return (t.key, t.value, t.effect)


def _flavor(cluster: Cluster, flavor: Flavor) -> Manifest:
    tier = next((t.path for t in cluster.tiers if t.name == flavor.tier), None)
    sources = (*((tier,) if tier else ()), *(p.path for p in flavor.pools))
    return Manifest(_object(cluster, "ResourceFlavor", flavor.name, flavor_spec(cluster, flavor)), sources)


def _local_queues(cluster: Cluster) -> list[Manifest]:
    return [
        Manifest(
            {
                "apiVersion": API_VERSION,
                "kind": "LocalQueue",
                "metadata": metadata(t.name, cluster.name, namespace=ns, labels={cluster.keys.tenant: t.name}),
                "spec": {"clusterQueue": t.name},
            },
            ((*t.path, "namespaces"),),
        )
        for t in cluster.tenants
        for ns in t.namespaces
    ]


def manager_conf(cluster: Cluster) -> dict:
    """Kueue's controller Configuration: fair sharing on (queue weights), and the integrations the workload kinds
    need. It replaces the installation's controller_manager_config.yaml; unset fields keep Kueue's defaults."""
    needed = {f for w in cluster.workloads for f in FRAMEWORKS.get(w.kind, ())} | set(ALWAYS_INTEGRATED)
    frameworks = [f for kind in ("Job", "PyTorchJob", "Deployment") for f in FRAMEWORKS[kind] if f in needed]
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "fairSharing": {"preemptionStrategies": list(FAIR_SHARING_STRATEGIES)},
        "integrations": {"frameworks": frameworks},
    }


def scheduler_conf(cluster: Cluster) -> dict:
    """A kube-scheduler configuration with one GPU-weighted profile, for a second scheduler (its own lease)."""
    placement = cluster.scheduler.placement
    name = PROFILES[placement]
    profile: dict = {"schedulerName": name}
    if placement == "binpack":  # balancing CPU against memory would fight the packing
        profile["plugins"] = {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}
    resources = [
        *({"name": gpu, "weight": GPU_SCORE_WEIGHT} for gpu in cluster.accelerators),
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
    ]
    profile["pluginConfig"] = [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": SCORING[placement], "resources": resources}}}
    ]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": True, "resourceName": name, "resourceNamespace": SCHEDULER_NAMESPACE},
        "profiles": [profile],
    }


def _configmap(cluster: Cluster, namespace: str, name: str, key: str, content: dict) -> Manifest:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(name, cluster.name, namespace=namespace),
        "data": {key: yaml_emitter.dump(content)},
    }
    return Manifest(obj, (("spec", "scheduler"),))

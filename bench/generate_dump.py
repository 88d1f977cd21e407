"""Generate the running cluster a benchmark policy describes, as `kubectl get <kinds> -A -o json` prints it.

    python bench/generate_dump.py --nodes 5000 --pools 100 --tenants 500 --workloads 200 --pods 50000 \\
        --policy bench.yaml --output dump.json [--seed 1] [--drift]

The policy is `generate.policy` of those sizes (Volcano; written to --policy); the dump is one `v1` `List` shaped like
the recorded ones (`../shared/testdata/cluster-dumps/`, read its README): the build's synced objects as client-side
`kubectl apply` and the API server leave them (the last-applied-configuration annotation, uid, resourceVersion,
creationTimestamp, generation, the server's defaults, a quota's status), the namespaces the server makes, a Node per
node of `nodes/plan.json` with the labels GPU Feature Discovery publishes and the labels, taints and record
annotations the node script sets, and the tenants' copies of their workload templates with the pods their
controllers make, bound to nodes. Like the recorded dumps it has no `managedFields` (kubectl leaves them out).

Placement is plausible: a copy's pods run only where the scheduler's node-affinity and taint filters admit them
(`policyc.k8s.scheduling`), within each node's allocatable (GPUs, CPU, memory, 110 pods), each namespace's
ResourceQuotas and each Volcano queue's capability. Copies are added in turns over the templates while they fit;
the pods beyond that are those of finished copies of the batch templates (phase Succeeded, still bound to a node
they could run on, holding nothing), as a batch cluster keeps them until they are cleaned up. Every copy has its
template's name with a `-cNNNNN` suffix, and otherwise its template's content. An audit of the dump against the
policy finds nothing: the generated cluster is the one the build describes.

With --drift, seven drifts of the recorded categories are applied at places that depend on the policy only
(`apply_drifts`) and listed in OUTPUT.drifts.json as a recorded drift's expect.json lists its own; the rest of the
dump is the clean one's, byte for byte.

The file is written object by object (pods and copies are made as they are written), in kubectl's order: the kinds
in the order they are asked for, each sorted by namespace and name. Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import policy

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
START = datetime(2026, 11, 26, 14, 52, 10, tzinfo=UTC)
"""When the generated control plane started (the recorded dumps' day)."""
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
"""The characters of generated name suffixes (apimachinery's `rand.String`)."""
KIND_ORDER = (  # (group, kind) as the recorded dumps ask for them; the build's other kinds follow, sorted
    ("", "Node"),
    ("", "Namespace"),
    ("", "Pod"),
    ("", "ResourceQuota"),
    ("", "LimitRange"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("", "ConfigMap"),
    ("apps", "Deployment"),
    ("batch", "Job"),
)
UNVERSIONED = {"Namespace", "ResourceQuota", "LimitRange", "ConfigMap", "Node"}
"""Kinds the API server gives no `metadata.generation`."""
DEFAULT_NODE = {"cpu": "128", "memory": "1Ti", "pods": "110"}
"""A node's allocatable where its pool states none (the recorded dumps' rule)."""
NOT_READY_TOLERATIONS = [  # what the DefaultTolerationSeconds admission plugin adds to every pod
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
]


def go_json(obj: object, indent: int | None = None) -> str:
    """JSON as Go's encoder writes it: keys sorted, UTF-8 kept, and <, > and & escaped."""
    separators = (",", ": ") if indent else (",", ":")
    text = json.dumps(obj, indent=indent, sort_keys=True, ensure_ascii=False, separators=separators)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class Server:
    """The API server's bookkeeping, from a seed: uids, resourceVersions in creation order, timestamps."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.version = 0

    def aside(self) -> Server:
        """A server for objects made later (drifts), which leaves this one's uids and versions as they would be."""
        later = Server(self.seed + 1)
        later.version = 10**8
        return later

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, length: int) -> str:
        return "".join(self.rng.choice(NAME_CHARS) for _ in range(length))

    def metadata(self, obj: dict, seconds: int) -> None:
        """`obj`'s metadata as stored: a uid, the next resourceVersion, the creation time `seconds` after START."""
        self.version += 1
        meta = obj["metadata"]
        meta["uid"] = self.uid()
        meta["resourceVersion"] = str(self.version)
        meta["creationTimestamp"] = stamp(seconds)
        if obj["kind"] not in UNVERSIONED:
            meta["generation"] = 1


def stamp(seconds: int) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def applied(obj: dict, server: Server, seconds: int) -> dict:
    """`obj` as `kubectl apply` (client-side) and the API server leave it: its last-applied-configuration
    annotation, the server's metadata and the defaults it fills in."""
    sent = copy.deepcopy(obj)
    sent["metadata"].setdefault("annotations", {})
    out = copy.deepcopy(sent)
    out["metadata"]["annotations"][LAST_APPLIED] = go_json(sent) + "\n"
    server.metadata(out, seconds)
    kind = group_kind(out)
    if kind not in SERVER_DEFAULTS:
        raise SystemExit(
            f"{out['kind']} {out['metadata']['name']}: what the API server does to a {kind} is not modelled"
        )
    SERVER_DEFAULTS[kind](out)
    return out


def _namespace(obj: dict) -> None:
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    obj["spec"] = {"finalizers": ["kubernetes"]}
    obj["status"] = {"phase": "Active"}


def _priority_class(obj: dict) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _admission_policy(obj: dict) -> None:
    constraints = obj["spec"]["matchConstraints"]
    constraints.setdefault("matchPolicy", "Equivalent")
    constraints.setdefault("namespaceSelector", {})
    constraints.setdefault("objectSelector", {})
    for rule in constraints.get("resourceRules", ()):
        rule.setdefault("scope", "*")
    obj["status"] = {}


def _binding(obj: dict) -> None:
    resources = obj["spec"].get("matchResources")
    if resources is not None:
        resources.setdefault("matchPolicy", "Equivalent")
        resources.setdefault("objectSelector", {})


def _volcano_queue(obj: dict) -> None:
    obj["spec"].setdefault("dequeueStrategy", "traverse")


def _volcano_job(obj: dict) -> None:
    obj["spec"].setdefault("maxRetry", 3)


def _pytorch_job(obj: dict) -> None:
    obj["spec"].setdefault("runPolicy", {}).setdefault("suspend", False)


def _deployment(obj: dict) -> None:
    obj["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "1"
    spec = obj["spec"]
    spec.setdefault("replicas", 1)
    spec.setdefault("progressDeadlineSeconds", 600)
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"}
    spec.setdefault("strategy", strategy)
    pod_spec_defaults(spec["template"]["spec"])


SERVER_DEFAULTS = {
    ("", "Namespace"): _namespace,
    ("scheduling.k8s.io", "PriorityClass"): _priority_class,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): _admission_policy,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): _binding,
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): _binding,
    ("scheduling.volcano.sh", "Queue"): _volcano_queue,
    ("batch.volcano.sh", "Job"): _volcano_job,
    ("kubeflow.org", "PyTorchJob"): _pytorch_job,
    ("apps", "Deployment"): _deployment,
    **dict.fromkeys(
        [
            ("", "ResourceQuota"),
            ("", "LimitRange"),
            ("", "ConfigMap"),
            ("nfd.k8s-sigs.io", "NodeFeatureRule"),
            ("monitoring.coreos.com", "PrometheusRule"),
            ("keda.sh", "ScaledObject"),
        ],
        lambda obj: None,
    ),
}
"""What the API server fills in, per kind (group, kind) it is modelled for, as the recorded dumps show against
their last-applied configuration; the kinds it keeps as sent do nothing."""


def pod_spec_defaults(spec: dict) -> None:
    """The API server's defaults of a pod spec (a Pod's or a Deployment's template)."""
    for container in spec["containers"]:
        image = container.get("image", "")
        tagged = ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest")
        container.setdefault("imagePullPolicy", "IfNotPresent" if tagged else "Always")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", 30)


# --- quantities and budgets --------------------------------------------------------------------------------------


def parse(text: str):
    from policyc.k8s.quantity import Quantity

    return Quantity.parse(str(text))


def requests_and_limits(spec: dict) -> dict[str, object]:
    """A pod's quota figures: `requests.R` and `limits.R` summed over its containers, and `pods` 1."""
    totals: dict[str, object] = {"pods": parse("1")}
    for container in spec["containers"]:
        for section in ("requests", "limits"):
            for resource, value in (container.get("resources") or {}).get(section, {}).items():
                key = f"{section}.{resource}"
                totals[key] = totals[key] + parse(value) if key in totals else parse(value)
    return totals


def quota_key(key: str) -> str:
    """A ResourceQuota's key as `requests_and_limits` names it (a bare resource is its request)."""
    if key.startswith("count/"):
        raise SystemExit(f"quota key {key}: object counts are not modelled")
    return key if key == "pods" or key.startswith(("requests.", "limits.")) else f"requests.{key}"


def scope_matches(quota: dict, priority_class: str) -> bool:
    """Whether a pod of `priority_class` counts against `quota` (PriorityClass scopes are the ones policyc writes)."""
    for expression in quota["spec"].get("scopeSelector", {}).get("matchExpressions", ()):
        if expression["scopeName"] != "PriorityClass":
            raise SystemExit(f"quota {quota['metadata']['name']}: scope {expression['scopeName']} is not modelled")
        inside = priority_class in expression.get("values", ())
        if inside != (expression["operator"] == "In"):
            return False
    return True


@dataclass
class Budget:
    """What is left of a limit (a node's allocatable, a quota's hard, a queue's capability)."""

    left: dict[str, object]

    def fits(self, need: dict[str, object]) -> bool:
        return all(key not in need or need[key] <= left for key, left in self.left.items())

    def take(self, need: dict[str, object]) -> None:
        for key in self.left:
            if key in need:
                self.left[key] = self.left[key] - need[key]

    def give(self, need: dict[str, object]) -> None:
        for key in self.left:
            if key in need:
                self.left[key] = self.left[key] + need[key]


# --- the build and the cluster it describes ------------------------------------------------------------------------


@dataclass
class Role:
    """A pod template of a workload template, as its controller reads it, and the nodes its pods may run on."""

    name: str
    replicas: int
    template: dict
    nodes: list[str]


@dataclass
class Template:
    obj: dict
    roles: list[Role]
    namespaces: list[str]
    """Its tenant's namespaces, where copies go in turns."""

    @property
    def batch(self) -> bool:
        """Whether its pods run to completion (a job), so that finished copies of it stay."""
        return self.obj["kind"] != "Deployment"

    @property
    def size(self) -> int:
        return sum(role.replicas for role in self.roles)


@dataclass
class Copy:
    """A tenant's copy of a template: its name, namespace, uid, and its pods (role, replica, name, node); `done`: a
    finished batch copy. A Deployment's copy has its ReplicaSet's hash and uid."""

    template: Template
    name: str
    namespace: str
    uid: str
    seconds: int
    pods: list[tuple[Role, int, str, str]] = field(default_factory=list)
    done: bool = False
    replica_set: tuple[str, str] | None = None


@dataclass
class Cluster:
    domain: str
    synced: list[dict]
    nodes: list[dict]
    templates: list[Template]
    allocatable: dict[str, dict[str, str]] = field(default_factory=dict)


def roles_of(obj: dict) -> list[tuple[str, int, dict]]:
    """(role, replicas, pod template) of a workload template, as its controller reads them."""
    spec = obj["spec"]
    if obj["kind"] == "Deployment":
        return [("", spec.get("replicas", 1), spec["template"])]
    if obj["kind"] == "PyTorchJob":
        return [(role.lower(), r.get("replicas", 1), r["template"]) for role, r in spec["pytorchReplicaSpecs"].items()]
    if obj["apiVersion"].startswith("batch.volcano.sh/"):
        return [(task["name"], task.get("replicas", 1), task["template"]) for task in spec["tasks"]]
    raise SystemExit(f"template {obj['metadata']['name']}: kind {obj['kind']} is not modelled")


def node_groups(plan: dict, pools: dict) -> Iterator[tuple[list[dict], dict[str, str]]]:
    """(Nodes, their allocatable) per pool of the plan and for the control plane: the labels GPU Feature Discovery
    publishes on GPU pools, then the node script's labels, taints and record annotations (of those under the
    policy's domain)."""
    domain = plan["domain"] + "/"
    groups = [(p["labels"], p["taints"], p["nodes"], pools[p["name"]]) for p in plan["pools"]]
    groups.append(({}, plan["controlPlane"]["taints"], plan["controlPlane"]["nodes"], None))
    for labels, taints, names, pool in groups:
        allocatable, gfd = dict(DEFAULT_NODE), {}
        if pool is not None:
            if pool.mig or pool.sharing:
                raise SystemExit(f"pool {pool.name}: partitioned or shared GPUs are not modelled")
            allocatable.update({k: str(v) for k, v in pool.allocatable.items()})
            allocatable[pool.resource] = str(pool.gpus_per_node)
            if pool.gfd:
                gfd = {pool.product_key: pool.product, "nvidia.com/gpu.count": str(pool.gpus_per_node)}
        record = {
            f"{domain}policyc.managed-labels": ",".join(sorted(k for k in labels if k.startswith(domain))),
            f"{domain}policyc.managed-taints": ",".join(
                f"{t['key']}:{t['effect']}" for t in taints if t["key"].startswith(domain)
            ),
        }
        nodes = [{
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"annotations": dict(record), "name": name, "labels": {
                **gfd, **labels, "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux"}},
            "spec": {"taints": [dict(t) for t in taints]} if taints else {},
            "status": {"allocatable": dict(allocatable), "capacity": dict(allocatable),
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": dict.fromkeys(NODE_INFO, "")},
        } for name in names]  # fmt: skip
        yield nodes, allocatable


NODE_INFO = ("architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion",
             "kubeletVersion", "machineID", "operatingSystem", "osImage", "systemUUID")  # fmt: skip
"""A Node's `status.nodeInfo`, empty without a kubelet (as recorded)."""


def build(policy_path: Path) -> Cluster:
    """Build the policy (the objects `policyc build` writes) and read its synced objects, node plan and templates.
    A template's pods may run on a pool's nodes when the scheduler's node-affinity and taint filters admit them."""
    from policyc.compiler import compile_file
    from policyc.k8s.scheduling import node_affinity_filter, taint_filter

    result = compile_file(policy_path)
    if not result.ok:
        raise SystemExit(f"{policy_path} does not build: {[d.message for d in result.report.errors[:3]]}")
    plan = next(json.loads(a.text) for a in result.artifacts if a.path == "nodes/plan.json")
    synced = [m.obj for a in result.artifacts if a.synced for m in a.manifests]
    cluster = Cluster(plan["domain"] + "/", synced, [], [])
    groups = list(node_groups(plan, {p.name: p for p in result.cluster.pools}))
    for nodes, allocatable in groups:
        cluster.nodes += nodes
        cluster.allocatable.update((n["metadata"]["name"], allocatable) for n in nodes)
    tenants: dict[str, list[str]] = {}
    tenant_label = cluster.domain + "tenant"
    for obj in synced:
        if obj["kind"] == "Namespace" and tenant_label in obj["metadata"].get("labels", {}):
            tenants.setdefault(obj["metadata"]["labels"][tenant_label], []).append(obj["metadata"]["name"])
    by_namespace = {ns: names for names in tenants.values() for ns in names}
    for obj in (m.obj for a in result.artifacts if a.template for m in a.manifests):
        roles = []
        for name, replicas, template in roles_of(obj):
            pod = {"spec": template["spec"]}
            admitted = [[n["metadata"]["name"] for n in nodes] for nodes, _ in groups
                        if node_affinity_filter(pod, nodes[0]).admit and taint_filter(pod, nodes[0]).admit]  # fmt: skip
            if not admitted:
                raise SystemExit(f"template {obj['metadata']['name']}: no node admits its pods")
            roles.append(Role(name, replicas, template, [n for names in admitted for n in names]))
        cluster.templates.append(Template(obj, roles, by_namespace[obj["metadata"]["namespace"]]))
    return cluster


# --- placement ---------------------------------------------------------------------------------------------------


def limit_range_defaults(spec: dict, limit_ranges: list[dict]) -> dict:
    """A pod spec with its containers' requests and limits as the API server (a request defaults to its limit) and
    the LimitRanger admission plugin (the namespace's Container defaults) leave them."""
    spec = copy.deepcopy(spec)
    for container in spec["containers"]:
        resources = container.setdefault("resources", {})
        limits, requests = resources.get("limits", {}), resources.get("requests", {})
        for resource, value in limits.items():
            requests.setdefault(resource, value)
        for limit_range in limit_ranges:
            for item in limit_range["spec"]["limits"]:
                if item.get("type") == "Container":
                    for resource, value in item.get("default", {}).items():
                        limits.setdefault(resource, value)
                    for resource, value in item.get("defaultRequest", {}).items():
                        requests.setdefault(resource, value)
        resources.update({k: v for k, v in (("limits", limits), ("requests", requests)) if v})
    return spec


class Placement:
    """Where copies go: what is left of each node's allocatable, each namespace's quotas, each queue's capability."""

    def __init__(self, cluster: Cluster):
        self.nodes = {name: Budget({("pods" if k == "pods" else f"requests.{k}"): parse(v) for k, v in a.items()})
                      for name, a in cluster.allocatable.items()}  # fmt: skip
        self.quotas: dict[str, list[tuple[dict, Budget]]] = {}
        self.limit_ranges: dict[str, list[dict]] = {}
        self.queues: dict[str, Budget] = {}
        self.priorities = {o["metadata"]["name"]: o for o in cluster.synced if o["kind"] == "PriorityClass"}
        for obj in cluster.synced:
            namespace = obj["metadata"].get("namespace")
            if obj["kind"] == "ResourceQuota":
                hard = {quota_key(k): parse(v) for k, v in obj["spec"]["hard"].items()}
                self.quotas.setdefault(namespace, []).append((obj, Budget(hard)))
            elif obj["kind"] == "LimitRange":
                self.limit_ranges.setdefault(namespace, []).append(obj)
            elif obj["kind"] == "Queue" and "capability" in obj["spec"]:
                capability = {f"requests.{k}": parse(v) for k, v in obj["spec"]["capability"].items()}
                self.queues[obj["metadata"]["name"]] = Budget(capability)
        self.cursor: dict[int, int] = {}
        """Per role (by id): where the search for a node with room starts (the last node that had some)."""
        self.turns: dict[int, int] = {}
        """Per role (by id): how many finished pods it has had, to spread them over its nodes."""
        self._needs: dict[tuple[int, str], dict] = {}

    def need(self, role: Role, namespace: str) -> dict:
        key = (id(role), namespace)
        if key not in self._needs:
            spec = limit_range_defaults(role.template["spec"], self.limit_ranges.get(namespace, []))
            self._needs[key] = requests_and_limits(spec)
        return self._needs[key]

    def budgets(self, role: Role, namespace: str) -> list[Budget]:
        """The quotas and queue a pod of `role` in `namespace` counts against."""
        priority_class = role.template["spec"].get("priorityClassName") or self.default_priority_class()
        found = [budget for quota, budget in self.quotas.get(namespace, []) if scope_matches(quota, priority_class)]
        queue = role.template.get("metadata", {}).get("annotations", {}).get("scheduling.volcano.sh/queue-name")
        return found + ([self.queues[queue]] if queue in self.queues else [])

    def default_priority_class(self) -> str:
        return next((n for n, pc in self.priorities.items() if pc.get("globalDefault")), "")

    def run(self, template: Template, namespace: str) -> list[tuple[Role, str]] | None:
        """Place a running copy's pods (taking what they use), or None if it does not fit now."""
        taken: list[tuple[Budget, dict]] = []
        placed = []
        for role in template.roles:
            need = self.need(role, namespace)
            for _ in range(role.replicas):
                node = self._node(role, need)
                budgets = self.budgets(role, namespace)
                if node is None or not all(b.fits(need) for b in budgets):
                    for budget, given in taken:
                        budget.give(given)
                    return None
                for budget in [self.nodes[node], *budgets]:
                    budget.take(need)
                    taken.append((budget, need))
                placed.append((role, node))
        return placed

    def _node(self, role: Role, need: dict) -> str | None:
        """The first node from the role's cursor on with room for the pod (first fit, as binpacking would)."""
        start = self.cursor.get(id(role), 0)
        count = len(role.nodes)
        for step in range(count):
            name = role.nodes[(start + step) % count]
            if self.nodes[name].fits(need):
                self.cursor[id(role)] = (start + step) % count
                return name
        return None

    def finished(self, template: Template) -> list[tuple[Role, str]]:
        """Nodes for a finished copy's pods: in turns over those each role may run on (they hold nothing now)."""
        placed = []
        for role in template.roles:
            for _ in range(role.replicas):
                index = self.turns.get(id(role), 0)
                placed.append((role, role.nodes[index % len(role.nodes)]))
                self.turns[id(role)] = index + 1
        return placed


def plan_copies(cluster: Cluster, placement: Placement, pods: int, server: Server) -> list[Copy]:
    """Copies of the templates in turns, running while they fit, then finished copies of the batch templates, until
    `pods` pods (a copy is whole: fewer if no copy fits in what is left)."""
    copies: list[Copy] = []
    count = itertools.count()
    total = 0

    def add(template: Template, namespace: str, placed: list[tuple[Role, str]], done: bool) -> None:
        nonlocal total
        index = next(count)
        name = f"{template.obj['metadata']['name']}-c{index:05d}"
        made = Copy(template, name, namespace, server.uid(), 26 + index // 20, done=done)
        if template.obj["kind"] == "Deployment":
            made.replica_set = (server.suffix(10), server.uid())
        replica = {id(role): itertools.count() for role in template.roles}
        for role, node in placed:
            i = next(replica[id(role)])
            made.pods.append((role, i, pod_name(made, role, i, server), node))
        copies.append(made)
        total += len(placed)

    running = list(cluster.templates)
    turn = 0
    while running:
        for template in list(running):
            namespaces = template.namespaces[turn % len(template.namespaces) :] + template.namespaces
            placed = next(((ns, p) for ns in namespaces if total + template.size <= pods
                           and (p := placement.run(template, ns))), None)  # fmt: skip
            if placed is None:
                running.remove(template)
            else:
                add(template, placed[0], placed[1], done=False)
        turn += 1
    finished = [t for t in cluster.templates if t.batch]
    while finished:
        for template in list(finished):
            if total + template.size > pods:
                finished.remove(template)
            else:
                namespace = template.namespaces[turn % len(template.namespaces)]
                add(template, namespace, placement.finished(template), done=True)
        turn += 1
    return copies


def pod_name(made: Copy, role: Role, index: int, server: Server) -> str:
    """A pod's name as its controller makes it: Volcano `<job>-<task>-<i>`, the training operator
    `<job>-<replica type>-<i>`, a ReplicaSet `<deployment>-<hash>-<random>`."""
    if made.replica_set:
        return f"{made.name}-{made.replica_set[0]}-{server.suffix(5)}"
    return f"{made.name}-{role.name}-{index}"


def copy_object(made: Copy, server: Server) -> dict:
    """The copy as the team applied it (its template, renamed into its namespace) and the API server keeps it."""
    obj = copy.deepcopy(made.template.obj)
    obj["metadata"]["name"], obj["metadata"]["namespace"] = made.name, made.namespace
    out = applied(obj, server, made.seconds)
    out["metadata"]["uid"] = made.uid
    if made.replica_set:
        replicas, since = out["spec"]["replicas"], out["metadata"]["creationTimestamp"]
        out["status"] = {  # its pods are bound, not ready: as in the recorded dumps (no kubelet reports them)
            "conditions": [
                {"lastTransitionTime": since, "lastUpdateTime": since, "message": "Deployment does not have minimum "
                 "availability.", "reason": "MinimumReplicasUnavailable", "status": "False", "type": "Available"},
                {"lastTransitionTime": since, "lastUpdateTime": since, "message": f'ReplicaSet "{made.name}-'
                 f'{made.replica_set[0]}" is progressing.', "reason": "ReplicaSetUpdated", "status": "True",
                 "type": "Progressing"},
            ],
            "observedGeneration": 1, "replicas": replicas, "terminatingReplicas": 0, "unavailableReplicas": replicas,
            "updatedReplicas": replicas,
        }  # fmt: skip
    return out


def pod_object(made: Copy, pod: tuple[Role, int, str, str], placement: Placement, server: Server) -> dict:
    """A pod as its controller made it from the copy, admission (LimitRanger, DefaultTolerationSeconds, the service
    account's token volume, priority) and defaulting left it, and the scheduler bound it."""
    role, replica, name, node = pod
    template = role.template
    spec = limit_range_defaults(template["spec"], placement.limit_ranges.get(made.namespace, []))
    pod_spec_defaults(spec)
    meta = template.get("metadata", {})
    labels, annotations = dict(meta.get("labels", {})), dict(meta.get("annotations", {}))
    owner = {"apiVersion": made.template.obj["apiVersion"], "blockOwnerDeletion": True, "controller": True,
             "kind": made.template.obj["kind"], "name": made.name, "uid": made.uid}  # fmt: skip
    metadata = {"name": name, "namespace": made.namespace}
    if made.replica_set:
        labels["pod-template-hash"] = made.replica_set[0]
        owner.update(apiVersion="apps/v1", kind="ReplicaSet", name=f"{made.name}-{made.replica_set[0]}",
                     uid=made.replica_set[1])  # fmt: skip
        metadata["generateName"] = f"{made.name}-{made.replica_set[0]}-"
    elif made.template.obj["kind"] == "PyTorchJob":
        labels.update({"training.kubeflow.org/job-name": made.name, "training.kubeflow.org/operator-name":
                       "pytorchjob-controller", "training.kubeflow.org/replica-index": str(replica),
                       "training.kubeflow.org/replica-type": role.name})  # fmt: skip
        if role.name == "master":
            labels["training.kubeflow.org/job-role"] = "master"
    else:
        queue = made.template.obj["spec"].get("queue", "")
        labels.update({"volcano.sh/job-name": made.name, "volcano.sh/job-namespace": made.namespace,
                       "volcano.sh/queue-name": queue, "volcano.sh/task-spec": role.name})  # fmt: skip
        annotations.update({"scheduling.k8s.io/group-name": f"{made.name}-{made.uid}",
                            "scheduling.volcano.sh/queue-name": queue, "volcano.sh/job-name": made.name,
                            "volcano.sh/task-index": str(replica), "volcano.sh/task-spec": role.name})  # fmt: skip
        spec["hostname"] = name
    metadata.update(annotations=annotations, labels=labels, ownerReferences=[owner])
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    server.metadata(obj, made.seconds)
    admitted(spec, placement, server)
    spec["nodeName"] = node
    return {**obj, "status": {
        "conditions": [{"lastProbeTime": None, "lastTransitionTime": stamp(made.seconds), "status": "True",
                        "type": "PodScheduled"}],
        "phase": "Succeeded" if made.done else "Pending",
        "qosClass": qos_class(spec),
    }}  # fmt: skip


def admitted(spec: dict, placement: Placement, server: Server) -> None:
    """What admission adds to a pod spec: its priority, the default NoExecute tolerations, the service account and
    its token volume (mounted in every container)."""
    name = spec.get("priorityClassName") or placement.default_priority_class()
    priority_class = placement.priorities.get(name, {})
    if name:
        spec["priorityClassName"] = name
    spec["priority"] = priority_class.get("value", 0)
    spec["preemptionPolicy"] = priority_class.get("preemptionPolicy", "PreemptLowerPriority")
    spec["enableServiceLinks"] = True
    spec["serviceAccount"] = spec["serviceAccountName"] = "default"
    tolerations = spec.setdefault("tolerations", [])
    for default in NOT_READY_TOLERATIONS:
        if not any(t.get("key") == default["key"] and t.get("effect") in (None, "", "NoExecute") for t in tolerations):
            tolerations.append(dict(default))
    volume = f"kube-api-access-{server.suffix(5)}"
    for container in spec["containers"]:
        mount = {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": volume, "readOnly": True}
        container.setdefault("volumeMounts", []).append(mount)
    spec.setdefault("volumes", []).append({"name": volume, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                    "path": "namespace"}]}},
        {"configMap": {"items": [{"key": "service-ca.crt", "path": "service-ca.crt"}],
                       "name": "openshift-service-ca.crt"}},
    ]}})  # fmt: skip


def qos_class(spec: dict) -> str:
    """Guaranteed: every container's cpu and memory requests equal their limits; BestEffort: none set."""
    resources = [c.get("resources", {}) for c in spec["containers"]]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        r.get("limits", {}).get(k) is not None and parse(r["limits"][k]) == parse(r.get("requests", {}).get(k, "0"))
        for r in resources
        for k in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


# --- the dump ----------------------------------------------------------------------------------------------------


def quota_status(quota: dict, copies: list[Copy], placement: Placement) -> dict:
    """A quota's status as the quota controller keeps it: its hard, and what its namespace's running pods use."""
    namespace, hard = quota["metadata"]["namespace"], quota["spec"]["hard"]
    used = {key: parse("0") for key in hard}
    for made in copies:
        if made.done or made.namespace != namespace:
            continue
        for role, *_ in made.pods:
            priority_class = role.template["spec"].get("priorityClassName") or placement.default_priority_class()
            if scope_matches(quota, priority_class):
                need = placement.need(role, namespace)
                used = {key: value + need.get(quota_key(key), parse("0")) for key, value in used.items()}
    return {"hard": dict(hard), "used": {key: str(value) for key, value in used.items()}}


def stored_objects(cluster: Cluster, copies: list[Copy], placement: Placement, server: Server) -> list[dict]:
    """Every object but the pods and the copies, in the order they were made: the control plane's own, the build's
    (cluster-scoped first, as they were applied), the nodes."""
    namespaces = {o["metadata"]["name"] for o in cluster.synced if o["kind"] == "Namespace"}
    used = {o["metadata"]["namespace"] for o in cluster.synced if o["metadata"].get("namespace")}
    made = []
    for name in sorted(set(SYSTEM_NAMESPACES) | (used - namespaces)):
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        server.metadata(namespace, 0 if name in SYSTEM_NAMESPACES else 8)
        _namespace(namespace)
        made.append(namespace)
    tracking = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"since": START.strftime("%Y-%m-%d")},
                "metadata": {"name": "kube-apiserver-legacy-service-account-token-tracking",
                             "namespace": "kube-system"}}  # fmt: skip
    server.metadata(tracking, 0)
    made.append(tracking)
    for obj in sorted(cluster.synced, key=lambda o: "namespace" in o["metadata"] and o["kind"] != "Namespace"):
        made.append(applied(obj, server, 12 if "namespace" in obj["metadata"] else 8))
        if obj["kind"] == "ResourceQuota":
            made[-1]["status"] = quota_status(obj, copies, placement)
    for node in cluster.nodes:
        server.metadata(node, 14)
        made.append(node)
    return made


@dataclass(frozen=True)
class Drift:
    """A drift applied to the dump, described as a recorded drift's expect.json describes it."""

    category: str
    kind: str
    namespace: str | None
    name: str
    drift: str

    def expected(self) -> dict:
        objects = [{"kind": self.kind, "namespace": self.namespace, "name": self.name}]
        return {"category": self.category, "objects": objects, "drift": self.drift}


def apply_drifts(stored: list[dict], server: Server, domain: str) -> list[Drift]:
    """Seven drifts of the recorded kinds, at places that depend on the policy only (`server` makes the new objects'
    uids, so that the rest of the dump is the clean one's): on the first node (by name) of the first three pools a
    policy label removed, a policy taint removed, half its GPUs gone; a GPU node in no pool joined; the first
    namespace's quota edited, and a stale copy of it; its first LimitRange deleted."""
    pool_label = domain + "node.pool"
    first: dict[str, dict] = {}
    for node in sorted((o for o in stored if o["kind"] == "Node"), key=lambda o: o["metadata"]["name"]):
        if pool_label in node["metadata"]["labels"]:
            first.setdefault(node["metadata"]["labels"][pool_label], node)
    unlabelled, untainted, short = (first[pool] for pool in sorted(first)[:3])
    joined = copy.deepcopy(short)
    meta = joined["metadata"]
    meta["name"] = meta["labels"]["kubernetes.io/hostname"] = "gpu-new-01"
    meta["labels"] = {k: v for k, v in meta["labels"].items() if not k.startswith(domain)}
    del meta["annotations"]
    joined["spec"] = {}
    server.metadata(joined, 60)
    drifts = [Drift("unmanaged-node", "Node", None, "gpu-new-01", "a GPU node joined with the labels GPU Feature "
                    "Discovery gives it and none of the policy's labels or taints; it is in no pool")]  # fmt: skip

    name = unlabelled["metadata"]["name"]
    was = unlabelled["metadata"]["labels"].pop(pool_label)
    drifts.append(
        Drift("node-labels", "Node", None, name, f"node {name} lost its policy label {pool_label} (was {was})")
    )
    name = untainted["metadata"]["name"]
    taint = next(t for t in untainted["spec"]["taints"] if t["key"].startswith(domain))
    untainted["spec"]["taints"].remove(taint)
    drifts.append(Drift("node-taints", "Node", None, name, f"node {name} lost its policy taint {taint['key']}"))
    name, status = short["metadata"]["name"], short["status"]
    gpu = next(k for k in status["capacity"] if k not in DEFAULT_NODE and k not in ("cpu", "memory"))
    for figures in (status["capacity"], status["allocatable"]):
        figures[gpu] = str(int(figures[gpu]) // 2)
    drifts.append(Drift("node-shape", "Node", None, name, f"node {name} reports {status['capacity'][gpu]} {gpu}, "
                        "half its pool's"))  # fmt: skip

    quota = min((o for o in stored if o["kind"] == "ResourceQuota" and "scopeSelector" not in o["spec"]), key=sort_key)
    namespace, name = quota["metadata"]["namespace"], quota["metadata"]["name"]
    stale = copy.deepcopy(quota)
    stale["metadata"] = {k: v for k, v in quota["metadata"].items() if k in ("labels", "namespace")}
    stale["metadata"]["name"] = f"{name}-v1"
    server.metadata(stale, 60)
    key = next(k for k in quota["spec"]["hard"] if k.startswith("requests.") and k not in ("requests.cpu",
               "requests.memory"))  # fmt: skip
    for figures in (quota["spec"]["hard"], quota["status"]["hard"]):
        figures[key] = str(int(figures[key]) * 2)
    limit_range = min((o for o in stored if o["kind"] == "LimitRange"), key=sort_key)
    stored.remove(limit_range)
    stored += [joined, stale]
    return [*drifts,
        Drift("object-changed", "ResourceQuota", namespace, name, f"spec.hard[{key}] doubled with kubectl patch"),
        Drift("object-stale", "ResourceQuota", namespace, f"{name}-v1", "a copy of the quota under another name "
              "with policyc's ownership labels, which the build does not have"),
        Drift("object-missing", "LimitRange", limit_range["metadata"]["namespace"], limit_range["metadata"]["name"],
              "deleted with kubectl delete"),
    ]  # fmt: skip


def kind_key(group_kind: tuple[str, str]) -> tuple[int, str, str]:
    """Where a kind's objects come in the dump: the recorded dumps' kinds first, in their order, then by name."""
    return (KIND_ORDER.index(group_kind), "", "") if group_kind in KIND_ORDER else (len(KIND_ORDER), *group_kind)


def group_kind(obj: dict) -> tuple[str, str]:
    return obj["apiVersion"].rpartition("/")[0], obj["kind"]


def dump_objects(
    cluster: Cluster, copies: list[Copy], placement: Placement, server: Server, drifts: list
) -> Iterator[dict]:
    """Every object of the cluster, in kubectl's order; pods and copies made as they are yielded. `drifts`: None for
    the clean cluster, else a list that gets the drifts applied."""
    stored = stored_objects(cluster, copies, placement, server)
    if drifts is not None:
        drifts += apply_drifts(stored, server.aside(), cluster.domain)
    by_kind: dict[tuple[str, str], list] = {}
    for obj in stored:
        by_kind.setdefault(group_kind(obj), []).append(obj)
    pods = [(made.namespace, pod[2], made, pod) for made in copies for pod in made.pods]
    by_kind[("", "Pod")] = pods
    for made in copies:
        by_kind.setdefault(group_kind(made.template.obj), []).append(made)
    for kind in sorted(by_kind, key=kind_key):
        if kind == ("", "Pod"):
            for *_, made, pod in sorted(pods, key=lambda p: (p[0], p[1])):
                yield pod_object(made, pod, placement, server)
            continue
        for item in sorted(by_kind[kind], key=sort_key):
            yield copy_object(item, server) if isinstance(item, Copy) else item


def sort_key(item: dict | Copy) -> tuple[str, str]:
    if isinstance(item, Copy):
        return item.namespace, item.name
    return item["metadata"].get("namespace", ""), item["metadata"]["name"]


def write_list(path: Path, objects: Iterable[dict]) -> int:
    """Write a `v1` `List` of `objects` as kubectl prints it (4-space indent), one object at a time; the count."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        for count, obj in enumerate(objects, 1):
            out.write(("" if count == 1 else ",\n") + "        " + go_json(obj, 4).replace("\n", "\n        "))
        out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
    return count


@dataclass(frozen=True)
class Written:
    """What `write_dump` wrote."""

    objects: int
    pods: int
    running_pods: int
    nodes: int
    bytes: int
    seconds: float
    drifts: tuple[Drift, ...] = ()

    @property
    def summary(self) -> str:
        return (f"{self.objects:,} objects ({self.nodes:,} nodes, {self.pods:,} pods, {self.running_pods:,} running), "
                f"{self.bytes / 2**20:,.0f} MiB in {self.seconds:.1f} s")  # fmt: skip


def write_dump(policy_path: Path, dump_path: Path, pods: int, seed: int = 1, drift: bool = False) -> Written:
    """Write the dump of the cluster the policy at `policy_path` describes, with `pods` pods (fewer when the
    policy's batch templates cannot make up the number in whole copies); with `drift`, the drifts of `apply_drifts`
    too."""
    start = time.perf_counter()
    cluster = build(policy_path)
    server = Server(seed)
    placement = Placement(cluster)
    copies = plan_copies(cluster, placement, pods, server)
    drifts: list[Drift] | None = [] if drift else None
    objects = write_list(dump_path, dump_objects(cluster, copies, placement, server, drifts))
    return Written(
        drifts=tuple(drifts or ()),
        objects=objects,
        pods=sum(len(c.pods) for c in copies),
        running_pods=sum(len(c.pods) for c in copies if not c.done),
        nodes=len(cluster.nodes),
        bytes=dump_path.stat().st_size,
        seconds=time.perf_counter() - start,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pools", type=int, default=100)
    parser.add_argument("--tenants", type=int, default=500)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--policy", type=Path, required=True, help="where to write the policy")
    parser.add_argument("--output", "-o", type=Path, required=True, help="where to write the dump")
    parser.add_argument("--drift", action="store_true", help="apply the drifts (listed in OUTPUT.drifts.json)")
    args = parser.parse_args()
    args.policy.write_text(policy(args.nodes, args.pools, args.tenants, args.workloads))
    written = write_dump(args.policy, args.output, args.pods, args.seed, args.drift)
    print(f"{args.output}: {written.summary}")
    if args.drift:
        listed = args.output.with_suffix(".drifts.json")
        listed.write_text(json.dumps([d.expected() for d in written.drifts], indent=2) + "\n")
        print(f"{listed}: {len(written.drifts)} drifts")


if __name__ == "__main__":
    main()

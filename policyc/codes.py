"""The catalogue of diagnostic codes.

Every diagnostic carries a stable code, which users match on (CI rules, code scanning's dismissed alerts, scripts
reading the JSON output). Each rule has two names that never change:

- its identity, ``<family>/<name>`` (``meaning/quota-below-queue``), as OPA's linter Regal names its rules by
  category: a family is a stage of the compiler or a backend, and holds any number of rules, so identities never
  run out;
- its code, what its diagnostics print: ``PCnnn`` for the rules numbered before identities came (the number is a
  permanent alias: never reused, renumbered or dropped), the identity itself for a rule added since. No new rule
  takes a number: PC4xx held 79 rules, and a new backend or family of backends would have no hundred left.

`lookup` finds a rule by either, or by its name alone. The families of the shared rules are `_SHARED_FAMILIES`, each
the family of one hundred's numbered rules (PC701 and PC702 are ``scheduler``'s); a shared rule without a number
states its family (``Rule(None, "name", ..., family="meaning")``). A backend's rules live in its package
(`<package>.codes.RULES`) and join the catalogue here, in the family named as the backend (`policyc.registry`): their
numbered codes are in a hundred of its own among PC6xx-PC8xx, with a few PC4xx.

`policyc codes` prints the catalogue, and one rule's explanation, example and fix (`policyc.commands.codes`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Rule:
    code: str | None
    """What its diagnostics print: its PCnnn, or (in the catalogue) its identity for a rule without a number."""
    name: str
    """Kebab-case, unique in the whole catalogue: checks create diagnostics by name (`policyc.diagnostics.diag`)."""
    severity: Severity
    summary: str
    family: str = ""
    """Set by the catalogue (see the module's docstring); stated only by a shared rule without a number."""

    @property
    def id(self) -> str:
        """Its identity, ``<family>/<name>``."""
        return f"{self.family}/{self.name}"

    @property
    def numbered(self) -> bool:
        """Whether its code is a PCnnn number (kept as an alias of its identity)."""
        return self.code is not None and "/" not in self.code


_SHARED_FAMILIES: dict[str, tuple[str, str]] = {
    "file": ("PC0", "reading the file: YAML syntax, encoding, size, tags, duplicate keys"),
    "shape": ("PC1", "the shape of the policy: unknown fields, types, required fields, allowed values"),
    "kubernetes": ("PC2", "Kubernetes syntax of names, labels, taints and quantities"),
    "reference": ("PC3", "references between parts of the policy, and uniqueness of names"),
    "meaning": ("PC4", "what the policy means: quotas, queues, priorities, pools, devices, Slurm, alerts, autoscaling"),
    "proof": ("PC5", "the proof: admission and placement of the emitted templates"),
    "scheduler": ("PC7", "the choice of scheduler backend"),
    "verify": ("PC9", "the compiler's own output failed verification (a policyc bug, or a limit of the target)"),
}
"""The families of the shared rules: name -> (the hundred of their numbered codes, what they are about)."""

_COMMAND_FAMILIES: dict[str, tuple[str, str]] = {
    "audit": ("policyc.audit.codes", "what `policyc audit` finds where a running cluster differs from its policy"),
}
"""Families of a command's own findings (not the compiler's): name -> (the module whose `RULES` they are, what they
are about); they join the catalogue after the backends'."""

_RULES: tuple[Rule, ...] = (
    # PC0xx: reading the file
    Rule("PC001", "unreadable-file", Severity.ERROR, "The policy file cannot be read."),
    Rule("PC002", "yaml-syntax", Severity.ERROR, "The file is not valid YAML."),
    Rule("PC003", "duplicate-key", Severity.ERROR, "A mapping defines the same key twice."),
    Rule("PC004", "multiple-documents", Severity.ERROR, "The file holds more than one YAML document."),
    Rule("PC005", "empty-document", Severity.ERROR, "The file holds no policy."),
    Rule(
        "PC006",
        "unsupported-yaml",
        Severity.ERROR,
        "The file uses a YAML feature policyc does not accept (tags, non-string keys).",
    ),
    Rule(
        "PC007",
        "input-too-large",
        Severity.ERROR,
        "The file, its nesting or its alias expansion exceeds policyc's input limits.",
    ),
    Rule("PC008", "encoding", Severity.ERROR, "The file is not UTF-8 text."),
    # PC1xx: shape of the policy
    Rule("PC101", "unknown-field", Severity.ERROR, "A field that the policy language does not define."),
    Rule("PC102", "wrong-type", Severity.ERROR, "A value of the wrong type."),
    Rule("PC103", "missing-field", Severity.ERROR, "A required field is missing."),
    Rule("PC104", "invalid-value", Severity.ERROR, "A value outside the allowed set or range."),
    Rule(
        "PC105",
        "unsupported-version",
        Severity.ERROR,
        "The Kubernetes version has no schemas to verify the output against.",
    ),
    # PC2xx: Kubernetes syntax
    Rule("PC201", "invalid-name", Severity.ERROR, "A name that Kubernetes would reject."),
    Rule("PC202", "invalid-label-key", Severity.ERROR, "A label or taint key that Kubernetes would reject."),
    Rule("PC203", "invalid-label-value", Severity.ERROR, "A label or taint value that Kubernetes would reject."),
    Rule("PC204", "invalid-quantity", Severity.ERROR, "A resource quantity that Kubernetes would reject."),
    Rule("PC205", "invalid-node-pattern", Severity.ERROR, "A node name range that cannot be expanded."),
    Rule("PC206", "invalid-resource-name", Severity.ERROR, "A resource name that Kubernetes would reject."),
    Rule(
        "PC207", "reserved-key", Severity.ERROR, "A label or taint key in a namespace that policyc or Kubernetes owns."
    ),
    # PC3xx: references and uniqueness
    Rule("PC301", "duplicate-name", Severity.ERROR, "Two items of one list share a name."),
    Rule("PC302", "unknown-gpu-tier", Severity.ERROR, "A reference to a GPU tier that is not defined."),
    Rule("PC303", "unknown-tenant", Severity.ERROR, "A reference to a tenant that is not defined."),
    Rule("PC304", "unknown-priority-class", Severity.ERROR, "A reference to a priority class that is not defined."),
    Rule("PC305", "unknown-parent-queue", Severity.ERROR, "A queue parent that is not another tenant's queue."),
    Rule("PC306", "unknown-namespace", Severity.ERROR, "A workload namespace that its tenant does not own."),
    Rule(
        "PC307", "node-in-two-pools", Severity.ERROR, "A node listed in two pools, or in a pool and the control plane."
    ),
    Rule("PC308", "product-without-tier", Severity.ERROR, "A pool's GPU product belongs to no GPU tier."),
    Rule("PC309", "product-in-two-tiers", Severity.ERROR, "A GPU product is listed in two tiers."),
    Rule("PC310", "namespace-in-two-tenants", Severity.ERROR, "Two tenants claim the same namespace."),
    Rule(
        "PC311",
        "priority-class-not-allowed",
        Severity.ERROR,
        "A workload uses a priority class its tenant may not use.",
    ),
    Rule("PC312", "unknown-pool", Severity.ERROR, "A reference to a node pool that is not defined."),
    # PC4xx: meaning
    Rule(
        "PC401",
        "quota-extended-resource-limit",
        Severity.ERROR,
        "A quota limits an extended resource (such as a GPU) other than through requests.",
    ),
    Rule(
        "PC402", "guarantee-above-deserved", Severity.ERROR, "A queue guarantees more of a resource than it deserves."
    ),
    Rule(
        "PC403",
        "deserved-above-capability",
        Severity.ERROR,
        "A queue deserves more of a resource than its capability allows.",
    ),
    Rule(
        "PC404",
        "duplicate-resource",
        Severity.ERROR,
        "A resource map names the GPU both as 'gpu' and by its resource name.",
    ),
    Rule("PC405", "priority-value-out-of-range", Severity.ERROR, "A priority class value above what users may define."),
    Rule(
        "PC406",
        "reserved-priority-class-name",
        Severity.ERROR,
        "A priority class name with the reserved 'system-' prefix.",
    ),
    Rule("PC407", "several-global-defaults", Severity.ERROR, "More than one priority class is globalDefault."),
    Rule(
        "PC409",
        "non-integer-quantity",
        Severity.ERROR,
        "A fractional quantity of a resource that only comes in whole units.",
    ),
    Rule(
        "PC410",
        "forbidden-default-priority",
        Severity.WARNING,
        "A tenant may not use the cluster's default priority class, so its pods must name one.",
    ),
    Rule(
        "PC411",
        "limit-range-inconsistent",
        Severity.ERROR,
        "A limit range whose default request exceeds its default limit, or similar.",
    ),
    Rule(
        "PC412",
        "reserved-domain",
        Severity.ERROR,
        "The label domain is one Kubernetes or another system (GPU vendors, schedulers, feature discovery) owns.",
    ),
    Rule(
        "PC413",
        "workload-without-gpus-per-node",
        Severity.ERROR,
        "A workload asks for more GPUs per pod than any node of its tier has.",
    ),
    # PC41x-PC42x: cluster-wide totals and queue trees
    Rule(
        "PC414",
        "guarantee-exceeds-capacity",
        Severity.ERROR,
        "Queues guarantee more of a resource than the pools that can serve them have.",
    ),
    Rule(
        "PC415",
        "quota-overcommit",
        Severity.WARNING,
        "Namespace quotas together allow more of a resource than the cluster has.",
    ),
    Rule("PC416", "tier-without-pools", Severity.WARNING, "A GPU tier that no node pool provides."),
    Rule(
        "PC418",
        "children-exceed-parent",
        Severity.ERROR,
        "Child queues together guarantee or deserve more than their parent.",
    ),
    Rule(
        "PC419", "child-capability-above-ancestor", Severity.ERROR, "A child queue's capability exceeds an ancestor's."
    ),
    Rule(
        "PC420",
        "workload-in-parent-queue",
        Severity.ERROR,
        "A workload submits to a queue that has child queues; the scheduler accepts jobs only in leaf queues.",
    ),
    Rule("PC422", "queue-cycle", Severity.ERROR, "Queue parents form a cycle."),
    Rule(
        "PC425",
        "pod-larger-than-nodes",
        Severity.ERROR,
        "A workload's pod asks for more cpu, memory or RDMA devices than the nodes of any pool it can use have.",
    ),
    Rule(
        "PC426",
        "workload-exceeds-pools",
        Severity.ERROR,
        "A workload's pods cannot all run at once on the nodes of the pools it can use.",
    ),
    Rule(
        "PC427",
        "workload-exceeds-queue",
        Severity.ERROR,
        "A workload's pods together need more than its queue's capability: the gang never starts.",
    ),
    Rule(
        "PC428",
        "workload-unsized",
        Severity.ERROR,
        "A workload states no cpu or memory request, and no pool it can use states the allocatable to size it from.",
    ),
    Rule(
        "PC429",
        "workload-resources-inconsistent",
        Severity.ERROR,
        "A workload's limits are below its requests, or differ from them under qos Guaranteed.",
    ),
    Rule(
        "PC430",
        "system-namespace",
        Severity.ERROR,
        "A tenant claims a namespace the cluster's own components live in (kube-system, the scheduler's, the GPU "
        "Operator's ...).",
    ),
    Rule(
        "PC431",
        "unknown-device-resource",
        Severity.WARNING,
        "An extended resource that no known device plugin advertises (a typo pods would wait on forever).",
    ),
    Rule(
        "PC432",
        "fractional-bytes",
        Severity.WARNING,
        "A memory or storage quantity with a fraction of a byte (512m is half a byte, not 512Mi).",
    ),
    Rule(
        "PC433",
        "toleration-of-everything",
        Severity.ERROR,
        "A workload toleration with no key and operator Exists: it tolerates every taint, cordoned and NotReady "
        "nodes included, forever.",
    ),
    Rule(
        "PC434",
        "priority-class-value-changed",
        Severity.WARNING,
        "A PriorityClass's value differs from the previous output: the API server refuses the change in place.",
    ),
    Rule(
        "PC435",
        "priority-class-name-too-long-for-quota",
        Severity.ERROR,
        "A priority class named in a tenant's quota scope is longer than 63 characters: the API server cannot "
        "match pods against that quota, and fails every pod create in the tenant's namespaces.",
    ),
    Rule(
        "PC436",
        "admission-needs-newer-kubernetes",
        Severity.ERROR,
        "An admission mode other than off on a Kubernetes version without ValidatingAdmissionPolicy v1 (before 1.30).",
    ),
    Rule(
        "PC437",
        "mutating-admission-needs-newer-kubernetes",
        Severity.ERROR,
        "mutatingAdmissionPolicyBeta on a Kubernetes version without MutatingAdmissionPolicy v1beta1 (before 1.34).",
    ),
    Rule(
        "PC438",
        "namespace-default-class-twice",
        Severity.ERROR,
        "Two workload classes are the default class of one namespace.",
    ),
    Rule(
        "PC439",
        "priority-class-quota-above-total",
        Severity.ERROR,
        "A tenant's quota for one priority class is above its quota for all its pods: it promises what the total "
        "refuses.",
    ),
    Rule(
        "PC440",
        "rdma-without-rdma-pool",
        Severity.ERROR,
        "A workload asks for RDMA and no pool it may use has RDMA.",
    ),
    Rule(
        "PC441",
        "rdma-resources-differ",
        Severity.ERROR,
        "The pools an RDMA workload may use name their RDMA resource differently: its pods can request only one.",
    ),
    Rule(
        "PC442",
        "shm-above-memory-limit",
        Severity.ERROR,
        "A workload's memory-backed /dev/shm is larger than its pods' memory limit, which it counts against.",
    ),
    Rule(
        "PC443",
        "several-shared-gpus-per-pod",
        Severity.WARNING,
        "A workload asks for several GPUs per pod on a pool whose cards are shared: it may get shares of one card.",
    ),
    Rule(
        "PC444",
        "mig-layout-invalid",
        Severity.ERROR,
        "A pool's MIG layout does not fit its card, names a profile the card lacks, mixes profiles under the single "
        "strategy, or partitions a card without MIG.",
    ),
    Rule(
        "PC445",
        "mig-strategies-differ",
        Severity.ERROR,
        "Pools use different MIG strategies; the GPU Operator has one for the cluster.",
    ),
    Rule(
        "PC446",
        "mig-profile-without-pool",
        Severity.ERROR,
        "A workload asks for a MIG profile no pool of its tier offers.",
    ),
    Rule(
        "PC447",
        "tier-mixes-vendors",
        Severity.ERROR,
        "A GPU tier groups pools whose accelerators have different vendors or resource names.",
    ),
    Rule(
        "PC448",
        "ambiguous-gpu-resource",
        Severity.ERROR,
        "'gpu' in a tenant's queue, quota or limit range where its workloads use accelerators of several resources "
        "(vendors): it must name each resource.",
    ),
    Rule(
        "PC449",
        "accelerator-feature-unsupported",
        Severity.ERROR,
        "MIG or device-plugin sharing on a pool whose accelerator is not NVIDIA's.",
    ),
    Rule(
        "PC450",
        "cpu-workload-incomplete",
        Severity.ERROR,
        "A workload names a GPU tier without gpus or gpus without a tier, or asks for no GPU without stating its cpu "
        "and memory (or a GPU feature such as migProfile).",
    ),
    Rule(
        "PC451",
        "dra-unsupported",
        Severity.ERROR,
        "A GPU tier allocated with DRA on a Kubernetes version without resource.k8s.io/v1 (before 1.34), with a pool "
        "NVIDIA's DRA driver cannot serve as whole cards (another vendor, MIG, sharing), or with a product selector "
        "longer than the API server takes.",
    ),
    Rule(
        "PC452",
        "dra-gpu-uncounted",
        Severity.ERROR,
        "GPUs of a DRA tier in a tenant's queue, limit range or per-priority-class quota: schedulers' queues, "
        "LimitRanges and scoped quotas count container resources, and DRA GPUs are claims.",
    ),
    Rule(
        "PC453",
        "mig-devices-uncounted",
        Severity.ERROR,
        "Under the MIG strategy mixed, a tenant whose quota or queue counts its GPUs runs MIG devices "
        "(nvidia.com/mig-<profile>) that it does not name there: its 'gpu' does not count them.",
    ),
    # PC460-PC469: Slurm partitions (nodePools[].slurm, spec.slurm)
    Rule(
        "PC460",
        "slurm-partition-conflict",
        Severity.ERROR,
        "Pools that name one Slurm partition give it different settings (default, maxTime, priorityClass).",
    ),
    Rule("PC461", "slurm-several-default-partitions", Severity.ERROR, "More than one Slurm partition is the default."),
    Rule(
        "PC462",
        "slurm-pool-unsized",
        Severity.ERROR,
        "A pool in a Slurm partition does not state the allocatable cpu (at least one CPU) and memory its NodeName "
        "line needs.",
    ),
    Rule(
        "PC463",
        "slurm-quota-above-partition",
        Severity.ERROR,
        "A tenant's quota for a Slurm partition's priority class allows more GPUs than the partitions of that class "
        "have.",
    ),
    Rule(
        "PC464",
        "slurm-only-pool-tolerated",
        Severity.ERROR,
        "A workload tolerates the taint of a Slurm-only pool of its tier: its pods could take GPUs Slurm schedules.",
    ),
    Rule(
        "PC465",
        "slurm-gres-unsupported",
        Severity.ERROR,
        "A Slurm pool whose GPUs policyc cannot describe to Slurm: MIG, another vendor than NVIDIA, or (under Slinky) "
        "GPUs claimed with DRA.",
    ),
    Rule(
        "PC466",
        "slurm-priority-tiers-tie",
        Severity.ERROR,
        "Partitions of priority classes with different values get one PriorityTier (both values outside 0..65533).",
    ),
    Rule(
        "PC467",
        "slurm-shared-pool-without-operator",
        Severity.WARNING,
        "A pool shared by Slurm and Kubernetes with no operator: slurmd and the device plugin both hand out its GPUs.",
    ),
    Rule(
        "PC468",
        "slurm-nodeset-refused-by-quota",
        Severity.ERROR,
        "Slinky's slurmd pods are refused in their namespace: a tenant's quota does not allow their priority class or "
        "their GPUs.",
    ),
    Rule(
        "PC469",
        "slinky-partition-of-several-pools",
        Severity.ERROR,
        "Under Slinky, a Slurm partition of several pools: Slinky makes one partition per NodeSet.",
    ),
    # PC470-PC479: GPU alerts (spec.monitoring)
    Rule(
        "PC470",
        "counter-function-on-gauge",
        Severity.ERROR,
        "An alert expression applies rate(), irate(), increase() or resets() to a gauge of the DCGM exporter (such as "
        "DCGM_FI_DEV_XID_ERRORS): those functions read counter resets into every drop.",
    ),
    Rule(
        "PC471",
        "xid-code-as-number",
        Severity.ERROR,
        "An alert expression adds, averages or differentiates DCGM_FI_DEV_XID_ERRORS, whose value is the code of the "
        "last XID error, not a count.",
    ),
    Rule(
        "PC472",
        "metric-not-exported",
        Severity.ERROR,
        "An alert expression reads a DCGM exporter metric that the exporter's counter file does not enable (the "
        "alert can never fire), or that does not exist.",
    ),
    Rule(
        "PC473",
        "gauge-function-on-counter",
        Severity.WARNING,
        "An alert expression applies delta(), idelta(), deriv() or predict_linear() to a counter of the DCGM exporter: "
        "they do not handle counter resets.",
    ),
    Rule(
        "PC474",
        "alert-not-generated",
        Severity.WARNING,
        "A pool gets no alert of a kind the thresholds ask for: its card's rated power is unknown, or its exporter "
        "reports no utilisation of MIG devices.",
    ),
    Rule(
        "PC475",
        "monitoring-setting-unused",
        Severity.WARNING,
        "A monitoring setting that applies to nothing: a rated power for a product no pool has, thresholds of a pool "
        "without NVIDIA GPUs, or GPU alerts in a policy without NVIDIA GPUs.",
    ),
    Rule(
        "PC476",
        "promql-malformed",
        Severity.ERROR,
        "An alert expression with unbalanced brackets, an unterminated string or a character PromQL does not have.",
    ),
    Rule(
        "PC477",
        "alerts-in-tenant-namespace",
        Severity.WARNING,
        "The GPU alerts go to a namespace a tenant owns: the tenant may edit or delete them.",
    ),
    # PC480-PC487: inference autoscaling
    Rule(
        "PC480",
        "autoscale-not-deployment",
        Severity.ERROR,
        "autoscale on a workload that is not an inference Deployment: training work and jobs do not autoscale.",
    ),
    Rule(
        "PC481",
        "autoscale-with-replicas",
        Severity.ERROR,
        "A workload states replicas beside autoscale: the autoscaler sets the Deployment's replicas.",
    ),
    Rule("PC482", "autoscale-max-below-min", Severity.ERROR, "An autoscaler whose max is below its min."),
    Rule(
        "PC483",
        "autoscale-scale-to-zero-unsupported",
        Severity.ERROR,
        "autoscale.min 0 where the autoscaler cannot scale to zero: a HorizontalPodAutoscaler (its scale to zero is "
        "behind the alpha HPAScaleToZero gate), or KEDA with CPU alone (KEDA's webhook refuses it).",
    ),
    Rule(
        "PC484",
        "autoscale-metric-unsupported",
        Severity.ERROR,
        "An autoscaler with no metric, a Prometheus query without KEDA, or a custom-metrics-API metric with KEDA.",
    ),
    Rule(
        "PC485",
        "autoscale-cpu-unreachable",
        Severity.ERROR,
        "A CPU target above what the pods' cpu limit lets them use (in percent of their request): the autoscaler "
        "never adds pods for CPU.",
    ),
    Rule(
        "PC486",
        "autoscale-exceeds-quota",
        Severity.ERROR,
        "An autoscaler's max pods exceed the tenant's namespace quota (or its priority class's): the pods beyond it "
        "are refused.",
    ),
    Rule(
        "PC487",
        "autoscale-name-too-long",
        Severity.ERROR,
        "A KEDA-autoscaled workload whose name is too long for the HorizontalPodAutoscaler KEDA names after it "
        "(keda-hpa-<name>, at most 63 characters).",
    ),
    # PC488-PC491: names that bind resources, and hardware facts
    Rule(
        "PC488",
        "unbound-resource",
        Severity.ERROR,
        "A resource in a quota, queue or limit range that no pool, tier or DeviceClass of the policy and no Kubernetes "
        "resource provides: it bounds nothing.",
    ),
    Rule(
        "PC489",
        "resource-of-unknown-plugin",
        Severity.WARNING,
        "A resource in a quota, queue or limit range that no pool of the policy states, of a device plugin or DRA "
        "driver policyc cannot know: it bounds something only if one provides it.",
    ),
    Rule(
        "PC490",
        "vendor-contradicts-product",
        Severity.ERROR,
        "A pool's GPU product is another vendor's than its gpu.vendor (nvidia when omitted).",
    ),
    Rule(
        "PC491",
        "gfd-renamed-product",
        Severity.ERROR,
        "A GPU product as GPU Feature Discovery renames it on MIG or shared nodes (-MIG-<profile>, -SHARED), not the "
        "card's name.",
    ),
    # PC493-PC495: fields that do nothing where they stand, and units that say what was not meant
    Rule(
        "PC493",
        "no-effect",
        Severity.WARNING,
        "A field that has no effect where it stands (docs/language.md lists them).",
    ),
    Rule(
        "PC494",
        "decimal-memory-unit",
        Severity.WARNING,
        "A memory amount with a decimal suffix (M, G, T ...) where the binary one (Mi, Gi, Ti ...) is almost certainly "
        "meant: 32G is 7 % less than 32Gi.",
    ),
    Rule(
        "PC496",
        "quota-below-queue",
        Severity.WARNING,
        "A tenant's queue admits more gangs at once than its namespace quota holds: a gang admitted by the queue gets "
        "only part of its pods, and waits holding quota no other job can use.",
    ),
    # PC5xx: placement proof
    Rule(
        "PC501",
        "placement-wrong-usage",
        Severity.ERROR,
        "A workload template can land on a pool of the other usage (training on inference or the reverse).",
    ),
    Rule(
        "PC502", "placement-wrong-tier", Severity.ERROR, "A workload template can land on a pool of another GPU tier."
    ),
    Rule("PC503", "placement-control-plane", Severity.ERROR, "A workload template can land on control-plane nodes."),
    Rule("PC504", "placement-nowhere", Severity.ERROR, "A workload template can land on no node of the policy."),
    Rule(
        "PC505",
        "placement-prefers-hybrid",
        Severity.WARNING,
        "A workload template prefers a hybrid pool over its dedicated one.",
    ),
    Rule(
        "PC506",
        "template-refused-by-admission",
        Severity.ERROR,
        "A template's pods are refused in their namespace by admission (LimitRange, ResourceQuota, priority).",
    ),
    Rule(
        "PC507",
        "workload-exceeds-quota",
        Severity.ERROR,
        "A workload's pods together exceed their namespace's ResourceQuota: the last ones are refused.",
    ),
    Rule(
        "PC508",
        "node-agent-untolerated",
        Severity.ERROR,
        "A node agent (a DaemonSet the GPU nodes need, e.g. the device plugin) does not tolerate a taint of nodes "
        "it must run on.",
    ),
    Rule(
        "PC509",
        "toleration-beyond-grant",
        Severity.ERROR,
        "A workload tolerates a taint beyond what the policy grants its class (operator Exists on a pool taint's "
        "key, the control plane, another usage, tier or pool): it would reach pools it may not use, and its tenant's "
        "admission policy refuses its pods.",
    ),
    Rule(
        "PC701",
        "kind-not-supported-by-backend",
        Severity.ERROR,
        "A workload kind the chosen scheduler backend cannot run.",
    ),
    Rule(
        "PC702",
        "setting-not-supported-by-backend",
        Severity.ERROR,
        "A scheduler setting of another backend than the one the policy selects.",
    ),
    # Rules added since identities came: no number, the family stated
    Rule(
        None,
        "pool-nodes-or-size",
        Severity.ERROR,
        "A pool states its nodes otherwise than its provisioning needs: names (nodes) for a static pool (and a Slurm "
        "partition's), a size (count, or minNodes and maxNodes) for the others.",
        family="meaning",
    ),
    Rule(
        None,
        "settings-of-another-provisioner",
        Severity.ERROR,
        "A pool states the block of settings of a node provisioner it does not use (nodePools[].<provisioner>).",
        family="meaning",
    ),
    Rule(
        None,
        "guarantee-waits-for-scale-up",
        Severity.WARNING,
        "Queue guarantees above what the pools they can use hold at their minimum size: they are kept only once the "
        "pools have scaled up.",
        family="meaning",
    ),
    Rule(
        None,
        "label-kubelet-refuses",
        Severity.ERROR,
        "A label of a managed cloud pool (GKE, EKS, AKS) that a kubelet may not set on its own node (under "
        "kubernetes.io or k8s.io but the kubelet's own, node-restriction.kubernetes.io among them): the cloud gives a "
        "node its pool's labels through its kubelet, which refuses to start with it.",
        family="meaning",
    ),
    # A policy directory (policyc.language.teams): a platform document and the teams' documents
    Rule(
        None,
        "policy-directory",
        Severity.ERROR,
        "A policy directory holds no platform document (kind ClusterPolicy), or more than one.",
        family="file",
    ),
    Rule(
        None,
        "team-document",
        Severity.ERROR,
        "A document of a policy directory that is not a well-formed team document: kind Tenant, the platform's "
        "apiVersion, metadata.name, and a spec of tenants and workloads only.",
        family="shape",
    ),
    Rule(
        None,
        "team-claim-clash",
        Severity.ERROR,
        "A tenant, namespace or workload name that another document of the policy directory declared first.",
        family="reference",
    ),
    Rule(
        None,
        "team-foreign-tenant",
        Severity.ERROR,
        "A team's workload runs as a tenant its own document does not declare.",
        family="reference",
    ),
    Rule(
        None,
        "team-beyond-grant",
        Severity.ERROR,
        "A team asks for more than the platform's spec.teams grants: a priority class or GPU tier it does not list, "
        "or more of a resource than maxQuota.",
        family="meaning",
    ),
    # A fleet (policyc.language.fleet): a policy directory's cluster documents
    Rule(
        None,
        "cluster-document",
        Severity.ERROR,
        "A cluster document (kind Cluster) that is not well formed: the platform's apiVersion, metadata.name, a "
        "destination, and only the fields a cluster overrides.",
        family="shape",
    ),
    Rule(
        None,
        "cluster-name-clash",
        Severity.ERROR,
        "Two cluster documents of a policy directory name one cluster.",
        family="reference",
    ),
    Rule(
        None,
        "cluster-override-clash",
        Severity.ERROR,
        "A cluster document overrides one thing twice: a pool, hosted team or tenant override listed twice, or a "
        "pool added that the shared policy has already.",
        family="reference",
    ),
    Rule(
        None,
        "cluster-unknown-name",
        Severity.ERROR,
        "A cluster document replaces a pool the shared policy does not have, hosts a team no document declares, or "
        "overrides a tenant it does not have.",
        family="reference",
    ),
    Rule(
        None,
        "placement-fresh-node",
        Severity.ERROR,
        "A workload template can land on a node of a pool as it registers, before the pool's labels and taints are "
        "set: on a pool its class is not granted.",
        family="proof",
    ),
    # PC9xx: output verification
    Rule("PC901", "output-schema", Severity.ERROR, "An emitted object does not pass its Kubernetes or CRD schema."),
    Rule(
        "PC902",
        "tenancy-proof-failed",
        Severity.ERROR,
        "A tenant's admission policy lets a pod that breaks its placement contract through, or refuses one of its "
        "own templates.",
    ),
)


@cache
def _catalogue() -> tuple[dict[str, Rule], dict[str, Rule], dict[str, str]]:
    """(code -> rule, name -> rule, family -> what it is about) of policyc's rules and every registered backend's
    (`policyc.registry`), numbered codes first, in order, then the others by identity."""
    from policyc import registry

    family_of = {hundred: family for family, (hundred, _) in _SHARED_FAMILIES.items()}
    rules = [_member(r, r.family or family_of[(r.code or "")[:3]]) for r in _RULES]
    families = {family: about for family, (_, about) in _SHARED_FAMILIES.items()}
    for family, backends in registry.every_codes().items():
        for backend, module in backends.items():
            rules.extend(_member(r, backend) for r in module.RULES)
            families[backend] = f"the rules of the {family} backend '{backend}'"
    for family, (module, about) in _COMMAND_FAMILIES.items():
        rules.extend(_member(r, family) for r in importlib.import_module(module).RULES)
        families[family] = about
    by_code = {r.code: r for r in sorted(rules, key=lambda r: (not r.numbered, r.code))}
    return by_code, {r.name: r for r in by_code.values()}, families


def _member(rule: Rule, family: str) -> Rule:
    """`rule` as the catalogue holds it: in `family`, its code its identity when it has no number."""
    return replace(rule, family=family, code=rule.code or f"{family}/{rule.name}")


def __getattr__(name: str) -> dict[str, Rule] | dict[str, str]:
    """`RULES` (code -> rule), `BY_NAME` (name -> rule) and `FAMILIES` (family -> what it is about), built on first
    use rather than at import, so that a backend's `codes`, which imports this module, can be imported first."""
    if name == "RULES":
        return _catalogue()[0]
    if name == "BY_NAME":
        return _catalogue()[1]
    if name == "FAMILIES":
        return _catalogue()[2]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rule(name: str) -> Rule:
    """The rule with the given kebab-case name (a KeyError here is a programming error)."""
    return _catalogue()[1][name]


def lookup(text: str) -> Rule | None:
    """The rule `text` names, in any case: its code (``PC414``), its identity (``meaning/...``) or its name."""
    wanted = text.strip().lower()
    for r in _catalogue()[0].values():
        if wanted in (str(r.code).lower(), r.id, r.name):
            return r
    return None

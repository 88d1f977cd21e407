"""The KAI Scheduler backend (`backend`: its objects; `settings`; `codes`; `rules`: KAI's rules on a policy).

It compiles a policy for KAI v0.17 into a Queue (`scheduling.run.ai/v2`) per tenant under a parent Queue per
policy, and the placement strategy of the default SchedulingShard (`kai.scheduler/v1`).

A tenant's queue maps onto KAI like this (fact sheet §1.1):

- the tenant -> a Queue of its name; tenants without `queue.parent` sit under a parent Queue named after the
  policy (KAI takes jobs only in leaf queues, and a queue without a parent did not schedule in practice), a tenant
  with one under its parent tenant's Queue (`parentQueue`).
- guarantee -> `resources.<gpu|cpu|memory>.quota`, 0 where the tenant is not guaranteed the resource. KAI's quota
  is the queue's deserved share: served first (top-down through the tree) and reclaimed from queues using it
  beyond their own, but not held idle as Volcano's guarantee is: what a queue does not use, others may borrow
  until it is reclaimed. A parent tenant's quota is its guarantee, which includes its children's.
- capability -> `limit`, and `-1` (no limit) where there is none. `limit` is always written: KAI reads an omitted
  limit as 0, and a limit of 0 admits nothing of that resource.
- weight -> `overQuotaWeight` of every resource (KAI shares what is left after quotas by queue priority, then by
  this weight); priority -> `priority` (KAI's default, 100, when the policy sets none).
- reclaimable: false and a deserved share other than the guarantee have no KAI field: warnings (PC802).
- the policy's parent Queue: quota the sum of its children's quotas, limit -1, overQuotaWeight 1: it passes the
  tenants their quotas on and caps nothing.

Units: KAI's numbers are not Kubernetes quantities but JSON numbers: cpu in millicores (500m -> 500, 96 -> 96000),
memory in megabytes of 10^6 bytes (1000Gi -> 1073741.824), gpu in devices of the policy's GPU resource. A whole
value is written as an integer, any other as the nearest float (what KAI stores anyway). KAI queues know only these
three resources: a guarantee or capability of any other is an error (PC801); a GPU resource other than
nvidia.com/gpu is not what KAI counts as gpu (warning PC805).

Pods join through `schedulerName: kai-scheduler` and the label `kai.scheduler/queue: <tenant>` on their top owner
(the Job, Deployment or PyTorchJob; KAI reads the label there first). policyc does not emit KAI's `Config` singleton
`kai-config` (its CRD is not among the schemas policyc verifies against): it keeps its defaults,
`global.schedulerName: kai-scheduler` and `global.queueLabelKey: kai.scheduler/queue`, which the binding relies on.
KAI's pod-grouper makes the PodGroups: a PyTorchJob's minMember is its `runPolicy.schedulingPolicy.minAvailable`
(all its replicas: a gang); a batch Job's is the owner annotation `kai.scheduler/batch-min-member`, which its
template carries (its replicas).

KAI reads a workload's priority from its pods' PriorityClass (KAI's chart's `inference` (125) for a Deployment and
`train` (50) for other kinds when they have none) and runs work of priority 100 or more as non-preemptible: never
preempted or reclaimed, but only within its queue's quota. `rules` reports such a workload whose pods together need
more than the quota (PC804): with the usual GPU-only guarantees, its cpu and memory quota is 0.

Placement: the default SchedulingShard's `placementStrategy` (gpu and cpu, binpack or spread; KAI disables its
consolidation action when either is spread). KAI's Helm chart creates that shard; policyc's manifest sets its
strategy and nothing else. Not emitted: node-pool shards (KAI queues are not GPU-model aware; quota per GPU tier
would need a shard per node pool), and the Helm chart's `default-parent-queue` / `default-queue`, which policyc
leaves alone (a tenant of either name is an error, PC803).

Order: a Queue comes after its `parentQueue` (`backend.REFERENCES`, one Argo CD sync wave per level). KAI's Queue
webhook checks only that `spec.resources` is present on create and update, so a child applied first would be
stored all the same; the order keeps the tree whole at every step of a sync.
"""

"""The Apache YuniKorn backend (`backend`: its objects; `settings`; `codes`; `rules`: YuniKorn's rules on a policy;
`queues_conf`: a strict model of `queues.yaml`).

It compiles a policy for YuniKorn 1.9 into its queue configuration: the key `queues.yaml` of the ConfigMap
`yunikorn-configs` in YuniKorn's namespace (`yunikorn`, where its Helm chart installs it; the chart owns
`yunikorn-defaults` and leaves this one to the user; YuniKorn merges both, this one winning, and reloads it as it
changes). Fact sheet §1 and §4.

- One partition, `default`, its `root` queue open to everyone (`submitacl: '*'`; YuniKorn's core refuses resources
  on root); a queue per tenant under it, and a tenant with `queue.parent` nested in its parent tenant's queue.
- guarantee -> `resources.guaranteed`, capability -> `resources.max`, by YuniKorn's resource names: cpu is `vcore`,
  memory and extended resources (the GPU resource) keep their Kubernetes names; amounts are Kubernetes quantities.
  YuniKorn never preempts a queue below its guaranteed; a resource a queue does not list is unbounded there.
- queue.priority -> property `priority.offset`; reclaimable: false -> `preemption.policy: disabled` (its tasks are
  never preemption's victims); `spec.scheduler.applicationSort: fair` -> `application.sort.policy: fair` on the
  leaf queues (fifo, YuniKorn's default, is not written). YuniKorn has no queue weight and no deserved share apart
  from the guarantee: warnings.
- placement: the partition's `nodesortpolicy` (binpack -> `binpacking`, spread -> `fair`).
- one placement rule, `provided` without `create`: an application goes to the queue its pods name, which must
  exist; with no other rule, a pod naming no queue or an unknown one is refused. Each tenant's admission policy
  holds the pods of its namespaces to its own queue, so a tenant's namespaces land in its queue.

Pods join through `schedulerName: yunikorn` and their queue's full path (`root.<tenant>`): the labels
`yunikorn.apache.org/queue` and `queue` on the workload object, and the annotation `yunikorn.apache.org/queue` on its
pods. YuniKorn's shim (1.6 and later) reads a pod's queue from that label, then the legacy label `queue`, then the
annotation; its admission controller adds no queue of its own. The tenant's contract holds all three, wherever
set, to the queue.
A Job's or PyTorchJob's pods form one application (`yunikorn.apache.org/app-id`) with one task group of `gang`
members shaped as its pods (`yunikorn.apache.org/task-groups` and `task-group-name`): YuniKorn reserves the gang's
room with placeholder pods first; `spec.scheduler.gangStyle` (Soft, YuniKorn's default, or Hard) says what happens
when they time out. Priority comes from the pods' PriorityClass; the pods of the classes in
`spec.scheduler.nonPreemptibleClasses` carry `yunikorn.apache.org/allow-preemption: "false"`.

The placeholders live in the gang's namespace beside its waiting pods, under its ResourceQuotas (`rules` holds the
gang and its placeholders to them), with the queue label, the gang's placement and its pods' priority class, which
the tenant's admission policy admits.
"""

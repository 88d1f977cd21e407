"""Where a label of a pool comes from in the policy, for a provisioner's rules to locate what is wrong with it: a key
under the policy's domain from `spec.domain`, a label policyc derives from the pool (its vendor's, RDMA's, the GPU
Operator's) from the pool, and the rest from the pool's own `labels`."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.checks.label_domains import label_owners, outside_kubernetes
from policyc.diagnostics import Diagnostic, Path, diag
from policyc.ir import Cluster, Pool

KUBELET_KEYS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch", "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
})  # fmt: skip
"""The keys under kubernetes.io a kubelet may set on its own node (NodeRestriction; the shared fact sheet,
`node-provisioning.md` section 5)."""
KUBELET_DOMAINS = ("kubelet.kubernetes.io", "node.kubernetes.io")
"""The domains under kubernetes.io (and their subdomains) a kubelet may set labels in on its own node."""


def label_at(cluster: Cluster, pool: Pool, key: str) -> tuple[Path, bool]:
    """(where the label `key` of `pool` is written, whether at the key itself rather than its value)."""
    if key.startswith(cluster.keys.domain + "/"):
        return ("spec", "domain"), False
    if key in label_owners(cluster, pool):
        return pool.path, False
    return (*pool.path, "labels", key), True


def _within(prefix: str, domain: str) -> bool:
    return prefix == domain or prefix.endswith("." + domain)


def kubelet_refuses(key: str) -> bool:
    """Whether a kubelet refuses to set the label `key` on its own node (`--node-labels`): one under kubernetes.io or
    k8s.io but its own, node-restriction.kubernetes.io's among them."""
    prefix = key.rpartition("/")[0]
    if not (_within(prefix, "kubernetes.io") or _within(prefix, "k8s.io")) or key in KUBELET_KEYS:
        return False
    return not any(_within(prefix, d) for d in KUBELET_DOMAINS)


def kubelet_labels(cluster: Cluster, provisioner: str, title: str, skip: tuple[str, ...] = ()) -> Iterator[Diagnostic]:
    """The labels of the pools of a managed cloud (`provisioner`, named `title`) that the kubelet refuses: the cloud
    gives a node its pool's labels through its kubelet (`--node-labels`). A key under the policy's domain is said once,
    at the domain; a key starting with one of `skip` is left to a rule of the cloud's own."""
    told: set[str] = set()
    for pool in cluster.pools:
        if pool.provisioning != provisioner:
            continue
        for key in pool.labels:
            if not kubelet_refuses(key) or key.startswith(skip):
                continue
            path, at_key = label_at(cluster, pool, key)
            if path == ("spec", "domain"):
                if told:
                    continue
                told.add(key)
                what = f"the labels under the policy's domain '{cluster.keys.domain}' (such as '{key}') are ones"
                hint = (
                    f"use a domain of your own outside kubernetes.io, e.g. {outside_kubernetes(cluster.keys.domain)} "
                    "(a domain under node-restriction.kubernetes.io suits Cluster API and Karpenter, whose "
                    "controllers set the labels, not a cloud's node pool)"
                )
            else:
                what = f"label '{key}' of {title} pool '{pool.name}' is one"
                hint = f"use a key with a prefix of your own, e.g. 'example.org/{key.rpartition('/')[2]}'"
            yield diag(
                "label-kubelet-refuses",
                f"{what} a kubelet may not set on its own node: {title} gives a node its pool's labels through its "
                "kubelet (--node-labels), which refuses to start with them, so no node of the pool would join",
                path,
                at_key=at_key,
                hint=hint,
            )

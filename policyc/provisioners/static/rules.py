"""The static provisioner's rules on a policy: the taints of its pools that Node Feature Discovery refuses to set,
where the pools' NodeFeatureRules are on. The rule leaves them out, so a node that joins keeps its registration taint
(`nodes/release.sh` waits for every taint of its pool) until nodes/apply.sh sets them. A label NFD refuses is left
out too, and said so in docs/provisioning/static.md, but not reported: a node without it is released all the same,
and labels only draw pods (the kubelet's --node-labels or nodes/apply.sh set it)."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.checks.label_domains import outside_kubernetes
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.k8s.nfd import nfd_refuses_domain, nfd_refuses_taint, own_key_hint, pools_named
from policyc.provisioners.static.backend import NAME, rules_on
from policyc.tenancy.grant import own_taints


def not_set_by_nfd(cluster: Cluster) -> Iterator[Diagnostic]:
    if not rules_on(cluster):
        return
    for pool in cluster.pools:
        if pool.provisioning != NAME:
            continue
        for t in own_taints(cluster, pool):
            why = nfd_refuses_taint(t.key)
            if why is not None:
                yield diag(
                    "not-set-by-nfd",
                    f"taint '{t.key}' of static pool '{pool.name}' is left out of its NodeFeatureRule ({why}): a node "
                    "that joins keeps its registration taint until nodes/apply.sh sets it",
                    (*pool.path, "taints"),
                    hint=own_key_hint(t.key, "the tolerations of the workloads that run on the pool"),
                )


def domain_not_set_by_nfd(cluster: Cluster) -> Iterator[Diagnostic]:
    """The policy's domain NFD refuses (one under node-restriction.kubernetes.io, for Cluster API's label sync): said
    once, at the domain, for all the static pools, whose rules would then set none of policyc's own keys."""
    pools = [p.name for p in cluster.pools if p.provisioning == NAME]
    why = nfd_refuses_domain(cluster.keys.domain)
    if not rules_on(cluster) or not pools or why is None:
        return
    yield diag(
        "domain-not-set-by-nfd",
        f"the policy's domain '{cluster.keys.domain}' is one NFD sets nothing under ({why}): the NodeFeatureRules "
        f"of static {pools_named(pools)} leave out their usage, tier and pool labels and their "
        "usage taints, and a node that joins keeps its registration taint until nodes/apply.sh runs",
        ("spec", "domain"),
        hint="set spec.provisioning.static.nodeFeatureRules: false (nodes/apply.sh alone labels and taints the static "
        f"pools), or use a domain of your own outside kubernetes.io, e.g. {outside_kubernetes(cluster.keys.domain)}",
    )


CHECKS = (not_set_by_nfd, domain_not_set_by_nfd)

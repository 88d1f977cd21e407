"""Queue guarantees against the nodes the cluster has now: the capacity model of the checks
(`policyc.checks.cluster_capacity`), with each pool holding the nodes present of it instead of those it declares."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from policyc.checks.cluster_capacity import shortfalls
from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster, Pool


def check(cluster: Cluster, present: Iterable[str], pools: Mapping[str, Pool]) -> Iterator[Diagnostic]:
    """`present`: the names of the cluster's nodes; `pools`: node name -> its pool."""
    count: dict[str, int] = {}
    for name in present:
        if name in pools:
            count[pools[name].name] = count.get(pools[name].name, 0) + 1
    now = tuple(replace(p, min_nodes=count.get(p.name, 0), max_nodes=count.get(p.name, 0)) for p in cluster.pools)
    if not cluster.complete or now == cluster.pools:
        return
    for d in shortfalls(replace(cluster, pools=now)):
        yield diag(
            "capacity-short",
            f"with the nodes the cluster has now, {d.message}",
            d.path,
            hint="join the pools' missing nodes (policyc audit reports each as node-missing), or lower the guarantee "
            "until those nodes join",
        )

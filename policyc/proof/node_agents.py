"""The node-agent proof: every DaemonSet the policy says must run on GPU nodes tolerates every taint of those
nodes, as they register and once labelled (kube-scheduler's taint filter, as in the placement proof): it sets a new
node up before the node is released. An agent without stated tolerations is given the list policyc emits
(`policyc.backends.node_agents`), so for it the proof checks that list."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.backends.node_agents import agent_tolerations
from policyc.diagnostics import Diagnostic, diag, listing
from policyc.ir import Cluster
from policyc.k8s.scheduling import taint_filter
from policyc.proof.placement import FRESH, Target, fresh_targets, targets


def _blocked(pod: dict, labelled: Target | None, registering: Target | None) -> str | None:
    """Why the agent's pod cannot run on a pool's nodes, labelled or as they register (None: it can)."""
    if labelled is not None and not (verdict := taint_filter(pod, labelled.node)).admit:
        return verdict.detail
    if registering is not None and not (verdict := taint_filter(pod, registering.node)).admit:
        return f"as they register, {verdict.detail}"
    return None


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    emitted = agent_tolerations(cluster)
    nodes = {t.name: t for t in (*targets(cluster), *fresh_targets(cluster))}
    for agent in cluster.node_agents:
        pod = {"spec": {"tolerations": list(agent.tolerations if agent.tolerations is not None else emitted)}}
        blocked = [
            (pool, why)
            for pool in agent.pools
            if (why := _blocked(pod, nodes.get(pool), nodes.get(FRESH.format(pool)))) is not None
        ]
        if not blocked:
            continue
        (first, why), more = blocked[0], [name for name, _ in blocked[1:]]
        where = f"pool '{first}'" + (f" (and {listing([repr(n) for n in more])})" if more else "")
        stated = agent.tolerations is not None
        yield diag(
            "node-agent-untolerated",
            f"node agent '{agent.namespace}/{agent.name}' cannot run on {where}: {why}; its nodes would have no "
            "such agent",
            (*agent.path, "tolerations") if stated else agent.path,
            hint="add the tolerations of nodes/agent-tolerations.yaml to it (and here), or omit tolerations here if "
            "it is given them"
            if stated
            else "this is a policyc bug; please report it",
        )

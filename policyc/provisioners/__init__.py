"""Node provisioners: how a pool's nodes come to be and get the pool's labels and taints, one package per target
(`static`, ...), each registered in `policyc.registry.PROVISIONERS` and imported through it, with the four faces of a
backend (`policyc.backends.interface`): `settings`, `codes`, `rules`, `backend`, and `adopt` for `policyc import`.

A pool names its provisioner (`nodePools[].provisioning`, else `spec.provisioning.default`). The core does the rest
the same for every one: the resolver sizes the pool (names for a provisioner with `NAMED_NODES`, a size otherwise)
and says what a node of it carries as it registers (`REGISTERS_TAINTED`); the checks count capacity from the sizes;
the proof places pods on each pool's node template and on each pool's fresh node; the emit step calls each selected
provisioner's `backend.emit` with its pools; the node-side objects it writes are synced before what makes pods
(`policyc.k8s.dependencies`).

Shared here: `node_features`, the NodeFeatureRule of a pool (for every provisioner that labels nodes through Node
Feature Discovery); `chooses_no_labels`, the `backend.chosen_labels` of a provisioner whose nodes carry their pool's
labels and no value it chooses; `reads_no_pools`, the `adopt.read_pools` of one whose objects on the cluster make no
pool (its `adopt.UNSEEN` says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policyc.cluster.reading import PoolsRead
    from policyc.cluster.source import ClusterSource
    from policyc.ir import ChosenLabel, LabelKeys, Pool


def chooses_no_labels(pool: Pool) -> tuple[ChosenLabel, ...]:
    """No label of a value chosen as the node is made: the pool's nodes carry its labels, and labels the policy does
    not know (a kubelet's own zone, say), which a workload that selects on them must give the pool (its `labels`)."""
    return ()


def reads_no_pools(source: ClusterSource, keys: LabelKeys) -> PoolsRead:
    """No pool read back from the provisioner's objects: its pools are the cluster's nodes by name (read from the
    nodes), or its objects are not on the cluster."""
    from policyc.cluster.reading import PoolsRead  # the package root stays light: the settings faces import it

    return PoolsRead()

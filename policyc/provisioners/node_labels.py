"""Where a label of a pool comes from in the policy, for a provisioner's rules to locate what is wrong with it: a key
under the policy's domain from `spec.domain`, a label policyc derives from the pool (its vendor's, RDMA's, the GPU
Operator's) from the pool, and the rest from the pool's own `labels`."""

from __future__ import annotations

from policyc.checks.label_domains import label_owners
from policyc.diagnostics import Path
from policyc.ir import Cluster, Pool


def label_at(cluster: Cluster, pool: Pool, key: str) -> tuple[Path, bool]:
    """(where the label `key` of `pool` is written, whether at the key itself rather than its value)."""
    if key.startswith(cluster.keys.domain + "/"):
        return ("spec", "domain"), False
    if key in label_owners(cluster, pool):
        return pool.path, False
    return (*pool.path, "labels", key), True

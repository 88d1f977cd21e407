"""The Cluster API provisioner's output: `clusterapi/pools.yaml`, for each pool the fragment of its MachineDeployment
(the labels of its Machines, and with MachineTaintPropagation their taints) and of its KubeadmConfigTemplate (the
taints a node registers with), to merge into the user's own objects on the management cluster. A text file outside
the Argo CD tree: the objects are incomplete, and live in another cluster."""

from __future__ import annotations

import re

from policyc.artifacts import Artifact
from policyc.ir import Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.output import yaml_emitter
from policyc.output.write import header
from policyc.provisioners import chooses_no_labels

NAME = "clusterapi"
REFERENCES: tuple[Reference, ...] = ()
PATH = "clusterapi/pools.yaml"

SYNCED_PREFIX = "node-role.kubernetes.io"
"""Keys under this prefix are synced from a Machine to its Node."""
SYNCED_DOMAINS = ("node-restriction.kubernetes.io", "node.cluster.x-k8s.io")
"""Keys in these domains or their subdomains are synced from a Machine to its Node."""
LABEL_SYNC = (1, 4)
"""The first version that syncs labels from Machines to Nodes."""
ADDITIONAL_SYNC = (1, 10)
"""The first version whose manager takes --additional-sync-machine-labels."""
TAINT_PROPAGATION = (1, 12)
"""The first version with the feature gate MachineTaintPropagation (alpha, off by default)."""
V1BETA2 = (1, 11)
"""The first version serving the v1beta2 API of cluster.x-k8s.io and bootstrap.cluster.x-k8s.io (CAPI v1.11.0's
release notes); v1beta1 before it."""


def minor(version: str) -> tuple[int, int]:
    """A version "1.12" as (1, 12)."""
    major, _, rest = version.partition(".")
    return int(major), int(rest)


def synced(key: str, additional: list[str]) -> bool:
    """Whether Cluster API copies a Machine's label `key` to its Node (`additional`: the manager's
    --additional-sync-machine-labels, each matched anywhere in the key as Go's regexp.MatchString does)."""
    prefix, slash, _ = key.partition("/")
    if slash and (prefix == SYNCED_PREFIX or any(prefix == d or prefix.endswith("." + d) for d in SYNCED_DOMAINS)):
        return True
    return any(re.search(regex, key) for regex in additional)


def names(pool: Pool) -> tuple[str, str]:
    """(its MachineDeployment's name, its KubeadmConfigTemplate's name): the pool's name, unless it names them
    (the template: the MachineDeployment's name)."""
    own = pool.provisioning_settings
    deployment = own.machine_deployment if own and own.machine_deployment else pool.name
    template = own.kubeadm_config_template if own and own.kubeadm_config_template else deployment
    return deployment, template


def _objects(cluster: Cluster, pool: Pool) -> list[dict]:
    settings = cluster.provisioning[NAME]
    api = "v1beta2" if minor(settings.version) >= V1BETA2 else "v1beta1"
    deployment, template = names(pool)
    machine: dict = {"metadata": {"labels": dict(pool.labels)}}
    if settings.machine_taint_propagation:
        machine["spec"] = {"taints": [{**t.to_dict(), "propagation": "Always"} for t in pool.taints]}
    registration = {"nodeRegistration": {"taints": [t.to_dict() for t in pool.taints]}}
    return [
        {
            "apiVersion": f"cluster.x-k8s.io/{api}",
            "kind": "MachineDeployment",
            "metadata": {"name": deployment, "namespace": settings.namespace},
            "spec": {"template": machine},
        },
        {
            "apiVersion": f"bootstrap.cluster.x-k8s.io/{api}",
            "kind": "KubeadmConfigTemplate",
            "metadata": {"name": template, "namespace": settings.namespace},
            "spec": {"template": {"spec": {"joinConfiguration": registration}}},
        },
    ]


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    lines = "".join(f"#   {p.name} ({p.size}): {describe(cluster, p).partition(': ')[2]}\n" for p in pools)
    comment = (
        "# +argocd:skip-file-rendering\n"
        "# For the management cluster, not this one: merge each fragment into the object of its name (a kustomize\n"
        "# patch, or by hand). The MachineDeployment's Machine labels reach the Nodes through Cluster API's label\n"
        "# sync; kubeadm registers each node with the taints of the KubeadmConfigTemplate. Each pool's size is the\n"
        "# MachineDeployment's replicas (or its autoscaler's bounds):\n"
    )
    docs = [doc for p in pools for doc in _objects(cluster, p)]
    text = header(cluster.name, cluster.source) + comment + lines + yaml_emitter.dump_all(docs)
    return [Artifact(PATH, text=text, sources=tuple(p.path for p in pools))]


def describe(cluster: Cluster, pool: Pool) -> str:
    deployment, template = names(pool)
    return f"{PATH}: MachineDeployment {deployment}, KubeadmConfigTemplate {template}"


chosen_labels = chooses_no_labels

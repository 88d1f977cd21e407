"""The GKE provisioner's output: `terraform/gke-node-pools.tf.json`, each pool's size and `node_config` fields for
the user's `google_container_node_pool` (`policyc.provisioners.terraform`)."""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.gpu.accelerators import NVIDIA
from policyc.ir import Cluster, Pool
from policyc.k8s.dependencies import Reference
from policyc.provisioners import chooses_no_labels, terraform

NAME = "gke"
REFERENCES: tuple[Reference, ...] = ()
FIELDS_TYPE = (
    "node_config = object({labels = map(string), taint = " + terraform.TAINT_TYPE + ", "
    "guest_accelerator = list(object({type = string, count = number}))})"
)
"""The Terraform type of `node_config`'s fields."""
OWN_DEVICE_PLUGIN_OFF = {"gke-no-default-nvidia-gpu-device-plugin": "true"}
"""The node label that keeps GKE's own NVIDIA driver and device plugin off its nodes, as running NVIDIA's GPU
Operator (which policyc's output configures) on GKE needs."""


def cards(pool: Pool) -> int:
    """The accelerator cards of one node of the pool (`gpus_per_node` counts shares or MIG devices where the cards
    are shared or partitioned)."""
    if pool.mig is not None:
        return sum(count for count, _ in pool.mig.cards)
    return pool.gpus_per_node // (pool.sharing[1] if pool.sharing else 1)


def node_config(pool: Pool) -> dict:
    """The pool's `node_config` fields: labels (an NVIDIA pool's with `OWN_DEVICE_PLUGIN_OFF`), taint,
    guest_accelerator (empty unless the pool names its type)."""
    own = pool.provisioning_settings
    accelerator = own.accelerator_type if own else None
    labels = pool.labels | OWN_DEVICE_PLUGIN_OFF if pool.vendor == NVIDIA.name else pool.labels
    return {
        "node_config": {
            "labels": dict(sorted(labels.items())),
            "taint": terraform.upper_taints(pool),
            "guest_accelerator": [{"type": accelerator, "count": cards(pool)}] if accelerator else [],
        }
    }


def emit(cluster: Cluster, pools: tuple[Pool, ...]) -> list[Artifact]:
    return [terraform.variables(cluster, pools, NAME, node_config, FIELDS_TYPE)]


def describe(cluster: Cluster, pool: Pool) -> str:
    return terraform.describe(cluster, NAME, pool)


chosen_labels = chooses_no_labels

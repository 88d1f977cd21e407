"""`policyc init`: a commented starter policy that builds cleanly, and the schema editors validate it with."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from policyc.diagnostics import PolicyError
from policyc.registry import SCHEDULERS

SCHEMA_FILE = "policy.schema.json"

_STARTER = """\
# yaml-language-server: $schema=policy.schema.json
#
# A starter policy written by `policyc init`. Build it with:
#   policyc build cluster-policy.yaml -o manifests/
# Every field is described in policy.schema.json (editors with the YAML language server show the
# descriptions on hover). Replace the example names, nodes and numbers with your cluster's.
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata:
  name: my-cluster
spec:
  kubernetesVersion: "1.33"        # the output is verified against this version's API schemas
  domain: ai.example.com           # policyc owns the node labels and taints under this prefix
  gpuResource: nvidia.com/gpu      # what `gpu` means below

  # Control-plane nodes get a NoSchedule taint so that no GPU workload lands on them.
  controlPlane:
    nodes: ["cp-[1-3]"]

  # A tier is a set of GPU products, named as GPU Feature Discovery writes nvidia.com/gpu.product.
  gpuTiers:
    - name: large
      products: [NVIDIA-H100-80GB]
    - name: small
      products: [NVIDIA-L4]

  # Pools: nodes of one GPU product and one usage (training, inference, or hybrid: the overflow for both).
  nodePools:
    - name: train
      usage: training
      nodes: ["gpu-[01-08]"]       # a leading zero fixes the width: gpu-01 ... gpu-08
      gpu: {product: NVIDIA-H100-80GB, count: 8}
      allocatable: {cpu: "96", memory: 1000Gi}
    - name: serve
      usage: inference
      nodes: ["l4-[01-04]"]
      gpu: {product: NVIDIA-L4, count: 4}
      allocatable: {cpu: "48", memory: 192Gi}

  priorityClasses:
    - {name: serving, value: 2000, preemptionPolicy: Never, description: Online inference}
    - {name: training, value: 1000, globalDefault: true, description: Batch training}

  scheduler:
    backend: @BACKEND@
    placement: binpack             # binpack or spread, weighted on the GPU

  # Tenants: their namespaces, their scheduler queue, and a ResourceQuota per namespace.
  tenants:
    - name: research
      namespaces: [research]
      priorityClasses: [training]  # pods of other classes are refused in these namespaces
      queue: {weight: 2, guarantee: {gpu: 16}, capability: {gpu: 48}}
      quota: {requests: {cpu: "600", memory: 6000Gi, gpu: 48}}   # holds the 3 pretrain jobs its queue admits
    - name: product
      namespaces: [product]
      queue: {weight: 1, guarantee: {gpu: 8}, capability: {gpu: 16}}
      quota: {requests: {cpu: "100", memory: 400Gi, gpu: 16}}

  # Workload classes: each becomes templates/<name>.yaml with the right affinity and tolerations.
  workloads:
    - {name: pretrain, type: training, tenant: research, gpuTier: large, gpus: 8, replicas: 2}
    - {name: chat, type: inference, tenant: product, gpuTier: small, gpus: 1, replicas: 4, kind: Deployment,
       priorityClass: serving}
"""
_default, *_others = SCHEDULERS
STARTER = _STARTER.replace("@BACKEND@", f"{_default:<22}# or {' or '.join(_others)}: each has its own settings")
"""The starter policy, naming the registered scheduler backends."""


@dataclass(frozen=True)
class TeamStart:
    """What a new team's file starts with: its workload's tier, type, priority class and GPUs per pod, the classes its
    tenant lists (None: every class) and its quota's requests."""

    tier: str = "large"
    type: str = "training"
    priority_class: str | None = "training"
    gpus: int = 8
    classes: tuple[str, ...] | None = ("training",)
    quota: tuple[tuple[str, str], ...] = (("cpu", '"64"'), ("memory", "512Gi"), ("gpu", "8"))


def team_file(team: str, start: TeamStart = TeamStart()) -> str:
    """A commented team document (`policyc init --team NAME`): one tenant and one workload, for a policy directory;
    `start` fitted to its platform (`fitted_team_file`)."""
    classes = (
        ""
        if start.classes is None
        else f"""
      # the classes the platform grants teams (spec.teams.priorityClasses)
      priorityClasses: [{", ".join(start.classes)}]"""
    )
    gpus = dict(start.quota).get("gpu", str(start.gpus))
    priority = "" if start.priority_class is None else f"\n      priorityClass: {start.priority_class}"
    quota = ", ".join(f"{k}: {v}" for k, v in start.quota)
    return f"""\
# The file of team '{team}' in a policy directory (docs/teams.md), written by `policyc init --team {team}`.
# The team owns this file (CODEOWNERS); the platform team owns the platform file (kind ClusterPolicy), whose
# spec.teams says which priority classes and GPU tiers a team may use and the most quota it may take.
# Check it alone with: policyc validate THIS_FILE --platform POLICY_DIR; the whole policy: policyc validate POLICY_DIR
apiVersion: policyc.io/v1alpha1
kind: Tenant
metadata:
  name: {team}
spec:
  tenants:                      # the team's own tenants: names and namespaces no other team claims
    - name: {team}
      namespaces: [{team}]{classes}
      queue: {{capability: {{gpu: {gpus}}}}}
      quota: {{requests: {{{quota}}}}}   # within spec.teams.maxQuota
  workloads:                    # each runs as one of the tenants above
    - name: {team}-{start.type}
      type: {start.type}
      tenant: {team}
      gpuTier: {start.tier}{" " * max(1, 18 - len(start.tier))}# a tier the platform grants teams (spec.teams.gpuTiers)
      gpus: {start.gpus}                   # per pod; cpu and memory default to the pod's share of a node{priority}
"""


def fitted_team_file(team: str, directory: str) -> tuple[str, int, int]:
    """The file of a new team `team` fitted to the platform of the policy directory `directory`: a tier, workload type,
    class and quota the platform grants teams, with GPUs a node of the tier holds. Each start (`_starts`, the likeliest
    first) is validated alone against the platform, as `policyc validate TEAM --platform DIR` does; the first without
    an error in the team's file is taken, else the first. With the errors of its validation in the team's file and
    elsewhere (the platform's own)."""
    import tempfile

    from policyc.compiler import compile_team
    from policyc.language.teams import load_directory

    try:
        spec = load_directory(directory, directory).data.get("spec")
    except PolicyError:
        spec = None
    starts = list(_starts(spec if isinstance(spec, dict) else {}))[:_MOST_TRIED] or [TeamStart()]
    tried = []
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, f"{team}.yaml")
        for start in starts:
            text = team_file(team, start)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            report = compile_team(path, directory).report
            own = sum(report.file_of(d) == path for d in report.errors)
            tried.append((text, own, len(report.errors) - own))
            if own == 0:
                break
    return next((t for t in tried if t[1] == 0), tried[0])


_MOST_TRIED = 12
"""Starts `fitted_team_file` validates at most (each a compilation of the platform, a tenth of a second or so)."""


def _starts(spec: dict) -> Iterator[TeamStart]:
    """The starts a new team's file may take in the platform `spec` (plain data), the likeliest to hold first: per
    granted tier with GPU pools, per usage its pools serve (training first), per granted class (one named for the usage
    first, then the default class, then the others in order)."""
    grant = spec.get("teams") if isinstance(spec.get("teams"), dict) else {}
    granted, defaults, listed = _classes(spec, grant)
    tiers = {t["name"]: t.get("products") or [] for t in _items(spec, "gpuTiers") if _named(t)}
    quota, most = _quota(grant.get("maxQuota"))
    for tier in [t for t in _strings(grant.get("gpuTiers")) or list(tiers) if t in tiers]:
        for usage, hint in _CLASS_HINTS.items():
            per_node = _gpus_per_node(spec, tiers[tier], usage)
            if per_node is None:
                continue
            gpus = min(per_node, 8, *most)
            ordered = [*(c for c in granted if hint in c), *defaults, *granted]
            for priority_class in dict.fromkeys(ordered) or [None]:
                yield TeamStart(tier, usage, priority_class, gpus, listed, (*quota, ("gpu", str(gpus))))


def _classes(spec: dict, grant: dict) -> tuple[list[str], list[str], tuple[str, ...] | None]:
    """The priority classes `grant` (`spec.teams`) grants teams, those of them that are the default class, and what a
    team's tenant lists (None: the grant names none, so it may use every class and lists none)."""
    classes = {c["name"]: c.get("globalDefault") is True for c in _items(spec, "priorityClasses") if _named(c)}
    granted = [c for c in _strings(grant.get("priorityClasses")) or classes if c in classes]
    return (
        granted,
        [c for c in granted if classes[c]],
        tuple(granted) if _strings(grant.get("priorityClasses")) else None,
    )


def _quota(max_quota: object) -> tuple[tuple[tuple[str, str], ...], list[int]]:
    """What a team's tenant asks of `spec.teams.maxQuota` but GPUs (all of it), and the GPUs it grants (none, or one
    count)."""
    if not isinstance(max_quota, dict):
        return (), []
    gpus = max_quota.get("gpu")
    return tuple((k, _scalar(v)) for k, v in max_quota.items() if k != "gpu"), [gpus] if isinstance(gpus, int) else []


def _gpus_per_node(spec: dict, products: list, usage: str) -> int | None:
    """The fewest GPUs a node holds among the pools of `spec` with one of `products` that serve `usage`; None if
    none does."""
    counts = [
        p["gpu"]["count"]
        for p in _items(spec, "nodePools")
        if isinstance(p.get("gpu"), dict) and p["gpu"].get("product") in products
        and p.get("usage") in (usage, "hybrid") and isinstance(p["gpu"].get("count"), int)
    ]  # fmt: skip
    return min(counts, default=None)


_CLASS_HINTS = {"training": "train", "inference": "infer"}
"""The usages a team's first workload may have, the likeliest first, each with what the name of a priority class for
it is likeliest to hold."""


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _named(item: dict) -> bool:
    return isinstance(item.get("name"), str)


def _items(spec: dict, field: str) -> list[dict]:
    value = spec.get(field)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _scalar(value: object) -> str:
    """A quantity as a flow-style YAML scalar: a string quoted where YAML would read a number."""
    text = str(value)
    return f'"{text}"' if isinstance(value, str) and text.replace(".", "", 1).isdigit() else text

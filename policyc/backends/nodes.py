"""The node plan: labels and taints per node, as data (`nodes/plan.json`) and as a script (`nodes/apply.sh`) for the
nodes listed by name (the pools whose provisioner names them, and the control plane). A pool by size is in the plan
with its provisioning and size instead of nodes; its provisioner labels and taints its nodes.

The script is the only generated shell. Every value written into it is a node name, pool name, label
or taint that the compiler has already checked against Kubernetes' syntax rules; `shell_quote` checks
again that it holds nothing but the characters those rules allow, then single-quotes it.

Other teams may put labels and taints under the same `<domain>/`, so the script removes only what it set
itself. It records that on each node in two annotations, `<domain>/policyc.managed-labels` (label keys) and
`<domain>/policyc.managed-taints` (taints as key:effect), each a comma-separated list of the keys under
`<domain>/` it sets there; keys outside the domain are set but never recorded or removed. A label or taint
is removed when it is in the record, under the domain, on the node, and no longer wanted; a node without a
record loses nothing. The labels and the record are written by one `kubectl patch --type merge`, so they
never disagree; taints go through `kubectl taint` (a merge patch would replace the whole list), before the
patch, so that a failed patch leaves at most a record of taints already gone.
"""

from __future__ import annotations

import json
import re

from policyc.artifacts import Artifact
from policyc.diagnostics import Path
from policyc.gpu.accelerators import GFD_PRODUCT, NVIDIA, VENDORS
from policyc.ir import MIG_CONFIG, Cluster

CONTROL_PLANE = "@control-plane"
"""Pool key of the control-plane nodes in the script (not a valid pool name, so it cannot collide)."""

MANAGED_LABELS = "policyc.managed-labels"
MANAGED_TAINTS = "policyc.managed-taints"
"""Names (under `<domain>/`) of the annotations recording what the script manages on a node."""

_SHELL_SAFE = re.compile(r"[A-Za-z0-9@._/=:-]*")


class UnsafeShellValue(ValueError):
    """A value that Kubernetes' syntax rules should have rejected reached the script writer."""


def shell_quote(value: str) -> str:
    if not _SHELL_SAFE.fullmatch(value) or value.startswith("-"):  # a leading '-' reads as a kubectl option
        raise UnsafeShellValue(f"refusing to write {value!r} into nodes/apply.sh")
    return f"'{value}'"


def shell_words(words: list[str], *, padded: bool = False) -> str:
    """Words (each checked like `shell_quote`) as one single-quoted, space-separated string; `padded` adds a
    space at both ends so that the script can test membership with ``*" $word "*``."""
    for word in words:
        shell_quote(word)
    text = " ".join(words)
    return f"' {text} '" if padded else f"'{text}'"


def _json_members(members: dict[str, str | list[str]]) -> str:
    """The members of a JSON object, `"key":"value",...`, single-quoted. Every key, value and list item is
    checked like `shell_quote`; a list becomes one comma-separated string."""
    body = []
    for key, value in members.items():
        items = value if isinstance(value, list) else [value]
        for word in (key, *items):
            shell_quote(word)
        body.append(f"{json.dumps(key)}:{json.dumps(','.join(items))}")
    return "'" + ",".join(body) + "'"


def plan(cluster: Cluster) -> dict:
    """The node plan as data: per pool, the labels and taints every one of its nodes gets, and its accelerators
    (null for CPU-only pools; a DRA tier's pool names its DeviceClass, not a resource); gpuFeatureDiscovery: whether
    the vendor's discovery, not policyc, labels the product; its nodes, or for a pool by size its provisioning and
    size."""
    pools = [
        {
            "name": p.name,
            **({} if p.named else {"provisioning": p.provisioning}),
            "usage": p.usage,
            "gpuTier": p.tier,
            "gpuProduct": p.product if p.resource else None,
            "gpuVendor": p.vendor,
            "gpuResource": None if p.device_class else p.resource,
            **({"gpuDeviceClass": p.device_class} if p.device_class else {}),
            "gpuFeatureDiscovery": p.discovered_product,
            "labels": p.labels,
            "taints": [t.to_dict() for t in p.taints],
            **({"nodes": list(p.nodes)} if p.named else {"minNodes": p.min_nodes, "maxNodes": p.max_nodes}),
        }
        for p in cluster.pools
    ]
    out = {
        "apiVersion": "policyc.io/v1alpha1",
        "kind": "NodePlan",
        "generatedBy": f"policyc from policy '{cluster.name}' ({cluster.source}); do not edit",
        "domain": cluster.keys.domain,
        "pools": pools,
    }
    if cluster.control_plane_nodes:
        out["controlPlane"] = {
            "taints": [cluster.control_plane_taint.to_dict()],
            "nodes": list(cluster.control_plane_nodes),
        }
    return out


def node_plan_sources(cluster: Cluster) -> tuple[Path, ...]:
    """The parts of the policy the node plan comes from: the domain, every pool, the control plane."""
    control_plane = (("spec", "controlPlane"),) if cluster.control_plane_nodes else ()
    return (("spec", "domain"), *(p.path for p in cluster.pools), *control_plane)


def emit(cluster: Cluster) -> list[Artifact]:
    """The plan, and the script where some nodes are listed by name."""
    sources = node_plan_sources(cluster)
    out = [
        Artifact(
            "nodes/plan.json", text=json.dumps(plan(cluster), indent=2, ensure_ascii=False) + "\n", sources=sources
        )
    ]
    if cluster.named_pools or cluster.control_plane_nodes:
        out.append(Artifact("nodes/apply.sh", text=script(cluster), executable=True, sources=sources))
    return out


def _assoc(name: str, entries: dict[str, str]) -> str:
    body = "".join(f"\n  [{shell_quote(k)}]={v}" for k, v in entries.items())
    return f"declare -A {name}=({body}\n)" if entries else f"declare -A {name}=()"


def script(cluster: Cluster) -> str:
    domain = cluster.keys.domain + "/"
    managed_labels, managed_taints = domain + MANAGED_LABELS, domain + MANAGED_TAINTS
    discovered = [p for p in cluster.named_pools if p.discovered_product]
    product_keys = sorted({p.product_key for p in discovered}) or [GFD_PRODUCT]
    discovery = " or ".join(sorted({VENDORS[p.vendor].discovery for p in discovered})) or NVIDIA.discovery
    tables, nodes = _node_groups(cluster, domain, managed_labels, managed_taints)
    return _TEMPLATE.format(
        policy=cluster.name,
        source=cluster.source,
        domain=cluster.keys.domain,
        domain_q=shell_quote(domain),
        managed_labels=managed_labels,
        managed_taints=managed_taints,
        product_test=" || ".join(f"$key == {k}" for k in product_keys),
        product_keys=" or ".join(product_keys),
        discovery=discovery,
        labels=_assoc("LABELS", tables["labels"]),
        label_keys=_assoc("LABEL_KEYS", tables["label_keys"]),
        taints=_assoc("TAINTS", tables["taints"]),
        taint_ids=_assoc("TAINT_IDS", tables["taint_ids"]),
        records=_assoc("RECORD", tables["records"]),
        products=_assoc("GPU_PRODUCT", tables["products"]),
        layouts=_assoc(
            "LAYOUT",
            {p.name: shell_quote(p.labels[MIG_CONFIG]) for p in cluster.named_pools if MIG_CONFIG in p.labels},
        ),
        mig_config=MIG_CONFIG,
        go_template=_go_template(shell_quote(managed_labels)[1:-1], shell_quote(managed_taints)[1:-1]),
        nodes="\n".join(nodes),
        count=len(nodes),
    )


def _node_groups(
    cluster: Cluster, domain: str, managed_labels: str, managed_taints: str
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """The script's tables by group of nodes (each pool, and the control plane), quoted for bash: table -> group ->
    entry; and its lines 'node group'."""
    groups = [
        (p.name, p.labels, p.taints, p.product if p.discovered_product else None, p.nodes) for p in cluster.named_pools
    ]
    if cluster.control_plane_nodes:
        groups.append((CONTROL_PLANE, {}, (cluster.control_plane_taint,), None, cluster.control_plane_nodes))
    names = ("labels", "label_keys", "taints", "taint_ids", "records", "products")
    tables: dict[str, dict[str, str]] = {table: {} for table in names}
    nodes = []
    for name, pool_labels, pool_taints, product, pool_nodes in groups:
        ids = [f"{t.key}:{t.effect}" for t in pool_taints]
        tables["labels"][name] = _json_members(pool_labels)
        tables["label_keys"][name] = shell_words(list(pool_labels), padded=True)
        tables["taints"][name] = shell_words([str(t) for t in pool_taints])
        tables["taint_ids"][name] = shell_words(ids, padded=True)
        tables["records"][name] = _json_members(
            {
                managed_labels: [k for k in pool_labels if k.startswith(domain)],
                managed_taints: [i for i in ids if i.startswith(domain)],
            }
        )
        if product:
            tables["products"][name] = shell_quote(product)
        nodes.extend(f"{shell_quote(n)[1:-1]} {shell_quote(name)[1:-1]}" for n in pool_nodes)
    return tables, nodes


def _go_template(managed_labels: str, managed_taints: str) -> str:
    """kubectl go-template printing the current state as tab-separated lines: N node / L node key value /
    T node key effect / R node labels|taints record (only a non-empty record: `with` skips "")."""
    record = '{{with index . "%s"}}R{{"\\t"}}{{$n}}{{"\\t"}}%s{{"\\t"}}{{.}}{{"\\n"}}{{end}}'
    return (
        '{{range .items}}N{{"\\t"}}{{.metadata.name}}{{"\\n"}}{{$n := .metadata.name}}'
        '{{range $k, $v := .metadata.labels}}L{{"\\t"}}{{$n}}{{"\\t"}}{{$k}}{{"\\t"}}{{$v}}{{"\\n"}}{{end}}'
        '{{range .spec.taints}}T{{"\\t"}}{{$n}}{{"\\t"}}{{.key}}{{"\\t"}}{{.effect}}{{"\\n"}}{{end}}'
        "{{with .metadata.annotations}}"
        + record % (managed_labels, "labels")
        + record % (managed_taints, "taints")
        + "{{end}}{{end}}"
    )


_TEMPLATE = r"""#!/usr/bin/env bash
# Generated by policyc from policy '{policy}' ({source}); do not edit.
#
# Labels and taints the {count} node(s) of the policy: one `kubectl taint --overwrite` and one
# `kubectl patch --type merge` (labels and record) per node, so running it again changes nothing.
# Two annotations record the labels and taints under '{domain}/' this script set on a node:
#   {managed_labels}
#   {managed_taints}
# Those the policy no longer wants are removed, and nothing else: not labels or taints others put
# under '{domain}/', nor anything on a node without a record yet. Where {discovery}
# runs, each node's {product_keys} label must name its pool's GPU, or nothing is changed. A node
# whose {mig_config} label names another MIG layout is not repartitioned (the MIG manager would
# stop its GPU operands and rebuild its GPU instances) unless --repartition-mig says so.
#
# Usage: apply.sh [--dry-run] [--repartition-mig]    KUBECTL names the kubectl to run (default: kubectl).
# Exit status: 0 done, 1 a node's GPU or MIG layout does not match the policy, 2 usage error; kubectl's on
# failure.
set -euo pipefail

if ((BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 3))); then
  echo "apply.sh: bash 4.3 or newer is required" >&2
  exit 2
fi

KUBECTL=${{KUBECTL:-kubectl}}
DOMAIN={domain_q}
DRY_RUN=0
REPARTITION=0
for arg in "$@"; do
  case "$arg" in
  --dry-run) DRY_RUN=1 ;;
  --repartition-mig) REPARTITION=1 ;;
  -h | --help)
    echo "usage: apply.sh [--dry-run] [--repartition-mig]   (KUBECTL names the kubectl to run)"
    exit 0
    ;;
  *)
    echo "usage: apply.sh [--dry-run] [--repartition-mig]" >&2
    exit 2
    ;;
  esac
done

# Per pool: the labels to set (as JSON object members), the label keys wanted, the taints to set, the
# taint identities (key:effect) wanted, the record annotations (JSON members), the GPU product to
# check where GPU Feature Discovery owns the product label, and the MIG layout of partitioned pools.
{labels}
{label_keys}
{taints}
{taint_ids}
{records}
{products}
{layouts}

# Every node of the policy and its pool.
NODES=$(
  cat <<'END_OF_NODES'
{nodes}
END_OF_NODES
)

run() {{
  if ((DRY_RUN)); then
    printf '%q ' "$KUBECTL" "$@"
    printf '\n'
  else
    "$KUBECTL" "$@"
  fi
}}

# stale KEY WANTED HAVE: KEY (from the node's record) is under the domain, on the node and not wanted.
stale() {{
  [[ $1 == "$DOMAIN"* && $3 == *" $1 "* && $2 != *" $1 "* ]]
}}

# $1 as a JSON string (label keys cannot hold '"' or '\', but escape them anyway).
json_string() {{
  local bs=\\ q=\" s=$1
  s=${{s//"$bs"/"$bs$bs"}}
  s=${{s//"$q"/"$bs$q"}}
  printf '"%s"' "$s"
}}

# What the cluster has now: a line per node (N), label (L), taint (T) and non-empty record (R).
# shellcheck disable=SC2016 # $n, $k and $v are go-template variables, not shell ones
TEMPLATE='{go_template}'
state=$("$KUBECTL" get nodes -o "go-template=$TEMPLATE")

declare -A EXISTS=() DOMAIN_LABELS=() DOMAIN_TAINTS=() RECORDED_LABELS=() RECORDED_TAINTS=()
declare -A HAS_PRODUCT=() HAS_LAYOUT=() IN_POLICY=()
recorded_nodes=()
while IFS=$'\t' read -r kind node key rest; do
  case $kind in
  N) EXISTS[$node]=1 ;;
  L)
    if [[ $key == "$DOMAIN"* ]]; then DOMAIN_LABELS[$node]+=" $key "; fi
    if [[ {product_test} ]]; then HAS_PRODUCT[$node]=$rest; fi
    if [[ $key == {mig_config} ]]; then HAS_LAYOUT[$node]=$rest; fi
    ;;
  T)
    if [[ $key == "$DOMAIN"* ]]; then DOMAIN_TAINTS[$node]+=" $key:$rest "; fi
    ;;
  R)
    if [[ $key == labels ]]; then RECORDED_LABELS[$node]=$rest; else RECORDED_TAINTS[$node]=$rest; fi
    recorded_nodes+=("$node")
    ;;
  esac
done <<<"$state"

# Check first, change after: a node whose GPU is not the policy's stops the whole run.
mismatches=0
missing=()
while read -r node pool; do
  IN_POLICY[$node]=1
  if [[ -z ${{EXISTS[$node]-}} ]]; then
    missing+=("$node")
    continue
  fi
  layout=${{LAYOUT[$pool]-}}
  live=${{HAS_LAYOUT[$node]-}}
  if [[ -n $layout && $live != "$layout" ]] && ((!REPARTITION)); then
    echo "apply.sh: error: node $node of pool $pool has MIG layout ${{live:-(none)}}, and the policy says $layout;" \
      "rerun with --repartition-mig once its GPU workloads are drained" >&2
    mismatches=$((mismatches + 1))
  fi
  want=${{GPU_PRODUCT[$pool]-}}
  have=${{HAS_PRODUCT[$node]-}}
  if [[ -z $want ]]; then
    continue
  elif [[ -z $have ]]; then
    echo "apply.sh: warning: node $node has no {product_keys} label yet; is {discovery} running?" >&2
  elif [[ $have != "$want" && $have != "$want"-SHARED && $have != "$want"-MIG-* ]]; then
    echo "apply.sh: error: node $node of pool $pool has GPU $have, but the policy says $want" >&2
    mismatches=$((mismatches + 1))
  fi
done <<<"$NODES"
if ((mismatches > 0)); then
  echo "apply.sh: $mismatches node(s) do not match the policy; nothing was changed" >&2
  exit 1
fi
if ((${{#missing[@]}} > 0)); then
  echo "apply.sh: warning: skipping ${{#missing[@]}} node(s) not in the cluster: ${{missing[*]}}" >&2
fi

applied=0
while read -r node pool; do
  if [[ -z ${{EXISTS[$node]-}} ]]; then continue; fi
  # Taints first: should the patch then fail, the old record lists at most taints already removed.
  read -r -a taints <<<"${{TAINTS[$pool]}}"
  IFS=, read -r -a recorded <<<"${{RECORDED_TAINTS[$node]-}}"
  for id in "${{recorded[@]+"${{recorded[@]}}"}}"; do
    if stale "$id" "${{TAINT_IDS[$pool]}}" "${{DOMAIN_TAINTS[$node]-}}"; then taints+=("$id-"); fi
  done
  if ((${{#taints[@]}} > 0)); then run taint node "$node" --overwrite "${{taints[@]}}"; fi
  # Labels and the new record in one call: a null member deletes a label.
  labels=${{LABELS[$pool]}}
  IFS=, read -r -a recorded <<<"${{RECORDED_LABELS[$node]-}}"
  for key in "${{recorded[@]+"${{recorded[@]}}"}}"; do
    if stale "$key" "${{LABEL_KEYS[$pool]}}" "${{DOMAIN_LABELS[$node]-}}"; then
      labels+="${{labels:+,}}$(json_string "$key"):null"
    fi
  done
  printf -v patch '{{"metadata":{{"labels":{{%s}},"annotations":{{%s}}}}}}' "$labels" "${{RECORD[$pool]}}"
  run patch node "$node" --type merge -p "$patch"
  applied=$((applied + 1))
done <<<"$NODES"

for node in "${{recorded_nodes[@]+"${{recorded_nodes[@]}}"}}"; do
  if [[ -z ${{IN_POLICY[$node]-}} ]]; then
    echo "apply.sh: warning: node $node carries labels or taints set by policyc but is in no pool of the policy" >&2
  fi
done | sort -u >&2

if ((DRY_RUN)); then
  echo "apply.sh: dry run: $applied node(s) would be labelled and tainted" >&2
else
  echo "apply.sh: labelled and tainted $applied node(s)" >&2
fi
"""

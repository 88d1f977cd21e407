"""Nodes back to pools, GPU tiers and the control plane.

Nodes are grouped by policyc's pool label where they carry it, else by what a pool makes alike: GPU product and
count, labels and taints. A group's names become node ranges (`policyc.adopt.ranges`); its usage comes from policyc's
usage label, else from a taint or label whose key or value says training or inference, else it is guessed. Tiers
come from policyc's tier label, else one per GPU product.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ruamel.yaml.comments import CommentedMap

from policyc.adopt.draft import Draft, block, flow
from policyc.adopt.gpu_layouts import Layouts
from policyc.adopt.ranges import compress
from policyc.cluster.reading import ObjectRef
from policyc.gpu.accelerators import VENDORS, Vendor
from policyc.ir import DEVICE_PLUGIN_CONFIG, MIG_CONFIG, RDMA_LABEL, LabelKeys

IGNORED_LABEL_DOMAINS = (
    "kubernetes.io",
    "k8s.io",
    "nvidia.com",
    "amd.com",
    "feature.node.kubernetes.io",
    "nfd.node.kubernetes.io",
)
"""Label domains the kubelet, the cloud, the GPU vendors' discovery and NFD write: never a pool's own labels."""
IGNORED_TAINT_DOMAINS = ("node.kubernetes.io", "node.cloudprovider.kubernetes.io", "node-role.kubernetes.io")
"""Taints the node lifecycle controller and the cloud put on nodes."""
USAGE_WORDS = {"training": ("train", "batch"), "inference": ("infer", "serv", "online")}
CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """What a pool makes alike on its nodes."""

    vendor: Vendor | None
    product: str | None
    count: int | None
    labels: tuple[tuple[str, str], ...]
    taints: tuple[tuple[str, str, str], ...]


def read_nodes(
    nodes: list[dict], keys: LabelKeys, draft: Draft, rules: dict[str, dict], layouts: Layouts
) -> tuple[list[str], dict[str, list[str]]]:
    """Fill spec.controlPlane, spec.gpuTiers and spec.nodePools from the nodes (`rules`: pool -> the labels policyc's
    NodeFeatureRule of the pool sets, where the cluster has one; `layouts`: how the GPU Operator splits cards);
    returns the accelerator resources the nodes advertise (NVIDIA's first) and each tier's products."""
    control, gpu_nodes = _sort(nodes, keys, draft)
    if control:
        draft.spec["controlPlane"] = block({"nodes": flow(compress([n["metadata"]["name"] for n in control]))})
        draft.expressed.update(ObjectRef.of(n) for n in control)
    groups: dict[object, list[dict]] = {}
    for node in gpu_nodes:
        pool = (node["metadata"].get("labels") or {}).get(keys.pool)
        groups.setdefault(pool or _facts(node, keys), []).append(node)
    nvidia = VENDORS["nvidia"].resource
    resources = sorted({_vendor(n)[1] for n in gpu_nodes if _vendor(n)}, key=lambda r: (r != nvidia, r))  # type: ignore[index]
    pools: list[CommentedMap] = []
    tiers = _labelled_tiers(gpu_nodes, keys)
    for members in sorted(groups.values(), key=lambda ns: ns[0]["metadata"]["name"]):
        found = _vendor(members[0])
        if found is None:
            pool = _cpu_pool(members, keys)
        else:
            pool = _pool(members, keys, draft, tiers, {p["name"] for p in pools}, layouts)
            _discovery(pool, rules.get(pool["name"], {}), found[0])
        pools.append(pool)
        draft.expressed.update(ObjectRef.of(n) for n in members)
    if tiers:
        draft.spec["gpuTiers"] = [block({"name": t, "products": flow(sorted(ps))}) for t, ps in tiers.items()]
    if pools:
        draft.spec["nodePools"] = pools
    return resources, tiers


def _labelled_tiers(nodes: list[dict], keys: LabelKeys) -> dict[str, list[str]]:
    """Tier -> products, as policyc's tier labels name them on GPU nodes: a product they hold is in no other tier."""
    tiers: dict[str, list[str]] = {}
    for node in nodes:
        if _vendor(node) is None:
            continue  # a CPU pool's node: its tier is the CPU tier, no GPU tier
        labels, product = node["metadata"].get("labels") or {}, _facts(node, keys).product
        if keys.tier in labels and product and product not in tiers.setdefault(labels[keys.tier], []):
            tiers[labels[keys.tier]].append(product)
    return tiers


def _sort(nodes: list[dict], keys: LabelKeys, draft: Draft) -> tuple[list[dict], list[dict]]:
    """(control-plane nodes, nodes of pools: GPU nodes and those of policyc's CPU pools), each in name order; any
    other node is listed as not expressed."""
    control, gpu_nodes = [], []
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        taint_keys = {t.get("key") for t in (node.get("spec") or {}).get("taints") or []}
        if keys.control_plane in taint_keys or CONTROL_PLANE_ROLE in (node["metadata"].get("labels") or {}):
            control.append(node)
        elif _vendor(node) is not None or keys.pool in (node["metadata"].get("labels") or {}):
            gpu_nodes.append(node)  # a node of policyc's CPU pool carries its pool label and no GPU
        else:
            draft.unexpressed[ObjectRef.of(node)] = f"no GPU, no {keys.pool} label and not a control-plane node"
    return control, gpu_nodes


def _vendor(node: dict) -> tuple[Vendor, str] | None:
    """The node's GPU vendor and the resource it advertises, from its capacity (None: no GPU)."""
    capacity = (node.get("status") or {}).get("capacity") or {}
    for vendor in VENDORS.values():
        for resource, amount in sorted(capacity.items()):
            same_domain = resource.partition("/")[0] == vendor.resource.partition("/")[0]
            if same_domain and resource.startswith(vendor.resource.rpartition("/")[0]) and str(amount) not in ("0", ""):
                return vendor, resource
    labels = node["metadata"].get("labels") or {}
    for vendor in VENDORS.values():
        if vendor.product_label in labels:  # its devices claimed through DRA: no extended resource
            return vendor, vendor.resource
    return None


def _facts(node: dict, keys: LabelKeys) -> NodeFacts:
    vendor, _ = _vendor(node)  # type: ignore[misc]
    labels = node["metadata"].get("labels") or {}
    product = labels.get(vendor.product_label or f"{keys.domain}/gpu.product")
    count = labels.get(vendor.count_label) if vendor.count_label else None
    return NodeFacts(
        vendor,
        product,
        int(count) if count and count.isdigit() else None,
        tuple(sorted((k, v) for k, v in labels.items() if _pool_label(k, keys))),
        tuple(sorted((t.get("key", ""), t.get("value", ""), t.get("effect", "")) for t in _taints(node, keys))),
    )


def _pool_label(key: str, keys: LabelKeys) -> bool:
    domain = key.rpartition("/")[0]
    return domain != keys.domain and not any(domain == d or domain.endswith("." + d) for d in IGNORED_LABEL_DOMAINS)


def _taints(node: dict, keys: LabelKeys) -> list[dict]:
    """The node's taints a pool states itself: not the vendor's product taint or policyc's own."""
    product_keys = {v.product_label for v in VENDORS.values()} | {f"{keys.domain}/gpu.product"}
    return [
        t
        for t in (node.get("spec") or {}).get("taints") or []
        if t.get("key") not in product_keys
        and t.get("key", "").rpartition("/")[0] not in (keys.domain, *IGNORED_TAINT_DOMAINS)
    ]


def _common(dicts: list[dict]) -> dict:
    """The items every dict has alike."""
    first, *rest = dicts
    return {k: v for k, v in first.items() if all(d.get(k) == v for d in rest)}


def _pool(
    members: list[dict], keys: LabelKeys, draft: Draft, tiers: dict[str, list[str]], taken: set[str], layouts: Layouts
) -> CommentedMap:
    names = [n["metadata"]["name"] for n in members]
    labels = _common([n["metadata"].get("labels") or {} for n in members])
    vendor, resource = _vendor(members[0])  # type: ignore[misc]
    facts = _facts(members[0], keys)
    guesses: dict[str, str] = {}
    name = labels.get(keys.pool)
    if name is None:
        name = _free(_name_from(names[0]), taken)
        guesses["name"] = f"from the node names; no {keys.pool} label"
    pool: dict = {"name": name, "usage": _pool_usage(members[0], labels, keys, guesses), "nodes": flow(compress(names))}
    pool["gpu"] = _gpu(members, vendor, resource, facts, labels, layouts, guesses)
    if facts.product:
        holding = next((t for t, products in tiers.items() if facts.product in products), None)
        tier = labels.get(keys.tier) or holding or _tier_name(facts.product)
        if keys.tier not in labels:
            guesses["gpu"] = f"tier {tier}, {'the tier of its product' if holding else 'from the product'}; no label"
        if facts.product not in tiers.setdefault(tier, []):
            tiers[tier].append(facts.product)
    pool.update(_node_shape(members, labels, keys))
    if keys.slurm_only in {t.get("key") for t in (members[0].get("spec") or {}).get("taints") or []}:
        pool["slurm"] = flow({"partition": name})
        guesses["slurm"] = f"the {keys.slurm_only} taint; Slurm's partition settings are not on the cluster"
    if MIG_CONFIG in labels and not layouts.mig.get(labels[MIG_CONFIG]):
        draft.notes.append(f"pool {name}: MIG layout {labels[MIG_CONFIG]} ({MIG_CONFIG}) not read; set gpu.mig")
    return block(pool, guesses)


def _rdma_devices(node: dict) -> dict[str, str]:
    """The RDMA device plugin's resources a node advertises (`rdma/...`) -> how many."""
    capacity = (node.get("status") or {}).get("allocatable") or {}
    return {r: str(n) for r, n in capacity.items() if r.startswith("rdma/") and str(n).isdigit() and int(n) > 0}


def _cpu_pool(members: list[dict], keys: LabelKeys) -> CommentedMap:
    """A pool of CPU-only nodes: policyc's pool label on nodes without a GPU."""
    names = [n["metadata"]["name"] for n in members]
    labels = _common([n["metadata"].get("labels") or {} for n in members])
    guesses: dict[str, str] = {}
    pool: dict = {"name": labels[keys.pool], "usage": _pool_usage(members[0], labels, keys, guesses)}
    pool["nodes"] = flow(compress(names))
    pool.update(_node_shape(members, labels, keys))
    return block(pool, guesses)


def _discovery(pool: CommentedMap, rule_labels: dict, vendor: Vendor) -> None:
    """`gpuFeatureDiscovery: false` where policyc's own rule sets the vendor's product label (its discovery does not
    run); the GPU memory only then, since the vendor's discovery labels it where it runs."""
    if vendor.product_label and vendor.product_label in rule_labels:
        pool.insert(list(pool).index("gpu") + 1, "gpuFeatureDiscovery", False)
    else:
        pool["gpu"].pop("memory", None)


def _pool_usage(node: dict, labels: dict, keys: LabelKeys, guesses: dict[str, str]) -> str:
    """policyc's usage label, else a taint or label naming training or inference, else a guess."""
    if keys.usage in labels:
        return labels[keys.usage]
    usage = _usage(node, keys)
    if usage is None:
        guesses["usage"] = f"no {keys.usage} label and no taint or label saying training or inference"
        return "training"
    guesses["usage"] = "from a taint or label naming it"
    return usage


def _node_shape(members: list[dict], labels: dict, keys: LabelKeys) -> dict:
    """allocatable, rdma, labels and taints: what every node of the pool has alike."""
    out: dict = {}
    allocatable = _common([(n.get("status") or {}).get("allocatable") or {} for n in members])
    sized = {r: str(allocatable[r]) for r in ("cpu", "memory") if r in allocatable}
    if sized:
        out["allocatable"] = flow(sized)
    rdma = _common([_rdma_devices(n) for n in members])
    if len(rdma) == 1:
        [(resource, per_node)] = rdma.items()
        out["rdma"] = flow({"resource": resource, "perNode": int(per_node)})
    elif labels.get(RDMA_LABEL) == "true":
        out["rdma"] = True
    own = {k: v for k, v in labels.items() if _pool_label(k, keys) and k != RDMA_LABEL}
    if own:
        out["labels"] = block(own)
    taints = _taints(members[0], keys)
    if taints:
        out["taints"] = [flow({k: t[k] for k in ("key", "value", "effect") if t.get(k)}) for t in taints]
    return out


def _gpu(members, vendor, resource, facts: NodeFacts, labels: dict, layouts: Layouts, guesses: dict) -> CommentedMap:
    gpu: dict = {}
    if vendor.name != "nvidia":
        gpu["vendor"] = vendor.name
        if resource != vendor.resource:
            gpu["resource"] = resource
    gpu["product"] = facts.product or "unknown"
    if facts.product is None:
        guesses["gpu"] = f"no {vendor.product_label or 'product'} label: write the GPU product"
    capacities = {str((n.get("status") or {}).get("capacity", {}).get(resource, "")) for n in members}
    advertised = int(next(iter(capacities))) if len(capacities) == 1 and next(iter(capacities)).isdigit() else None
    gpu["count"] = facts.count or advertised or 1
    split = _split(labels, layouts)
    if split is not None and advertised:
        key, value, per_card = split
        gpu[key] = value
        if not facts.count and advertised % per_card == 0:
            gpu["count"] = advertised // per_card
    elif MIG_CONFIG in labels:
        guesses["gpu"] = "count from the GPU capacity: MIG devices, not cards; write the cards and gpu.mig"
    memory = _memory(labels.get(vendor.memory_label) if vendor.memory_label else None)
    if memory:
        gpu["memory"] = memory
    return flow(gpu)


def _memory(mib: str | None) -> str | None:
    """GPU memory as its discovery labels it, in MiB, as the policy writes it (Gi where whole)."""
    if not mib or not mib.isdigit():
        return None
    return f"{int(mib) // 1024}Gi" if int(mib) % 1024 == 0 else f"{mib}Mi"


def _split(labels: dict, layouts: Layouts) -> tuple[str, dict, int] | None:
    """("mig" or "sharing", its block, what one card advertises) from the layout the node's labels select."""
    devices = layouts.mig.get(labels.get(MIG_CONFIG, ""))
    if devices:
        return "mig", {"devices": devices}, sum(devices.values())
    sharing = layouts.sharing.get(labels.get(DEVICE_PLUGIN_CONFIG, ""))
    if sharing:
        return "sharing", {"strategy": sharing[0], "replicas": sharing[1]}, sharing[1]
    return None


def _usage(node: dict, keys: LabelKeys) -> str | None:
    words = [f"{t.get('key')}={t.get('value', '')}" for t in (node.get("spec") or {}).get("taints") or []]
    words += [f"{k}={v}" for k, v in (node["metadata"].get("labels") or {}).items()]
    for usage, stems in USAGE_WORDS.items():
        if any(stem in word.lower() for word in words for stem in stems):
            return usage
    return None


def _name_from(node_name: str) -> str:
    """A pool name from a node's name: its letters before the number (`a100-07` -> a100)."""
    base = re.sub(r"[-.]?\d+$", "", node_name).strip("-.") or node_name
    return re.sub(r"[^a-z0-9-]+", "-", base.lower()).strip("-")[:50] or "pool"


def _free(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}-{n}", n + 1
    return candidate


def _tier_name(product: str) -> str:
    """A tier name from a GPU product: `NVIDIA-A100-SXM4-80GB` -> a100-sxm4-80gb."""
    words = re.sub(r"^(nvidia|tesla|amd)[-_ ]", "", product.lower())
    return re.sub(r"[^a-z0-9-]+", "-", words).strip("-")[:50] or "gpu"

"""Resources a tenant's queue, quota and limit range name must be ones something provides: a resource name is any
qualified name, so a misspelt one (`nvidia.com/gpus`, a DeviceClass one letter off) is accepted by the API server and
bounds nothing, and the tenant's use of the real one is unbounded.

What provides a resource: the policy's pools (their accelerators, MIG devices, RDMA resource and stated allocatable),
its tiers, the DeviceClasses it emits (and NVIDIA's DRA driver's, which runs where a tier has `dra: true`), and
Kubernetes (cpu, memory, ephemeral-storage, storage: the language takes no other name without a '/'). Anything else
is an error (PC488) where policyc knows who would provide it: a `requests.`/`limits.` quota key written as a
resource, a domain of Kubernetes or of a device plugin policyc knows (`policyc.checks.devices`), a DeviceClass under
the policy's domain or of NVIDIA's driver. A resource of a device plugin or DRA driver policyc cannot know (a site's
`rdma/...`) is a warning (PC489): it bounds something only if one provides it. Stating it in the allocatable of the
pools whose nodes advertise it makes it provided.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from policyc.checks.devices import known_devices
from policyc.diagnostics import Diagnostic, Path, closest, diag
from policyc.gpu import dra
from policyc.ir import Cluster, Tenant
from policyc.k8s.names import is_dns1123_subdomain

KUBERNETES_DOMAINS = ("kubernetes.io", "k8s.io")
"""Domains Kubernetes keeps for its own resources (extended resources may not use them)."""
QUOTA_PREFIXES = ("requests.", "limits.")
"""How ResourceQuota keys prefix resources (policyc writes the prefix itself)."""


def provided(cluster: Cluster) -> frozenset[str]:
    """Every resource the policy's pools, tiers and DeviceClasses provide."""
    out = {*cluster.accelerators, *cluster.claimed_devices}
    out |= {t.resource for t in cluster.tiers if t.resource}
    for p in cluster.pools:
        out |= set(p.allocatable) | {r for r in (p.resource, p.rdma_resource) if r}
    classes = [t.device_class for t in cluster.tiers if t.device_class]
    if classes:  # NVIDIA's DRA driver runs on the nodes of DRA tiers, and installs its classes
        classes += dra.DRIVER_CLASSES
    out |= {dra.EXTENDED_PREFIX + c for c in classes} | {dra.devices_key(c) for c in classes}
    return frozenset(out)


def named(tenant: Tenant) -> Iterator[tuple[str, Path]]:
    """Each extended resource (a name with '/') the tenant's queue, quota and limit range name, and where."""
    q, at = tenant.queue, tenant.path
    places: list[tuple[Path, dict]] = [
        ((*at, "queue", "guarantee"), q.guarantee),
        ((*at, "queue", "deserved"), q.deserved_given),
        ((*at, "queue", "capability"), q.capability),
    ]
    if tenant.quota is not None:
        # A quota's keys are `requests.<resource>`, or a DRA devices key as it is (`dra.quota_key`); limits take no
        # extended resource, and object counts are no resources.
        requests = {k.removeprefix("requests."): v for k, v in tenant.quota.hard.items() if k.startswith("requests.")}
        requests |= {k: v for k, v in tenant.quota.hard.items() if dra.is_devices_key(k)}
        places.append(((*at, "quota", "requests"), requests))
        for cls, hard in tenant.quota.per_class.items():
            places.append(((*at, "quota", "perPriorityClass", cls), {k.removeprefix("requests."): v for k, v in
                                                                      hard.items()}))  # fmt: skip
    if tenant.limit_range is not None:
        lr = tenant.limit_range
        for field, amounts in (("default", lr.default), ("defaultRequest", lr.default_request), ("max", lr.max),
                               ("min", lr.min)):  # fmt: skip
            places.append(((*at, "limitRange", field), amounts))
    for base, amounts in places:
        for resource in amounts:
            if "/" in resource:
                yield resource, (*base, resource)


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    if not cluster.complete:  # a pool or tier left out for its errors may be the one providing it
        return
    have = provided(cluster)
    for tenant in cluster.tenants:
        for resource, at in named(tenant):
            if resource not in have:
                yield _unprovided(resource, at, have, cluster)


def _unprovided(resource: str, at: Path, have: frozenset[str], cluster: Cluster) -> Diagnostic:
    prefix = next((p for p in QUOTA_PREFIXES if resource.startswith(p)), None)
    if prefix is not None:
        return diag("unbound-resource", f"'{resource}' is a ResourceQuota key, not a resource (policyc writes the "
                    f"'{prefix}' of its quotas' keys)", at, at_key=True,
                    hint=f"write '{resource.removeprefix(prefix)}'")  # fmt: skip
    device_class = dra.class_named(resource)
    if device_class is not None:
        return _unknown_class(resource, device_class, at, have, cluster.keys.domain)
    meant = closest(resource, have)
    close = f"did you mean '{meant}'? or, " if meant else ""
    state_it = f"{close}if nodes advertise it, state it in the allocatable of their pools"
    domain = resource.split("/", 1)[0]
    if _under(domain, KUBERNETES_DOMAINS):
        return diag("unbound-resource", f"Kubernetes has no resource '{resource}'", at, at_key=True,
                    hint=f"did you mean '{meant}'?" if meant else "remove it")  # fmt: skip
    if _under(domain, {r.split("/", 1)[0] for r in known_devices()}):
        return diag("unbound-resource", f"no pool of the policy provides '{resource}', so it bounds nothing", at,
                    at_key=True, hint=state_it)  # fmt: skip
    return diag("resource-of-unknown-plugin", f"no pool of the policy states '{resource}', and policyc does not know "
                "the device plugin that would advertise it: it bounds something only if one does", at, at_key=True,
                hint=state_it)  # fmt: skip


def _unknown_class(resource: str, device_class: str, at: Path, have: frozenset[str], domain: str) -> Diagnostic:
    """A resource of a DeviceClass the policy does not emit; the one meant is looked for by its class's name."""
    # The policy's own classes (its tiers'), written in the same form (a quota's devices key or the extended resource).
    mine = {c: r for r in have if (c := dra.class_named(r)) and _under(c, (domain,))
            and dra.is_devices_key(r) == dra.is_devices_key(resource)}  # fmt: skip
    completed = f"{device_class}.{domain}"  # a tier's name without the domain
    meant = completed if completed in mine else closest(device_class, mine)
    close = f"did you mean '{mine[meant]}'?" if meant else None
    counts = f"'{resource}' counts devices of DeviceClass '{device_class}'"
    if is_dns1123_subdomain(device_class):  # its problems: not a name a DeviceClass may have
        return diag("unbound-resource", f"{counts}, which no DeviceClass can be named (a DNS subdomain: lower case, "
                    "digits, '-' and '.')", at, at_key=True, hint=close or "remove it")  # fmt: skip
    if device_class in dra.DRIVER_CLASSES:
        return diag("unbound-resource", f"{counts} of NVIDIA's DRA driver, which serves no pool of the policy (no GPU "
                    "tier has dra: true)", at, at_key=True,
                    hint="set dra: true on the GPU tier whose devices it should count, or remove it")  # fmt: skip
    if _under(device_class, (domain,)):
        return diag("unbound-resource", f"{counts}, which the policy does not emit (it emits "
                    f"{', '.join(sorted(mine)) or 'none'}: one per GPU tier with dra: true)", at, at_key=True,
                    hint=close or "remove it, or set dra: true on the GPU tier it should count")  # fmt: skip
    return diag("resource-of-unknown-plugin", f"{counts}, which the policy does not emit: it bounds something only if "
                "a DRA driver or an administrator creates it", at, at_key=True,
                hint=close or "check the DeviceClass's name: kubectl get deviceclasses")  # fmt: skip


def _under(domain: str, owners: Iterable[str]) -> bool:
    """Whether `domain` is one of `owners` or a subdomain of one."""
    return any(domain == o or domain.endswith("." + o) for o in owners)

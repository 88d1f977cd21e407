"""A fleet: the cluster documents of a policy directory, each one cluster's overrides of the shared policy.

A cluster document (kind Cluster, the platform's apiVersion) names a cluster and says what differs there: pools
replaced (`nodePools`, by name) or added (`addNodePools`), `kubernetesVersion`, `provisioning`, `scheduler`, the
teams it hosts (`hostedTeams`, by their documents' metadata.name; every team when left out), `quotaScale`, a
factor applied to the hosted tenants' quotas and queues, and `tenantOverrides`, a tenant's queue or quota of its own
there. Everything else falls back to the shared policy (the
platform document and the teams' documents). One cluster's policy is the shared one with its document's overrides
grafted in: each overriding value keeps its position in the cluster's file (`SourceMap.files`), so every diagnostic
about it points there. `destination` is where Argo CD deploys the cluster's directory (the fleet's ApplicationSet).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from math import floor
from typing import TYPE_CHECKING, Any, Protocol

from policyc.diagnostics import Diagnostic, Path, closest, diag, did_you_mean

if TYPE_CHECKING:
    from policyc.language.load import Document


class _Part(Protocol):
    """A document of a policy directory and its file (`policyc.language.teams`, which imports this module)."""

    file: str
    doc: Document

    @property
    def data(self) -> Any: ...

    def at(self, d: Diagnostic, path: Path, *, at_key: bool = False) -> Diagnostic: ...

    def where(self, path: Path) -> str: ...


CLUSTER_KIND = "Cluster"
REPLACED = ("kubernetesVersion", "provisioning", "scheduler")
"""Fields of the shared spec a cluster document replaces as a whole."""
CLUSTER_FIELDS = (
    "destination", *REPLACED, "nodePools", "addNodePools", "hostedTeams", "quotaScale", "tenantOverrides",
)  # fmt: skip
OVERRIDDEN = ("queue", "quota")
"""The settings of a tenant a cluster document may replace (`tenantOverrides`), each as a whole."""
_ENVELOPE = ("apiVersion", "kind", "metadata", "spec")
_SCALED = {"quota": ("requests", "limits"), "queue": ("guarantee", "deserved", "capability")}
"""The parts of a tenant's settings `quotaScale` multiplies."""


def is_cluster(part: _Part) -> bool:
    return isinstance(part.data, dict) and part.data.get("kind") == CLUSTER_KIND


def name_of(part: _Part) -> str | None:
    metadata = part.data.get("metadata") if isinstance(part.data, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


def names(clusters: list[_Part]) -> list[str]:
    """The names of the cluster documents, sorted, each once."""
    return sorted({n for n in map(name_of, clusters) if n is not None})


def _error(part: _Part, name: str, message: str, path: Path, hint: str, *, at_key: bool = False) -> Diagnostic:
    return part.at(diag(name, message, hint=hint), path, at_key=at_key)


def check_documents(clusters: list[_Part], platform: _Part) -> list[Diagnostic]:
    """What is wrong with the cluster documents' envelopes, and two documents of one name (every cluster's build
    reports these: a malformed document may be the one meant)."""
    out: list[Diagnostic] = []
    first: dict[str, _Part] = {}
    for part in clusters:
        out += _envelope(part, platform)
        name = name_of(part)
        if name is None:
            continue
        if name in first:
            out.append(
                _error(
                    part,
                    "cluster-name-clash",
                    f"cluster '{name}' is already named in {first[name].where(('metadata', 'name'))}",
                    ("metadata", "name"),
                    "rename this cluster, or merge the two documents into one",
                )
            )
        first.setdefault(name, part)
    return out


def envelope(part: _Part, platform: _Part, what: str) -> Iterator[tuple[str, Path, str, bool]]:
    """What is wrong with the apiVersion, the top-level fields and metadata.name of a `what` document ("team",
    "cluster") of a policy directory: (message, path, hint, at_key) each."""
    data = part.data
    version = platform.data.get("apiVersion")
    if data.get("apiVersion") != version:
        message = f"apiVersion '{data.get('apiVersion')}' is not the platform's"
        yield message, ("apiVersion",), f"write apiVersion: {version}, as {platform.where(('apiVersion',))} does", False
    for key in data:
        if key not in _ENVELOPE:
            hint = f"remove it: a {what} document holds {', '.join(_ENVELOPE)}"
            yield f"a {what} document has no field '{key}'", (key,), hint, True
    if name_of(part) is None:
        yield (
            f"a {what} document names its {what} in metadata.name",
            ("metadata",),
            f"write metadata: {{name: <{what}>}}",
            False,
        )


def _envelope(part: _Part, platform: _Part) -> Iterator[Diagnostic]:
    data = part.data
    for message, path, hint, at_key in envelope(part, platform, "cluster"):
        yield _error(part, "cluster-document", message, path, hint, at_key=at_key)
    spec = data.get("spec")
    if not isinstance(spec, dict):
        yield _error(
            part, "cluster-document", "a cluster document's spec is a mapping of its overrides", ("spec",),
            "write spec: {destination: {server: <API server URL>}, ...}",
        )  # fmt: skip
        return
    for key in spec:
        if key not in CLUSTER_FIELDS:
            hint = did_you_mean(key, CLUSTER_FIELDS, list_few=False)
            yield _error(
                part,
                "cluster-document",
                f"a cluster document overrides no field '{key}'; everything else comes from the shared policy",
                ("spec", key),
                hint or f"remove it, or set it in {platform.file}",
                at_key=True,
            )
    yield from _fields(part, spec)


def _fields(part: _Part, spec: dict) -> Iterator[Diagnostic]:
    """The shapes of the fields of a cluster document's spec that the policy's parse does not see."""
    destination = spec.get("destination")
    if not (
        isinstance(destination, dict)
        and len(destination) == 1
        and next(iter(destination)) in ("server", "name")
        and isinstance(next(iter(destination.values())), str)
    ):
        yield _error(
            part,
            "cluster-document",
            "a cluster document's destination is where Argo CD deploys it: its API server's URL, or its name in "
            "Argo CD",
            ("spec", "destination") if "destination" in spec else ("spec",),
            "write destination: {server: https://<API server>} (or destination: {name: <Argo CD cluster>})",
            at_key="destination" not in spec,
        )
    scale = spec.get("quotaScale")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, int | float) or scale <= 0):
        yield _error(
            part, "cluster-document", f"quotaScale is a factor above 0, not {scale!r}", ("spec", "quotaScale"),
            "write a number such as 0.5 (half of each hosted tenant's quota) or 2",
        )  # fmt: skip
    for key, (what, example) in _LISTS.items():
        items = spec.get(key)
        if items is not None and not (isinstance(items, list) and all(_well_formed(key, i) for i in items)):
            hint = f"write {key}: [{example}]"
            yield _error(part, "cluster-document", f"spec.{key} is a list of {what}", ("spec", key), hint)


_LISTS = {
    "nodePools": ("pools, each with its name", "{name: <pool>, ...}"),
    "addNodePools": ("pools, each with its name", "{name: <pool>, ...}"),
    "hostedTeams": ("team names", "<team>, ..."),
    "tenantOverrides": (
        f"tenants, each with its name and what differs in this cluster: {' or '.join(OVERRIDDEN)}",
        "{name: <tenant>, quota: {requests: {gpu: 8}}}",
    ),
}
"""The lists of a cluster document: what each holds, and an item."""


def _well_formed(key: str, item: Any) -> bool:
    if key == "hostedTeams":
        return isinstance(item, str)
    named = isinstance(item, dict) and isinstance(item.get("name"), str)
    return named and (key != "tenantOverrides" or set(item) <= {"name", *OVERRIDDEN})


def hosted(cluster: _Part, teams: list[_Part]) -> tuple[list[_Part], list[Diagnostic]]:
    """The team documents `cluster` hosts (all when it does not say), and its hosted names that are no team's."""
    listed = cluster.data["spec"].get("hostedTeams")
    if not isinstance(listed, list):
        return teams, []
    known = {n for n in map(name_of, teams) if n is not None}
    out: list[Diagnostic] = []
    seen: dict[str, int] = {}
    for i, name in enumerate(listed):
        if not isinstance(name, str):  # the document's check reports it
            continue
        if name in seen:
            out.append(_twice(cluster, "team", name, ("spec", "hostedTeams", seen[name]), ("spec", "hostedTeams", i)))
        elif name not in known:
            out.append(_unknown(cluster, "team", name, ("spec", "hostedTeams", i), known, "hostedTeams"))
        seen.setdefault(name, i)
    return [t for t in teams if name_of(t) in seen], out


def _twice(cluster: _Part, what: str, name: str, first: Path, again: Path) -> Diagnostic:
    return _error(
        cluster,
        "cluster-override-clash",
        f"{what} '{name}' is overridden twice in cluster '{name_of(cluster)}'; the first is in {cluster.where(first)}",
        again,
        "remove one of the two (merge what differs into the other)",
    )


def _unknown(cluster: _Part, what: str, name: str, path: Path, known: set[str], field_name: str) -> Diagnostic:
    hint = did_you_mean(name, known)
    added = "; to add a pool, list it under addNodePools" if field_name == "nodePools" else ""
    has = "the shared policy does not have" if what != "tenant" else "neither the platform nor a team it hosts declares"
    return _error(
        cluster,
        "cluster-unknown-name",
        f"spec.{field_name} names {what} '{name}', which {has}",
        path if field_name == "hostedTeams" else (*path, "name"),
        (hint or f"name one of the shared policy's {what}s") + added,
    )


@dataclass(eq=False)
class Overlay:
    """One cluster's overrides, grafted onto the shared policy (a merged `Document`)."""

    cluster: _Part
    doc: Document
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def apply(self) -> None:
        data, cluster_spec = self.doc.data, self.cluster.data["spec"]
        spec = data.get("spec")
        if not isinstance(spec, dict):
            return
        metadata = data.get("metadata")
        if isinstance(metadata, dict):  # the cluster's name is its policy's: generated files carry it
            data["metadata"] = {**metadata, "name": name_of(self.cluster)}
            self._graft(("metadata", "name"), ("metadata", "name"))
        for key in REPLACED:
            if key in cluster_spec:
                spec[key] = cluster_spec[key]
                self._graft(("spec", key), ("spec", key))
        self._pools(spec, cluster_spec)
        scale = cluster_spec.get("quotaScale")
        if isinstance(scale, int | float) and not isinstance(scale, bool) and scale > 0:
            spec["tenants"] = [_scaled(t, Fraction(scale)) for t in spec.get("tenants") or []]
        self._tenants(spec, cluster_spec)

    def _tenants(self, spec: dict, cluster_spec: dict) -> None:
        """The tenants' queues and quotas the cluster overrides (after quotaScale: an override is taken as written)."""
        items = cluster_spec.get("tenantOverrides")
        if not isinstance(items, list) or not isinstance(spec.get("tenants"), list):
            return
        tenants = spec["tenants"] = list(spec["tenants"])
        index = {t.get("name"): i for i, t in enumerate(tenants) if isinstance(t, dict)}
        seen: dict[str, Path] = {}
        for j, item in enumerate(items):
            name, at = item.get("name") if isinstance(item, dict) else None, ("spec", "tenantOverrides", j)
            if not isinstance(name, str):
                continue
            if name in seen:
                self.diagnostics.append(_twice(self.cluster, "tenant", name, (*seen[name], "name"), (*at, "name")))
            elif name not in index:
                known = {n for n in index if isinstance(n, str)}
                self.diagnostics.append(_unknown(self.cluster, "tenant", name, at, known, "tenantOverrides"))
            else:
                i = index[name]
                tenants[i] = {**tenants[i], **{k: item[k] for k in OVERRIDDEN if k in item}}
                for key in (k for k in OVERRIDDEN if k in item):
                    self._graft(("spec", "tenants", i, key), (*at, key))
            seen.setdefault(name, at)

    def _graft(self, target: Path, prefix: Path) -> None:
        self.doc.source_map.graft(target, self.cluster.file, self.cluster.doc.source_map, prefix)

    def _pools(self, spec: dict, cluster_spec: dict) -> None:
        shared = spec.get("nodePools")
        if not isinstance(shared, list):
            return
        pools = spec["nodePools"] = list(shared)
        index = {p.get("name"): i for i, p in enumerate(pools) if isinstance(p, dict)}
        seen: dict[str, Path] = {}
        for key in ("nodePools", "addNodePools"):
            items = cluster_spec.get(key)
            for j, pool in enumerate(items if isinstance(items, list) else ()):
                name = pool.get("name") if isinstance(pool, dict) else None
                if not isinstance(name, str):
                    continue
                at = ("spec", key, j)
                if name in seen:
                    self.diagnostics.append(_twice(self.cluster, "pool", name, (*seen[name], "name"), (*at, "name")))
                    continue
                seen[name] = at
                if key == "nodePools" and name not in index:
                    known = {n for n in index if isinstance(n, str)}
                    self.diagnostics.append(_unknown(self.cluster, "pool", name, at, known, key))
                    # as the hint assumes, it replaces the pool it likely names: nothing else follows from the typo
                    name = closest(name, known)
                    if name is None or name in seen:
                        continue
                    pool, seen[name] = {**pool, "name": name}, at
                elif key == "addNodePools" and name in index:
                    self.diagnostics.append(self._added_twice(name, at))
                    continue
                i = index[name] if key == "nodePools" else len(pools)
                pools[i:i + 1] = [pool]  # fmt: skip
                self._graft(("spec", "nodePools", i), at)

    def _added_twice(self, name: str, at: Path) -> Diagnostic:
        source = self.doc.source_map
        file = source.file_of(("spec", "nodePools"))
        line = source.locate(("spec", "nodePools", self._shared_index(name), "name"))[0]
        return _error(
            self.cluster,
            "cluster-override-clash",
            f"pool '{name}' is added, but the shared policy has it already ({file[0] if file else ''}:{line})",
            (*at, "name"),
            "move it from addNodePools to nodePools, which replaces the shared pool of its name",
        )

    def _shared_index(self, name: str) -> int:
        pools = self.doc.data["spec"]["nodePools"]
        return next(i for i, p in enumerate(pools) if isinstance(p, dict) and p.get("name") == name)


def _scaled(tenant: Any, factor: Fraction) -> Any:
    """`tenant` with its quota's requests and limits and its queue's guarantee, deserved share and capability times
    `factor`; a value that is no quantity is left for the policy's parse to report."""
    if not isinstance(tenant, dict):
        return tenant
    out = dict(tenant)
    for block, parts in _SCALED.items():
        settings = tenant.get(block)
        if isinstance(settings, dict):
            out[block] = {
                **settings,
                **{
                    part: {name: _times(name, value, factor) for name, value in settings[part].items()}
                    for part in parts
                    if isinstance(settings.get(part), dict)
                },
            }
    return out


def _times(resource: str, value: Any, factor: Fraction) -> Any:
    from policyc.k8s.quantity import Quantity, QuantityError

    try:
        quantity = Quantity.from_json(value)
    except (QuantityError, TypeError, ValueError):
        return value
    product = quantity.value * factor
    if "/" in resource or resource == "gpu":  # counted in whole devices
        return floor(product)
    milli = Fraction(floor(product * 1000), 1000)  # the finest a quantity of CPU is written in
    return str(Quantity.from_value(milli, quantity.format))

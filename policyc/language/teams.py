"""A policy directory: one platform document and the teams' documents, merged into one policy.

The platform document (kind ClusterPolicy) holds pools, tiers, classes, the scheduler, defaults and, in
`spec.teams`, what a team may ask for. Each team document (kind Tenant, the platform's apiVersion) holds the team's
own tenants and the workloads that run as them. Every ``*.yaml`` and ``*.yml`` file under the directory (in sorted
order of their paths; a file may hold several documents) is read; hidden files and folders are left out.

The merged policy is the platform's with the teams' tenants and workloads appended: the rest of the pipeline sees
one policy, as if written in one file, and its source map knows the file each item was written in
(`SourceMap.files`), so every diagnostic points into the file that holds its value. What a team may not declare
(another team's tenant or namespace, more than `spec.teams` grants) is reported here, in the team's file, naming the
platform's rule by file and line; such an item is left out of the merged policy, so that nothing is said of it twice.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path as FilePath
from typing import Any

from policyc.diagnostics import Diagnostic, Path, PolicyError, closest, diag, listing
from policyc.k8s.objects import GENERATED
from policyc.language.load import Document, SourceMap, load_documents

PLATFORM_KIND, TEAM_KIND = "ClusterPolicy", "Tenant"
TEAM_FIELDS = ("tenants", "workloads")
"""What a team document's spec may hold."""


_read_once: dict[tuple, Any] | None = None
"""While `read_once` holds: what listing and reading each directory gave, by the arguments."""


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """Within it, each policy directory is listed and read once, whatever asks: a command (`policyc build` of a fleet
    lists the clusters, finds what each reads, compiles each, and writes the ApplicationSet: eight passes over the
    directory), whose files do not change while it runs. Outside it, each call reads the files afresh."""
    global _read_once
    outer, _read_once = _read_once, {}
    try:
        yield
    finally:
        _read_once = outer


def _once(key: tuple, compute: Callable[[], Any]) -> Any:
    if _read_once is None:
        return compute()
    if key not in _read_once:
        _read_once[key] = compute()
    return _read_once[key]


def policy_files(directory: str | os.PathLike[str]) -> list[str]:
    """The YAML files under `directory`, as paths relative to it with '/' between parts, sorted; hidden ones and those
    policyc wrote (an output directory kept inside the policy's: `policyc build DIR -o DIR/manifests`) left out."""
    return list(_once(("files", os.path.abspath(directory)), lambda: _policy_files(directory)))


def _policy_files(directory: str | os.PathLike[str]) -> list[str]:
    root = FilePath(directory)
    found = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        hidden = any(p.startswith(".") for p in relative.parts)
        if path.suffix in (".yaml", ".yml") and path.is_file() and not hidden and not _generated(path):
            found.append(relative.as_posix())
    return sorted(found)


def _generated(path: FilePath) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(GENERATED)) == GENERATED.encode()
    except OSError:
        return False  # reading it reports why


@dataclass(eq=False)
class _Part:
    """One document of the directory, with the file it came from."""

    file: str
    doc: Document

    @property
    def data(self) -> Any:
        return self.doc.data

    def at(self, d: Diagnostic, path: Path, *, at_key: bool = False) -> Diagnostic:
        """`d` located at `path` of this document."""
        line, column = self.doc.source_map.locate(path, at_key=at_key)
        return replace(d, file=self.file, line=line, column=column)

    def where(self, path: Path) -> str:
        """``file:line`` of `path`, for a message naming it."""
        return f"{self.file}:{self.doc.source_map.locate(path)[0]}"


def load_directory(directory: str | os.PathLike[str], name: str, cluster: str | None = None) -> Document:
    """The policy of `directory` (named `name` in diagnostics), merged; raises `PolicyError` when there is none.
    With cluster documents (`policyc.language.fleet`), `cluster` names the one whose overrides apply (None: the
    shared policy alone)."""
    from policyc.language import fleet

    parts, diagnostics, unread = _read_all(directory, policy_files(directory), name)
    platforms, clusters, teams = _by_kind(parts)
    if len(platforms) == 1:
        diagnostics += fleet.check_documents(clusters, platforms[0])
    chosen = _cluster(clusters, cluster)
    if chosen is not None:
        teams, unknown = fleet.hosted(chosen, teams)
        diagnostics += unknown
    return _overlaid(_merged(platforms, teams, diagnostics, unread, name), chosen)


def _cluster(parts: list[_Part], name: str | None) -> _Part | None:
    """The cluster document of `parts` named `name`, if it has a spec to apply."""
    from policyc.language import fleet

    chosen = [p for p in parts if fleet.is_cluster(p) and fleet.name_of(p) == name]
    return chosen[0] if chosen and isinstance(chosen[0].data.get("spec"), dict) else None


def _overlaid(doc: Document, cluster: _Part | None) -> Document:
    """`doc` with the overrides of the cluster document `cluster` applied (None: as it is)."""
    from policyc.language import fleet

    if cluster is not None:
        overlay = fleet.Overlay(cluster, doc)
        overlay.apply()
        doc.diagnostics += overlay.diagnostics
    return doc


def fleet_of(directory: str | os.PathLike[str]) -> tuple[str, dict[str, dict]]:
    """The platform's name and its fleet: each cluster document's name -> its destination (a mapping, empty when
    malformed: building the cluster reports it); no cluster for a policy file or a directory without them."""
    from policyc.language import fleet

    if not os.path.isdir(directory):
        return "", {}
    parts = _read_all(directory, policy_files(directory), "")[0]
    platform = next((fleet.name_of(p) for p in parts if _is_platform(p)), None) or ""
    destinations = {}
    for part in sorted((p for p in parts if fleet.is_cluster(p)), key=lambda p: str(fleet.name_of(p))):
        spec = part.data.get("spec")
        destination = spec.get("destination") if isinstance(spec, dict) else None
        name = fleet.name_of(part)
        if name is not None:
            destinations.setdefault(name, destination if isinstance(destination, dict) else {})
    return platform, destinations


def compiled_from(directory: str | os.PathLike[str]) -> dict[str | None, list[str]]:
    """The files (relative to `directory`, sorted) whose documents each cluster's policy takes in: the platform's, the
    cluster's own document's and every hosted team's (None stands for the policy of a directory without cluster
    documents). Only clusters for which reading the directory gives no diagnostic at all are in it (every file read,
    one platform document, the cluster documents' checks, the hosted teams known): what the rest read is for their
    compilation to show (`policyc.output.records` reuses a previous build only of the clusters in it)."""
    from policyc.language import fleet

    parts, diagnostics, unread = _read_all(directory, policy_files(directory), "")
    platforms, clusters, teams = _by_kind(parts)
    if diagnostics or unread or len(platforms) != 1:
        return {}
    if not clusters:
        return {None: sorted({platforms[0].file, *(t.file for t in teams)})}
    if fleet.check_documents(clusters, platforms[0]):
        return {}
    out: dict[str | None, list[str]] = {}
    for cluster in clusters:
        hosted, unknown = fleet.hosted(cluster, teams)
        if not unknown:
            out[fleet.name_of(cluster)] = sorted({platforms[0].file, cluster.file, *(t.file for t in hosted)})
    return out


def load_team(team: str, directory: str | os.PathLike[str], name: str, cluster: str | None = None) -> Document:
    """The policy of the team file `team` and the platform document of `directory` (named `name`), without the other
    teams' files: a team's CI checks its file alone. What the other files say is not read, nor their errors shown.
    With `cluster`, a cluster document of the directory whose overrides apply (`policyc.language.fleet`); the cluster
    documents are checked in the directory's own validation, not here."""
    parts, diagnostics, unread = _read_all(directory, policy_files(directory), name)
    platforms = [p for p in parts if _is_platform(p)]
    if platforms or not unread:  # else a file that could not be read may be the platform's: its errors stand
        diagnostics = [d for d in diagnostics if d.file in {p.file for p in platforms}]
        unread = False
    teams, team_diagnostics, team_unread = _read_all(os.path.dirname(team) or ".", [os.path.basename(team)], "")
    teams = [replace(p, file=team) for p in teams]
    team_diagnostics = [replace(d, file=team) for d in team_diagnostics]
    for part in [p for p in teams if _is_platform(p)]:  # the platform's file, given as a team's
        d = diag(
            "team-document",
            f"--platform checks a team's file, and this is the platform document (kind: {PLATFORM_KIND})",
            hint=f"check it with its directory: `policyc validate {directory}`",
        )
        team_diagnostics.append(part.at(d, ("kind",)))
        teams.remove(part)
    others = [p for p in parts if not _is_platform(p)]
    doc = _merged(platforms, teams, diagnostics + team_diagnostics, unread or team_unread, name, others)
    return _overlaid(doc, _cluster(parts, cluster))


def clusters_hosting(team: str, directory: str | os.PathLike[str]) -> list[str]:
    """The clusters of the fleet in `directory` that host a team whose documents are in the file `team`
    (`policyc.language.fleet.hosted`), sorted; none for a directory without cluster documents."""
    from policyc.language import fleet

    teams = _read_all(os.path.dirname(team) or ".", [os.path.basename(team)], "")[0]
    clusters = _by_kind(_read_all(directory, policy_files(directory), "")[0])[1]
    return sorted({str(fleet.name_of(c)) for c in clusters if isinstance(c.data.get("spec"), dict)
                   and fleet.hosted(c, teams)[0]})  # fmt: skip


def _by_kind(parts: list[_Part]) -> tuple[list[_Part], list[_Part], list[_Part]]:
    """A directory's documents by kind: the platform's (one, unless it is wrong), the clusters' and the teams'."""
    from policyc.language import fleet

    platforms = [p for p in parts if _is_platform(p)]
    clusters = [p for p in parts if fleet.is_cluster(p)]
    return platforms, clusters, [p for p in parts if p not in platforms and p not in clusters]


def _is_platform(part: _Part) -> bool:
    return isinstance(part.data, dict) and part.data.get("kind") == PLATFORM_KIND


def _misspells_platform(kind: object) -> bool:
    """Whether `kind` is the platform's kind misspelt (`Clusterpolicy`), not a team's or a cluster's."""
    from policyc.language.fleet import CLUSTER_KIND

    return (
        isinstance(kind, str)
        and kind not in (PLATFORM_KIND, TEAM_KIND, CLUSTER_KIND)
        and closest(kind, [PLATFORM_KIND, TEAM_KIND, CLUSTER_KIND]) == PLATFORM_KIND
    )


def _merged(
    platforms: list[_Part],
    teams: list[_Part],
    diagnostics: list[Diagnostic],
    unread: bool,
    name: str,
    others: list[_Part] | None = None,
) -> Document:
    """The platform's policy with the teams' tenants and workloads (a `Document`); raises `PolicyError` without one
    platform document (`others`: the directory's documents of other kinds, where not `teams`)."""
    if len(platforms) != 1:
        if platforms or not unread:  # with none, a file that could not be read may be the platform's
            diagnostics.append(_platform_count(platforms, name, teams if others is None else others))
        raise PolicyError(diagnostics)
    merged = _Merge(platforms[0])
    for team in teams:
        merged.add(team)
    return Document(name, merged.data, merged.source_map, diagnostics + merged.diagnostics)


def _read_all(
    directory: str | os.PathLike[str], files: list[str], name: str
) -> tuple[list[_Part], list[Diagnostic], bool]:
    """Every document of the `files` of `directory` (named `name`), the diagnostics of reading them (each in its
    file), and whether a file could not be read at all (the others are still read: all their errors in one run)."""
    key = ("read", os.path.abspath(directory), tuple(files), name)
    parts, diagnostics, unread = _once(key, lambda: _read_files(directory, files, name))
    return list(parts), list(diagnostics), unread


def _read_files(
    directory: str | os.PathLike[str], files: list[str], name: str
) -> tuple[list[_Part], list[Diagnostic], bool]:
    parts: list[_Part] = []
    diagnostics: list[Diagnostic] = []
    unread = False
    for relative in files:
        file = relative if not name or os.path.normpath(name) == "." else f"{name.rstrip('/')}/{relative}"
        try:
            docs = load_documents(os.path.join(directory, relative), file)
        except PolicyError as e:
            diagnostics.extend(replace(d, file=file, line=d.line or 1, column=d.column or 1) for d in e.diagnostics)
            unread = True
            continue
        for doc in docs:
            diagnostics.extend(replace(d, file=file) for d in doc.diagnostics)
            parts.append(_Part(file, doc))
    return parts, diagnostics, unread


def _platform_count(platforms: list[_Part], name: str, others: list[_Part]) -> Diagnostic:
    """The diagnostic of a directory without one platform document; without any, at the document whose kind is a
    misspelling of the platform's (`others`: the documents of other kinds) where there is one."""
    misspelt = [p for p in others if isinstance(p.data, dict) and _misspells_platform(p.data.get("kind"))]
    if not platforms and misspelt:
        kind = misspelt[0].data["kind"]
        d = diag(
            "policy-directory",
            f"{name} holds no platform document (kind: {PLATFORM_KIND}); this document has kind '{kind}'",
            hint=f"write kind: {PLATFORM_KIND}",
        )
        return misspelt[0].at(d, ("kind",))
    if not platforms:
        d = diag(
            "policy-directory",
            f"{name} holds no platform document (kind: {PLATFORM_KIND})",
            hint=f"add one, e.g. `policyc init {os.path.join(name, 'platform.yaml')}`",
        )
        return replace(d, file=name.rstrip("/"), line=1, column=1)
    first, second = platforms[0], platforms[1]
    d = diag(
        "policy-directory",
        f"a second platform document (kind: {PLATFORM_KIND}); the first is in {first.where(('kind',))}",
        hint="a policy directory has one platform document: merge the two, or move one out of the directory",
    )
    return second.at(d, ("kind",))


@dataclass(eq=False)
class _Claim:
    """Who declared a tenant, namespace or workload name first."""

    part: _Part
    path: Path


@dataclass(eq=False)
class _Merge:
    """The platform's policy, to which each team document's tenants and workloads are added in turn."""

    platform: _Part
    data: dict[str, Any] = field(init=False)
    spec: dict[str, Any] | None = field(init=False)
    """The merged policy's spec (None when the platform's is not a mapping: the parse reports it)."""
    grant: _Grant = field(init=False)
    source_map: SourceMap = field(init=False)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    claims: dict[tuple[str, str], _Claim] = field(default_factory=dict)
    """("tenant" | "namespace" | "workload", name) -> its first claim."""

    def __post_init__(self) -> None:
        platform = self.platform.data
        spec = platform.get("spec")
        self.spec = dict(spec) if isinstance(spec, dict) else None
        self.data = {**platform, "spec": self.spec} if self.spec is not None else dict(platform)
        own = self.platform.doc.source_map
        self.source_map = SourceMap(dict(own.keys), dict(own.values), dict(own.texts), set(own.rejected))
        self.source_map.files[()] = (self.platform.file, ())
        self.grant = _Grant.of(self.platform)
        if self.spec is not None:
            for list_name in TEAM_FIELDS:
                items = self.spec.get(list_name)
                if isinstance(items, list):
                    self.spec[list_name] = list(items)
                    for i, item in enumerate(items):
                        self._claim(self.platform, ("spec", list_name, i), item)

    def add(self, team: _Part) -> None:
        """Check `team` and add what it may declare."""
        spec = self._team_spec(team)
        if spec is None or self.spec is None:
            return
        tenants = spec.get("tenants") if isinstance(spec.get("tenants"), list) else []
        own = {t.get("name") for t in tenants if isinstance(t, dict)}
        kept = set()
        for i, tenant in enumerate(tenants):
            path = ("spec", "tenants", i)
            self._within_grant(team, path, tenant)
            if self._claim(team, path, tenant):
                self._append(team, "tenants", i, tenant)
                kept.add(tenant.get("name") if isinstance(tenant, dict) else None)
        self._quota(team, tenants)
        workloads = spec.get("workloads") if isinstance(spec.get("workloads"), list) else []
        for i, workload in enumerate(workloads):
            path = ("spec", "workloads", i)
            self._within_grant(team, path, workload)
            if not self._own_tenant(team, path, workload, own) or not self._claim(team, path, workload):
                continue
            tenant = workload.get("tenant") if isinstance(workload, dict) else None
            if not isinstance(tenant, str) or tenant in kept:  # without a tenant: the policy's parse reports it
                self._append(team, "workloads", i, workload)

    def _error(self, team: _Part, name: str, message: str, path: Path, hint: str, *, at_key: bool = False) -> None:
        self.diagnostics.append(team.at(diag(name, message, hint=hint), path, at_key=at_key))

    def _team_spec(self, team: _Part) -> dict | None:
        """The spec of a well-formed team document, after reporting what is wrong with its envelope."""
        data = team.data
        if not isinstance(data, dict) or data.get("kind") != TEAM_KIND:
            kind = data.get("kind") if isinstance(data, dict) else None
            found = f"kind '{kind}'" if isinstance(kind, str) else "no kind"
            self._error(
                team,
                "team-document",
                f"a policy directory holds a platform document and team documents; this one has {found}",
                ("kind",),
                f"write kind: {TEAM_KIND} for a team's tenants and workloads, or move the file out of the directory",
            )
            return None
        self._envelope(team)
        spec = data.get("spec")
        if not isinstance(spec, dict):
            self._error(
                team,
                "team-document",
                "a team document's spec is a mapping of its tenants and workloads",
                ("spec",),
                "write spec: {tenants: [...], workloads: [...]}",
            )
            return None
        for key in spec:
            if key not in TEAM_FIELDS:
                platform_s = f"; spec.{key} is the platform's ({self.platform.file})" if key in _spec_fields() else ""
                self._error(
                    team,
                    "team-document",
                    f"a team document declares only tenants and workloads, not '{key}'",
                    ("spec", key),
                    f"remove it from this file{platform_s}",
                    at_key=True,
                )
        for key in TEAM_FIELDS:
            if key in spec and not isinstance(spec[key], list):
                self._error(team, "wrong-type", f"'spec.{key}' must be a list", ("spec", key), f"write {key}: [...]")
                return None
        return spec

    def _envelope(self, team: _Part) -> None:
        """Report what is wrong with a team document's apiVersion, metadata and top-level fields."""
        from policyc.language.fleet import envelope

        for message, path, hint, at_key in envelope(team, self.platform, "team"):
            self._error(team, "team-document", message, path, hint, at_key=at_key)

    def _claim(self, part: _Part, path: Path, item: Any) -> bool:
        """Record the names `item` (a tenant or workload at `path`) claims; False, with an error, if another
        document claimed one first."""
        if not isinstance(item, dict):
            return True
        kind = "tenant" if path[1] == "tenants" else "workload"
        names = [(kind, item.get("name"), (*path, "name"))]
        if kind == "tenant" and isinstance(item.get("namespaces"), list):
            names += [("namespace", ns, (*path, "namespaces", j)) for j, ns in enumerate(item["namespaces"])]
        for what, name, at in names:
            first = self.claims.get((what, name)) if isinstance(name, str) else None
            if first is not None and first.part is not part:
                hint = (
                    f"choose another namespace for {kind} '{item.get('name')}'"
                    if what == "namespace"
                    else f"rename the {kind}, or declare it in one file only"
                )
                self._error(
                    part,
                    "team-claim-clash",
                    f"{what} '{name}' is already claimed in {first.part.where(first.path)}",
                    at,
                    hint,
                )
                return False
        for what, name, at in names:
            if isinstance(name, str):
                self.claims.setdefault((what, name), _Claim(part, at))
        return True

    def _own_tenant(self, team: _Part, path: Path, workload: Any, own: set) -> bool:
        tenant = workload.get("tenant") if isinstance(workload, dict) else None
        if not isinstance(tenant, str) or tenant in own:
            return True
        choices = sorted(n for n in own if isinstance(n, str))
        hint = (
            f"write tenant: {choices[0]}" + (f" (or one of {listing(choices[1:])})" if choices[1:] else "")
            if choices
            else f"declare tenant '{tenant}' in this file"
        )
        self._error(
            team,
            "team-foreign-tenant",
            f"workload '{workload.get('name')}' runs as tenant '{tenant}', which this team document does not "
            "declare; a team's workloads run as its own tenants",
            (*path, "tenant"),
            hint,
        )
        return False

    def _within_grant(self, team: _Part, path: Path, item: Any) -> None:
        """Report what the tenant or workload `item` asks for beyond what `spec.teams` grants (it is kept in the
        policy: the rest of the pipeline has nothing to say of it)."""
        for field_path, wanted, grant_name in self.grant.asked(path, item):
            granted = self.grant.lists[grant_name]
            if wanted is None:
                self._error(
                    team,
                    "team-beyond-grant",
                    f"tenant '{item.get('name')}' states no priorityClasses, so it may use every class; "
                    f"teams may use {listing(granted)} ({self.grant.where(grant_name)})",
                    path,
                    f"add priorityClasses: [{', '.join(granted)}] to the tenant",
                )
            elif wanted not in granted:
                self._error(
                    team,
                    "team-beyond-grant",
                    f"'{wanted}' is not granted to teams: spec.teams.{grant_name} "
                    f"({self.grant.where(grant_name)}) lists {listing(granted) or 'none'}",
                    field_path,
                    (f"use one of {listing(granted)}, or " if granted else "") + f"ask the platform team to grant "
                    f"'{wanted}'",
                )

    def _quota(self, team: _Part, tenants: list) -> None:
        """Report a resource the team's tenants together take more of than `spec.teams.maxQuota` grants."""
        for resource, (most, written) in self.grant.max_quota.items():
            asked = {i: self.grant.requested(tenant, resource) for i, tenant in enumerate(tenants)}
            for i, tenant in enumerate(tenants):
                if asked[i] is None:
                    named = tenant.get("name") if isinstance(tenant, dict) else i
                    self._error(
                        team,
                        "team-beyond-grant",
                        f"tenant '{named}' takes no bounded '{resource}': spec.teams.maxQuota "
                        f"({self.grant.where('maxQuota')}) bounds the team's to {written}",
                        ("spec", "tenants", i),
                        f"add quota: {{requests: {{{resource}: <at most {written}>}}}} to the tenant",
                    )
            amounts = [amount for amount in asked.values() if amount is not None]
            if len(amounts) < len(asked) or sum(value for value, _ in amounts) <= most:
                continue
            self._error(
                team,
                "team-beyond-grant",
                f"the team's tenants ask for {' + '.join(text for _, text in amounts)} of '{resource}', more "
                f"than spec.teams.maxQuota grants a team ({written}, {self.grant.where('maxQuota')})",
                ("spec", "tenants", len(tenants) - 1, "quota", "requests"),
                f"lower quota.requests.{resource} so that the team's tenants take at most {written}",
            )

    def _append(self, team: _Part, list_name: str, index: int, item: Any) -> None:
        """Add item `index` of the team's `list_name` to the merged policy, with its positions and file."""
        items = self.spec.setdefault(list_name, [])  # type: ignore[union-attr]
        if not isinstance(items, list):
            return
        target = ("spec", list_name, len(items))
        items.append(item)
        self.source_map.graft(target, team.file, team.doc.source_map, ("spec", list_name, index))


def _spec_fields() -> set[str]:
    """The fields of a ClusterPolicy's spec, as written."""
    from pydantic.alias_generators import to_camel

    from policyc.language.model.policy import Spec

    return {to_camel(name) for name in Spec.model_fields}


@dataclass(eq=False)
class _Grant:
    """The platform's `spec.teams`, as far as it is well formed (the policy's parse reports the rest)."""

    platform: _Part
    lists: dict[str, list[str]]
    """"priorityClasses" / "gpuTiers" -> the names granted, for those the platform states."""
    max_quota: dict[str, tuple[Any, str]]
    """resource -> (its quantity, as written)."""
    gpu_resource: str

    @classmethod
    def of(cls, platform: _Part) -> _Grant:
        from policyc.k8s.quantity import Quantity, QuantityError

        spec = platform.data.get("spec") if isinstance(platform.data.get("spec"), dict) else {}
        teams = spec.get("teams") if isinstance(spec.get("teams"), dict) else {}
        lists = {  # a list the platform wrote wrong is not enforced: the language reports it in the platform's file
            key: teams[key]
            for key in ("priorityClasses", "gpuTiers")
            if isinstance(teams.get(key), list) and all(isinstance(n, str) for n in teams[key])
        }
        gpu = spec.get("gpuResource") if isinstance(spec.get("gpuResource"), str) else "gpu"
        max_quota = {}
        for resource, value in (teams.get("maxQuota") or {}).items() if isinstance(teams.get("maxQuota"), dict) else ():
            try:
                max_quota[resource] = (Quantity.from_json(value).value, str(value))
            except (QuantityError, TypeError, ValueError):
                continue
        return cls(platform, lists, max_quota, gpu)

    def where(self, grant_name: str) -> str:
        return self.platform.where(("spec", "teams", grant_name))

    def asked(self, path: Path, item: dict) -> Iterator[tuple[Path, str | None, str]]:
        """(where, the name asked for, the grant it must be in) of a tenant's or workload's requests of a class or
        tier; None for a tenant that lists no classes, and so may use every one."""
        if not isinstance(item, dict):
            return
        classes = self.lists.get("priorityClasses")
        if path[1] == "tenants" and classes is not None:
            listed = item.get("priorityClasses")
            if listed is None:
                yield path, None, "priorityClasses"
            for j, name in enumerate(listed if isinstance(listed, list) else ()):
                if isinstance(name, str):
                    yield (*path, "priorityClasses", j), name, "priorityClasses"
        if path[1] == "workloads":
            for key, grant_name in (("priorityClass", "priorityClasses"), ("gpuTier", "gpuTiers")):
                if isinstance(item.get(key), str) and grant_name in self.lists:
                    yield (*path, key), item[key], grant_name

    def requested(self, tenant: Any, resource: str) -> tuple[Any, str] | None:
        """(the quantity, as written) of `resource` in the tenant's quota.requests ('gpu' and the GPU resource are
        one); None when it states none. A value that is no quantity counts as 0 (the policy's parse reports it)."""
        from policyc.k8s.quantity import Quantity, QuantityError

        quota = tenant.get("quota") if isinstance(tenant, dict) else None
        requests = quota.get("requests") if isinstance(quota, dict) else None
        if not isinstance(requests, dict):
            return None
        same = {resource, self.gpu_resource, "gpu"} if resource in ("gpu", self.gpu_resource) else {resource}
        for key in sorted(same & set(requests)):
            try:
                return Quantity.from_json(requests[key]).value, str(requests[key])
            except (QuantityError, TypeError, ValueError):
                return 0, str(requests[key])
        return None

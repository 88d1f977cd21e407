"""What the audit compares the cluster's objects with: the objects of a build's synced tree (what Argo CD applies; never
`templates/`), from the policy's build now or from an output directory written earlier (`--built`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path as FilePath

from policyc.artifacts import Artifact
from policyc.cluster.source import NAMESPACE, NODE, POD, Kind
from policyc.diagnostics import Path
from policyc.k8s.objects import GENERATED

KUSTOMIZATION = "kustomization.yaml"
"""How every file of an output directory begins (`policyc.output.write`)."""
TEMPLATES = "templates"

Identity = tuple[Kind, str | None, str]
"""An object's kind, namespace (None for a cluster-scoped kind) and name."""


class BuiltError(Exception):
    """`--built` names no policyc output directory: one line saying why."""


@dataclass(frozen=True, slots=True)
class Expected:
    """An object of the build, with the output file it is in and the policy paths it was built from."""

    obj: dict
    file: str
    sources: tuple[Path, ...]


@dataclass(frozen=True)
class Build:
    objects: dict[Identity, Expected]
    """Every object of the synced tree, by identity."""
    workload_kinds: frozenset[Kind]
    """The kinds the build writes only as templates: teams copy them with policyc's labels, so they are never stale."""
    directory: str | None
    """The output directory it was read from (`--built`), or None for the policy's build now."""
    cluster: str | None = None
    """The fleet's cluster it is the build of (`--cluster`), or None for a policy of one cluster."""

    def kinds(self) -> list[tuple[Kind, str]]:
        """The kinds of the synced tree with the apiVersion the build writes each at, sorted by kind."""
        versions = {Kind.of(e.obj): str(e.obj.get("apiVersion", "")) for e in self.objects.values()}
        return sorted(versions.items())


def identity(obj: dict) -> Identity:
    meta = obj.get("metadata") or {}
    return Kind.of(obj), meta.get("namespace") or None, str(meta.get("name", ""))


def of_artifacts(artifacts: Iterable[Artifact], cluster: str | None = None) -> Build:
    """The synced tree of the policy's build now (of the fleet's `cluster`, where one)."""
    objects: dict[Identity, Expected] = {}
    templated: set[Kind] = set()
    for artifact in artifacts:
        for manifest in artifact.manifests:
            if artifact.synced and not artifact.template:
                objects[identity(manifest.obj)] = Expected(manifest.obj, artifact.path, manifest.sources)
            elif artifact.template:
                templated.add(Kind.of(manifest.obj))
    return Build(objects, frozenset(templated - {k for k, _, _ in objects}), None, cluster)


def of_directory(directory: str, policy: str, artifacts: Iterable[Artifact]) -> Build:
    """The synced tree of an output directory written earlier from the policy named `policy`: the files its
    kustomization.yaml lists. Each object takes the policy paths of the object of the same identity in the build now
    (`artifacts`), where there is one."""
    from ruamel.yaml import YAML, YAMLError

    from policyc.output.argocd import APPLICATION_SET_FILE
    from policyc.output.write import generated_from

    root = FilePath(directory)
    listing = root / KUSTOMIZATION
    try:
        head = listing.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        if (root / APPLICATION_SET_FILE).is_file():
            raise BuiltError(
                f"{directory} is a fleet's output directory: give the directory of the cluster, "
                f"{root / policy} (policyc build DIR -o OUT writes each cluster into OUT/<cluster>)"
            ) from None
        why = getattr(e, "strerror", None) or e
        raise BuiltError(
            f"{directory} is not a policyc output directory: cannot read its {KUSTOMIZATION} ({why}); give the "
            "directory policyc build -o wrote"
        ) from None
    if not head.startswith(GENERATED):
        raise BuiltError(
            f"{directory} is not a policyc output directory: its {KUSTOMIZATION} was not written by "
            "policyc; give the directory policyc build -o wrote"
        )
    if not head.startswith(generated_from(policy) + " ("):
        built_from = head.partition("\n")[0].removeprefix(GENERATED).removesuffix("; do not edit.").strip()
        raise BuiltError(
            f"{directory} was built {built_from}, not from policy '{policy}': give the directory "
            f"`policyc build` wrote for policy '{policy}', or audit against the policy it was built from"
        )
    now = of_artifacts(artifacts)
    yaml = YAML(typ="safe")
    try:
        files = [str(f) for f in (yaml.load(head) or {}).get("resources") or []]
        objects: dict[Identity, Expected] = {}
        for file in files:
            for obj in yaml.load_all((root / file).read_text(encoding="utf-8")):
                if isinstance(obj, dict):
                    key = identity(obj)
                    objects[key] = Expected(obj, file, now.objects[key].sources if key in now.objects else ())
        templated = {
            Kind.of(obj)
            for path in sorted((root / TEMPLATES).glob("*.yaml"))
            for obj in yaml.load_all(path.read_text(encoding="utf-8"))
            if isinstance(obj, dict)
        }
    except (OSError, UnicodeDecodeError, YAMLError, AttributeError) as e:
        why = getattr(e, "strerror", None) or e
        raise BuiltError(f"{directory} is not a readable policyc output directory: {why}") from None
    return Build(objects, frozenset(templated - {k for k, _, _ in objects}), directory)


def resource_name(kind: Kind) -> str:
    """The kind's resource as kubectl takes it (`priorityclasses.scheduling.k8s.io`): its plural as the API server
    guesses one from a kind (lower case; -y after a consonant to -ies; -s, -x, -ch, -sh to -es; else -s)."""
    word = kind.kind.lower()
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        plural = word[:-1] + "ies"
    elif word.endswith(("s", "x", "ch", "sh")):
        plural = word + "es"
    else:
        plural = word + "s"
    return f"{plural}.{kind.group}" if kind.group else plural


READ_ALWAYS = (NODE, NAMESPACE, POD)


def dump_command(build: Build, output: str = "cluster.json") -> str:
    """The kubectl command whose dump holds every kind the audit reads."""
    kinds = [*READ_ALWAYS, *(k for k, _ in build.kinds() if k not in READ_ALWAYS)]
    return f"kubectl get {','.join(resource_name(k) for k in kinds)} -A -o json > {output}"

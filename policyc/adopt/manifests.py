"""A directory of hand-written manifests as a cluster source: every YAML (or JSON) document of its files, a `List`'s
items included, read as the cluster's objects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from policyc.cluster.source import Kind, SourceError

SUFFIXES = (".yaml", ".yml", ".json")


class ManifestSource:
    """The objects of the manifests under a directory (its sub-directories included, files in name order).

    A document that is not a Kubernetes object (no `kind`, or no `metadata.name`) is skipped and recorded in
    `skipped`; a file that cannot be read or parsed is one line of `errors`."""

    def __init__(self, directory: str | Path):
        root = Path(directory)
        if not root.is_dir():
            raise SourceError(f"{directory} is not a directory; pass the directory that holds your manifests")
        self.name = str(directory)
        self.errors: list[str] = []
        self.skipped: list[str] = []
        self._by_kind: dict[Kind, list[dict]] = {}
        files = sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        if not files:
            raise SourceError(f"{directory} holds no .yaml, .yml or .json file")
        for path in files:
            self._read(path, path.relative_to(root).as_posix())

    def _read(self, path: Path, shown: str) -> None:
        try:
            text = path.read_text(encoding="utf-8")
            documents = list(YAML(typ="safe").load_all(text))
        except (OSError, UnicodeDecodeError) as e:
            self.errors.append(f"{path}: cannot be read ({getattr(e, 'strerror', None) or e})")
            return
        except YAMLError as e:
            self.errors.append(_not_yaml(path, text, e))
            return
        for index, document in enumerate(documents):
            items = document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else None
            for obj in items if isinstance(items, list) else [document]:
                if document is None:
                    continue
                if isinstance(obj, dict) and obj.get("kind") == "Kustomization":
                    self.skipped.append(
                        f"{shown}: a Kustomization, kustomize's file and not an object of the cluster; its patches"
                        " are not applied here: `kubectl kustomize DIR > rendered/all.yaml`, then import --manifests"
                        " rendered"
                    )
                    continue
                if not isinstance(obj, dict) or "kind" not in obj or not (obj.get("metadata") or {}).get("name"):
                    self.skipped.append(f"{shown}: document {index + 1} is not a Kubernetes object (no kind or name)")
                    continue
                self._by_kind.setdefault(Kind.of(obj), []).append(obj)

    def objects(self, kind: Kind, api_version: str | None = None) -> Iterator[dict]:
        return iter(self._by_kind.get(kind, ()))

    def judged(self, kind: Kind) -> bool:
        return False

    def kinds(self) -> list[Kind]:
        """The kinds the manifests hold objects of, sorted."""
        return sorted(self._by_kind)


def _not_yaml(path: Path, text: str, error: YAMLError) -> str:
    """One line for a file the manifests cannot be read from: where, why, and what to do (a Helm chart's template is
    YAML only once rendered)."""
    mark = getattr(error, "problem_mark", None)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    problem = getattr(error, "problem", None) or "not YAML"
    if "{{" in text:
        return (
            f"{where}: not valid YAML ({problem}): a Helm template; render the chart (`helm template RELEASE CHART >"
            " rendered.yaml`), keep the rendered manifests in the directory and the chart out of it"
        )
    return f"{where}: not valid YAML ({problem}); correct the file, or move it out of the directory"

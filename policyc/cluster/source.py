"""Where the objects of a running cluster come from, read-only: one face for a `kubectl get -o json` dump and for a
live API server, so that `policyc audit` and `policyc import` read both the same way.

A kind is named by its `Kind` (group, kind): the version is not part of it, since a dump holds what the server served
at the version the client asked for, and policyc compares objects of one kind across versions by their fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True, order=True)
class Kind:
    """An API kind without its version: `Kind("", "Node")`, `Kind("kubeflow.org", "PyTorchJob")`."""

    group: str
    kind: str

    @classmethod
    def of(cls, obj: dict) -> Kind:
        """The kind of an object, from its `apiVersion` ("v1", "apps/v1") and `kind`."""
        api_version = str(obj.get("apiVersion", ""))
        return cls(api_version.rpartition("/")[0], str(obj.get("kind", "")))

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind


NODE = Kind("", "Node")
POD = Kind("", "Pod")
NAMESPACE = Kind("", "Namespace")


class SourceError(Exception):
    """The cluster could not be read (a dump that is not a kubectl List, an API server that does not answer): one
    line saying what and why, and what to do."""


@runtime_checkable
class ClusterSource(Protocol):
    """A running cluster's objects, read-only."""

    name: str
    """What the findings say the objects came from: the dump's path, or the kubeconfig context."""

    def objects(self, kind: Kind, api_version: str | None = None) -> Iterator[dict]:
        """Every object of `kind` in the cluster, in every namespace, in no particular order (each a plain dict as
        the API server returns it). A live source yields page by page, so that a caller that does not keep the
        objects (the pods of a large cluster) holds one page at a time. `api_version` (e.g. "kubeflow.org/v1")
        is the version to ask a live server for; a dump holds one version of each kind and ignores it. A kind the
        cluster does not serve yields nothing."""
        ...

    def judged(self, kind: Kind) -> bool:
        """Whether an object of `kind` the source does not yield is absent from the cluster: the kind was read (a live
        server that does not serve it, or a dump made without it, cannot say)."""
        ...


class DumpSource:
    """A `v1` `List` as `kubectl get <kinds> -A -o json` prints it (one file, every kind in it)."""

    def __init__(self, path: str | Path, kinds: frozenset[Kind] | None = None):
        """`kinds`: the kinds the dump was made with, where known (kubectl's List does not say which it was asked
        for); without it, the dump is taken to hold every kind it is asked for (`policyc audit --dump-command` prints
        the kubectl command that makes such a dump)."""
        self.name = str(path)
        self._by_kind: dict[Kind, list[dict]] = {}
        try:
            with open(path, "rb") as f:
                document = json.load(f)
        except OSError as e:
            raise SourceError(f"cannot read {path}: {e.strerror or e}") from None
        except (ValueError, UnicodeDecodeError) as e:
            raise SourceError(
                f"{path} is not JSON ({e}); make it with kubectl get <kinds> -A -o json > {Path(path).name}"
            ) from None
        if not isinstance(document, dict) or not isinstance(document.get("items"), list):
            raise SourceError(f"{path} is not a kubectl List (no 'items'); make it with kubectl get <kinds> -A -o json")
        for index, item in enumerate(document["items"]):
            if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict) or "kind" not in item:
                raise SourceError(f"{path}: items[{index}] is not a Kubernetes object (no kind or metadata)")
            self._by_kind.setdefault(Kind.of(item), []).append(item)
        self._kinds = kinds

    def objects(self, kind: Kind, api_version: str | None = None) -> Iterator[dict]:
        return iter(self._by_kind.get(kind, ()))

    def judged(self, kind: Kind) -> bool:
        return self._kinds is None or kind in self._kinds

    def kinds(self) -> list[Kind]:
        """The kinds the dump holds objects of, sorted."""
        return sorted(self._by_kind)

"""Where the objects of a running cluster come from, read-only: one face for a `kubectl get -o json` dump and for a
live API server, so that `policyc audit` and `policyc import` read both the same way.

A kind is named by its `Kind` (group, kind): the version is not part of it, since a dump holds what the server served
at the version the client asked for, and policyc compares objects of one kind across versions by their fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import msgspec


@dataclass(frozen=True, slots=True, order=True)
class Kind:
    """An API kind without its version: `Kind("", "Node")`, `Kind("apps", "Deployment")`."""

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
        objects (the pods of a large cluster) holds one page at a time. `api_version` (e.g. "apps/v1")
        is the version to ask a live server for; a dump holds one version of each kind and ignores it. A kind the
        cluster does not serve yields nothing."""
        ...

    def judged(self, kind: Kind) -> bool:
        """Whether an object of `kind` the source does not yield is absent from the cluster: the kind was read (a live
        server that does not serve it, or a dump made without it, cannot say)."""
        ...


class _Head(msgspec.Struct):
    """What a dump's item must have to be an object: the rest is decoded only when its kind is read."""

    kind: str
    metadata: msgspec.Raw
    apiVersion: str = ""


class _List(msgspec.Struct):
    items: list[msgspec.Raw]


class DumpSource:
    """A `v1` `List` as `kubectl get <kinds> -A -o json` prints it (one file, every kind in it).

    The file is split into its items without building them (msgspec): a 5,000-node, 50,000-pod dump is 800 MB, which
    the standard library's json takes 16 s and 2.7 GiB to build whole; split, each item is decoded only as its kind is
    read, one at a time, so that a caller that does not keep the pods never holds them all."""

    def __init__(self, path: str | Path, kinds: frozenset[Kind] | None = None):
        """`kinds`: the kinds the dump was made with, where known (kubectl's List does not say which it was asked
        for); without it, the dump is taken to hold every kind it is asked for (`policyc audit --dump-command` prints
        the kubectl command that makes such a dump)."""
        self.name = str(path)
        self._by_kind: dict[Kind, list[msgspec.Raw]] = {}
        make = "make one with kubectl get <kinds> -A -o json > cluster.json"
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise SourceError(f"cannot read {path}: {e.strerror or e}") from None
        try:
            items = msgspec.json.decode(data, type=_List).items
        except msgspec.ValidationError:
            raise SourceError(f"{path} is not a kubectl List (no 'items' list); {make}") from None
        except msgspec.DecodeError as e:
            if re.match(rb"\s*(#.*\s*)*(apiVersion|kind|items):", data):
                raise SourceError(f"{path} is YAML, not JSON (kubectl get -o yaml writes YAML); {make}") from None
            raise SourceError(f"{path} is not JSON ({e}); {make}") from None
        for index, item in enumerate(items):
            try:
                head = _HEAD.decode(item)
            except msgspec.ValidationError as e:
                raise SourceError(f"{path}: items[{index}] is not a Kubernetes object ({e})") from None
            self._by_kind.setdefault(Kind(head.apiVersion.rpartition("/")[0], head.kind), []).append(item)
        self._kinds = kinds

    def objects(self, kind: Kind, api_version: str | None = None) -> Iterator[dict]:
        for item in self._by_kind.get(kind, ()):
            yield _OBJECT.decode(item)

    def judged(self, kind: Kind) -> bool:
        return self._kinds is None or kind in self._kinds

    def kinds(self) -> list[Kind]:
        """The kinds the dump holds objects of, sorted."""
        return sorted(self._by_kind)


_HEAD = msgspec.json.Decoder(_Head)
_OBJECT = msgspec.json.Decoder(dict)

"""The Volcano vectors: what the real Volcano (webhooks, controller, scheduler) did with policyc's output and with
hand-made objects (`$POLICYC_SHARED/testdata/volcano-vectors`, or the directory `POLICYC_VOLCANO_VECTORS` names;
every `*.json` there, in name order). Loading, and the trees' policies compiled once."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from policyc.compiler import Compilation, compile_file, compile_text
from tests.conftest import REPO, shared_dir

KINDS = ("admission", "scheduler-conf", "scheduling", "scheduling-scenario")


def directory() -> Path:
    named = os.environ.get("POLICYC_VOLCANO_VECTORS")
    return Path(named) if named else shared_dir() / "testdata" / "volcano-vectors"


@dataclass(frozen=True)
class Vectors:
    trees: Mapping[str, Mapping[str, Any]]
    cases: tuple[Mapping[str, Any], ...]

    def of_kind(self, kind: str) -> list[Mapping[str, Any]]:
        return [c for c in self.cases if c["kind"] == kind]


@functools.cache
def load() -> Vectors | None:
    """Every file's trees and cases (None when the directory has no vectors)."""
    files = sorted(directory().glob("*.json"))
    if not files:
        return None
    trees: dict[str, Mapping[str, Any]] = {}
    cases: list[Mapping[str, Any]] = []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        trees.update(data.get("trees") or {})
        cases.extend(data.get("cases") or ())
    return Vectors(trees, tuple(cases))


def cases(kind: str) -> list[Mapping[str, Any]]:
    vectors = load()
    return [] if vectors is None else vectors.of_kind(kind)


RECORDED = Path(__file__).parent / "recorded"
"""The shipped policies as they were at the commit each recording ran (`recorded/<commit>/<policy>`, from `git show
<commit>:policies/<policy>`): the examples change, the recording does not."""


@functools.cache
def recorded_commit() -> str:
    """The policyc commit the vectors were recorded with (`components.policyc`: '<commit> <date> <subject>')."""
    commits = set()
    for path in sorted(directory().glob("*.json")):
        commits.add(json.loads(path.read_text(encoding="utf-8"))["components"]["policyc"].split()[0])
    assert len(commits) == 1, f"vectors recorded at several commits: {sorted(commits)}"
    return commits.pop()


@functools.cache
def compiled(tree: str) -> Compilation:
    """The tree's policy as policyc compiles it today: a shipped policy (`<checkout>/policies/...`) as it was when the
    vectors were recorded, or the policy text the vectors carry."""
    spec = load().trees[tree]
    if "policyText" in spec:
        return compile_text(spec["policyText"], f"{tree}.yaml")
    path = RECORDED / recorded_commit() / Path(spec["policy"]).name
    assert path.is_file(), (
        f"no copy of {spec['policy']} as recorded: write it with `git show {recorded_commit()}:policies/{path.name} "
        f"> {path.relative_to(REPO)}`"
    )
    return compile_file(path)


def emitted(tree: str, kind: str) -> list[dict[str, Any]]:
    """The objects of `kind` policyc emits for the tree (templates included)."""
    return [m.obj for a in compiled(tree).artifacts for m in a.manifests if m.obj.get("kind") == kind]


def parse_yaml(text: str) -> Any:
    return YAML(typ="safe").load(text)


def node_objects(tree: str) -> list[dict[str, Any]]:
    """The tree's Nodes as the API objects they were (the vectors group nodes alike)."""
    return [
        {
            "metadata": {"name": name, "labels": group["labels"]},
            "spec": {"taints": group.get("taints") or []},
            "status": {"allocatable": group["allocatable"]},
        }
        for group in load().trees[tree]["nodes"]
        for name in group["names"]
    ]

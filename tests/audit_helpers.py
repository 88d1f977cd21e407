"""What the audit tests share: the vendored policies and builds of the recorded dumps, and an audit run on a dump."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

from policyc import compile as compile_policy
from policyc.audit.build import of_artifacts, of_directory
from policyc.audit.run import audit
from policyc.cluster.source import DumpSource
from policyc.compiler import Compilation
from policyc.diagnostics import Report
from tests.conftest import REPO, shared_dir

VENDORED = REPO / "tests" / "data" / "cluster-dumps"
"""Per recorded policy: the policy and the build that were deployed (see its README)."""
DUMPS = shared_dir() / "testdata" / "cluster-dumps"


def policy_of(stem: str) -> Path:
    return VENDORED / stem / "policy.yaml"


def built_of(stem: str) -> Path:
    return VENDORED / stem / "built"


@functools.cache
def compiled(policy: Path) -> Compilation:
    name = policy.relative_to(REPO) if policy.is_relative_to(REPO) else policy
    compilation = compile_policy(policy, name=str(name))
    assert compilation.ok, [d.message for d in compilation.report.errors]
    return compilation


@functools.cache
def recorded(path: Path) -> dict:
    """A recorded dump, read once (callers copy what they change)."""
    return json.loads(path.read_text(encoding="utf-8"))


def run(policy: Path, dump: Path, *, built: Path | None = None, strict: bool = False) -> Report:
    """The findings of auditing `dump` against `policy` (and `built`, as --built takes it)."""
    c = compiled(policy)
    assert c.cluster is not None and c.backend is not None
    build = of_directory(str(built), c.cluster.name, c.artifacts) if built else of_artifacts(c.artifacts)
    report = Report(c.report.file, c.report.source_map)
    return audit(c.cluster, c.backend, build, DumpSource(dump), report, strict=strict)


def keys(report: Report) -> set[tuple]:
    """(rule, kind, namespace, name) of every finding (no object: None for each of the three)."""
    return {
        (d.rule.name, *((d.subject.kind, d.subject.namespace, d.subject.name) if d.subject else (None,) * 3))
        for d in report.diagnostics
    }


def write_dump(tmp_path: Path, items: list[dict], name: str = "cluster.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path


def items_of(stem: str, dump: str = "clean") -> list[dict]:
    """A deep copy of the items of a recorded dump, to change."""
    return copy.deepcopy(recorded(DUMPS / stem / f"{dump}.json")["items"])


def named(items: list[dict], kind: str, name: str) -> dict:
    return next(i for i in items if i["kind"] == kind and i["metadata"]["name"] == name)

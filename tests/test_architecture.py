"""The architecture holds: docs/development.md's package map names every package and module of the tree, every import
keeps to its floors and none goes round in a circle, every module can be imported first, and no two modules share a
name for different jobs.

The imports are read from the source (ast), all of them: at the top of a module, inside functions (imported when
called) and for type checking only. An import of a submodule counts as an import of that module, not of the
packages it passes through.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "policyc"
EN_DASH = "\u2013"
"""The dash between the first and the last floor of the range a row of the map may import."""

UPWARD = {
    ("policyc", "policyc.compiler"): "Python runs the package root before any module of the package, so it stands on "
    "the ground floor; `policyc.compile`, the library API, imports the pipeline only when it is called.",
}
"""The imports that go up the floors, each with why it must: at most two."""

REGISTRY_USERS = {"ground", "language", "resolve", "checks", "pipeline", "adopt", "commands"}
"""The floors whose modules may look a backend up in the registry. The emitters, the proof, tenancy and the scheduler
backends are given the selected backend by the pipeline."""

SAME_TOPIC = {
    "autoscaling": "emitted (backends) and checked (checks)",
    "monitoring": "GPU alerts emitted (backends) and linted (checks)",
    "node_agents": "DaemonSets' tolerations emitted (backends) and proven (proof)",
    "slurm": "Slurm's formats (gpu), its files emitted (backends) and checked (checks)",
    "workloads": "resolved (resolve), their templates emitted (backends) and checked (checks), read back (adopt)",
    "nodes": "nodes and pools resolved (resolve), their labels and taints written (backends), a cluster's nodes "
    "audited against them (audit)",
    "pods": "what a workload's pods carry (ir), and a cluster's running pods audited against it (audit)",
    "codes": "the catalogue, each backend's rules that join it (scheduler or node provisioner) and the audit's, and "
    "the command that prints it",
    "settings": "a face of each backend (scheduler or node provisioner)",
    "rules": "a face of each backend (scheduler or node provisioner)",
    "backend": "a face of each backend (scheduler or node provisioner)",
    "adopt": "a face of each scheduler backend (its objects read back from a cluster) and the import that reads them",
    "tenants": "resolved (resolve) and read back from a cluster's namespaces (adopt)",
}
"""Module names used in more than one folder, and the one topic they share."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports() -> dict[str, frozenset[str]]:
    """Module -> the package's modules it imports, anywhere in its source."""
    known = modules()
    out = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
        out[name] = frozenset(_owner(m, known) for m in found if m == "policyc" or m.startswith("policyc.")) - {name}
    return out


def _owner(imported: str, known: dict[str, Path]) -> str:
    """The module an imported name lives in."""
    while imported not in known:
        imported = imported.rpartition(".")[0]
    return imported


@cache
def package_map() -> list[tuple[str, tuple[str, ...], frozenset[str]]]:
    """docs/development.md's package map: (floor, the modules and packages it names, the floors it may import),
    bottom up."""
    readme = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    header = "| floor | packages and modules | what they hold | may import |"
    assert header in readme, "docs/development.md's architecture section has no package map"
    rows = []
    for line in readme.split(header, 1)[1].splitlines()[2:]:
        if not line.startswith("|"):
            break
        floor, names, _, may = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append((floor, tuple(re.findall(r"`([^`]+)`", names)), may))
    floors = [floor for floor, _, _ in rows]
    out = []
    for floor, names, may in rows:
        if may == "—":
            allowed: list[str] = []
        else:
            first, _, last = (part.strip() for part in may.partition(EN_DASH))
            allowed = floors[floors.index(first) : floors.index(last or first) + 1]
        out.append((floor, names, frozenset(allowed)))
    return out


def _entry_module(entry: str) -> str:
    """A map entry as a dotted module name: `policyc`, `registry` (policyc/registry.py), `k8s/` (a package)."""
    return "policyc" if entry == "policyc" else "policyc." + entry.rstrip("/").replace("/", ".")


@cache
def floor_of() -> dict[str, str]:
    """Module -> its floor: the floor of the longest map entry it is, or is inside."""
    entries = {_entry_module(e): floor for floor, names, _ in package_map() for e in names}
    out = {}
    for name in modules():
        owner = max((e for e in entries if name == e or name.startswith(e + ".")), key=len)
        out[name] = entries[owner]
    return out


def test_the_map_names_every_package_and_top_level_module_once() -> None:
    """The root, every module and package at the top of `policyc/`, and every scheduler backend's package (a package
    right inside `backends/`)."""
    named = [_entry_module(e) for _, names, _ in package_map() for e in names]
    assert len(named) == len(set(named)), [n for n, c in Counter(named).items() if c > 1]
    backends = {
        n for n, p in modules().items() if p.name == "__init__.py" and re.fullmatch(r"policyc\.backends\.\w+", n)
    }
    tree = {"policyc", *(n for n in modules() if n.count(".") == 1), *backends}
    assert set(named) == tree, {"not in the map": tree - set(named), "not in the tree": set(named) - tree}


def test_every_import_keeps_to_the_floors() -> None:
    order = [floor for floor, _, _ in package_map()]
    may = {floor: allowed for floor, _, allowed in package_map()}
    assert all(may[f] <= set(order[: order.index(f)]) for f in order), "a floor may import only floors below it"
    where = floor_of()
    upward = {
        (m, d): f"{where[m]} -> {where[d]}"
        for m, targets in imports().items()
        for d in targets
        if where[d] != where[m] and where[d] not in may[where[m]]
    }
    assert set(upward) == set(UPWARD), upward
    assert len(UPWARD) <= 2


def test_no_import_circle() -> None:
    graph = imports()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return [*path[path.index(d) :], d]
            if d not in state and (circle := visit(d)):
                return circle
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            circle = visit(m)
            assert circle is None, " -> ".join(circle)


def test_no_emitter_proof_or_tenancy_module_looks_a_backend_up() -> None:
    where = floor_of()
    lookups = {m: where[m] for m, targets in imports().items() if "policyc.registry" in targets}
    assert set(lookups.values()) <= REGISTRY_USERS, {m: f for m, f in lookups.items() if f not in REGISTRY_USERS}
    assert "policyc.emit" not in lookups


def test_a_module_name_in_two_folders_is_one_topic() -> None:
    names = Counter(p.stem for p in modules().values() if p.name != "__init__.py")
    assert {n for n, count in names.items() if count > 1} == set(SAME_TOPIC)


_IMPORT_FIRST = """
import contextlib, io, os, sys, traceback
import click, pydantic, ruamel.yaml  # third-party, shared by the children: policyc's own modules are what is tested
names, running, failed = sys.argv[1:], {}, []
def reap():
    pid, status = os.wait()
    if status:
        failed.append(running[pid])
    del running[pid]
for name in names:
    if len(running) >= (os.cpu_count() or 1):
        reap()
    pid = os.fork()
    if pid == 0:
        sys.argv = ["policyc", "--help"]  # policyc.__main__ runs the command line
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                __import__(name)
        except SystemExit as e:
            os._exit(1 if e.code else 0)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    running[pid] = name
while running:
    reap()
print(sorted(failed))
"""


def test_every_module_can_be_imported_first() -> None:
    """Each module imported first, in a process that has imported no module of policyc (a child forked from a fresh
    interpreter, one per module): a library user may start anywhere."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", _IMPORT_FIRST, *modules()], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", f"failed when imported first: {run.stdout}\n{run.stderr}"

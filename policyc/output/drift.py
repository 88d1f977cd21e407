"""The build against a previous output directory.

`compare` (the drift check): does the directory hold exactly what a build would write? Compares the bytes rendered in
memory with the files on disk (no YAML is parsed back), and reports changed files with a unified diff, files the
build would add (missing) and files it would remove (stale), and executable bits that differ.

`immutable_changes`: changes the API server cannot apply in place (a PriorityClass's value or preemption policy).
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML, YAMLError

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.language.load import MAX_FILE_BYTES
from policyc.output.write import OutputFile


@dataclass(eq=False)
class Drift:
    changed: dict[str, str] = field(default_factory=dict)
    """Relative path -> unified diff (on disk -> as built)."""
    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.changed or self.missing or self.stale)

    def render(self, directory: str) -> str:
        parts = list(self.changed.values())
        if self.missing:
            parts.append(f"missing in {directory} (the build would add them):\n" + _bullets(self.missing))
        if self.stale:
            parts.append(f"stale in {directory} (the build would remove them):\n" + _bullets(self.stale))
        return "\n".join(parts)


def _bullets(paths: list[str]) -> str:
    return "".join(f"  {p}\n" for p in paths)


def compare(files: Mapping[str, OutputFile], directory: str | os.PathLike[str]) -> Drift:
    root = Path(directory)
    on_disk = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()} if root.is_dir() else {}
    drift = Drift()
    for rel, built in files.items():
        path = on_disk.get(rel)
        if path is None:
            drift.missing.append(rel)
            continue
        current = path.read_bytes()
        if current != built.data:
            drift.changed[rel] = _diff(rel, current, built.data)
        elif os.access(path, os.X_OK) != built.executable:
            mode = "executable" if built.executable else "not executable"
            drift.changed[rel] = f"{rel}: should be {mode}\n"
    drift.stale = sorted(set(on_disk) - set(files))
    return drift


def _diff(rel: str, current: bytes, built: bytes) -> str:
    old = current.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = built.decode("utf-8", errors="replace").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


PRIORITY_CLASSES = "cluster/priorityclasses.yaml"
IMMUTABLE_PRIORITY_FIELDS = (
    ("value", "value", None),
    ("preemptionPolicy", "preemption_policy", "PreemptLowerPriority"),
)
"""PriorityClass fields the API server refuses to change in place: (object field, IR field, API default)."""


def immutable_changes(cluster: Cluster, directory: str | os.PathLike[str]) -> list[Diagnostic]:
    """Warnings for PriorityClasses whose value or preemption policy differ from the previous output in `directory`:
    applying them fails (the API server refuses the update), and keeps failing on every later sync."""
    path = Path(directory) / PRIORITY_CLASSES
    try:
        with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as f:  # a FIFO must not block
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                return []
            text = f.read().decode("utf-8")
        previous = {
            doc["metadata"]["name"]: doc
            for doc in YAML(typ="safe").load_all(text)
            if isinstance(doc, dict) and doc.get("kind") == "PriorityClass"
        }
    except (OSError, UnicodeError, YAMLError, KeyError, TypeError):
        return []  # no previous output, or not one policyc wrote: nothing to compare with
    out = []
    for c in cluster.priority_classes:
        old = previous.get(c.name)
        if old is None:
            continue
        for name, attribute, default in IMMUTABLE_PRIORITY_FIELDS:
            before, after = old.get(name, default), getattr(c, attribute)
            if before != after:
                out.append(
                    diag(
                        "priority-class-value-changed",
                        f"priority class '{c.name}' changes {name} from {before} to {after} against "
                        f"{PRIORITY_CLASSES}; the API server refuses that in place, so every sync would fail",
                        (*c.path, name),
                        hint=f"keep {before}, or add the class under a new name, move workloads to it and drop "
                        f"'{c.name}' (docs/gitops.md: changing a priority class)",
                    )
                )
    return out

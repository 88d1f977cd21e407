"""Drift check: does an output directory hold exactly what a build would write?

Compares the bytes rendered in memory with the files on disk (no YAML is parsed back), and reports
changed files with a unified diff, files the build would add (missing) and files it would remove
(stale), and executable bits that differ.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from policyc.write import OutputFile


@dataclass
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

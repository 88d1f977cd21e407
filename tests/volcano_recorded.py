"""What a real Volcano did with policyc's output: the Volcano vectors (shared/testdata/volcano-vectors, or the
directory POLICYC_VOLCANO_VECTORS names), read for tests that cite their cases by id."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from tests.conftest import missing_shared_data, shared_dir


def vectors_dir() -> Path:
    return Path(os.environ.get("POLICYC_VOLCANO_VECTORS", shared_dir() / "testdata" / "volcano-vectors"))


@functools.cache
def _files() -> tuple[dict, ...]:
    where = vectors_dir()
    files = sorted(where.glob("*.json"))
    if not files:
        missing_shared_data(where)
    return tuple(json.loads(f.read_text(encoding="utf-8")) for f in files)


def cases() -> dict[str, dict]:
    """Every case of every vectors file, by id."""
    return {c["id"]: c for data in _files() for c in data["cases"]}


def trees() -> dict[str, dict]:
    """Every policyc tree the vectors ran, by name."""
    return {name: tree for data in _files() for name, tree in data["trees"].items()}


def recorded(case_id: str) -> dict:
    """One case, by id (the test is skipped, or fails under CI, when the directory does not hold it)."""
    found = cases()
    if case_id not in found:
        missing_shared_data(vectors_dir() / case_id)
    return found[case_id]

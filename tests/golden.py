"""A syrupy extension that keeps each generated file as its own golden file: golden/<policy>/<path>.

Snapshots are compared byte for byte. A golden file the compiler no longer emits is an unused snapshot:
it fails the run, and ``pytest --snapshot-update`` deletes it (as it writes new and changed ones).
"""

from __future__ import annotations

import os
from pathlib import Path

from syrupy.data import Snapshot, SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

GOLDEN = Path(os.environ.get("POLICYC_GOLDEN", Path(__file__).resolve().parents[1] / "golden"))


def _param(test_location) -> tuple[str, str]:
    """(policy, relative path) from a test id like ``test_golden[ai-prod:nodes/apply.sh]``."""
    name = test_location.testname
    policy, _, path = name[name.index("[") + 1 : name.rindex("]")].partition(":")
    return policy, path


class GoldenFileExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.BINARY
    file_extension = ""

    @classmethod
    def dirname(cls, *, test_location) -> str:
        return str(GOLDEN / _param(test_location)[0])

    @classmethod
    def discovery_dirname(cls, *, test_location) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_snapshot_name(cls, *, test_location, index=0) -> str:
        return _param(test_location)[1]

    @classmethod
    def get_file_basename(cls, *, test_location, index) -> str:
        return _param(test_location)[1]

    @classmethod
    def matches_test_location(cls, *, test_location, snapshot_location: str) -> bool:
        return Path(snapshot_location) == Path(cls.dirname(test_location=test_location)) / _param(test_location)[1]

    def discover_snapshots(self, *, test_location, ignore_extensions=None) -> SnapshotCollections:
        root = Path(self.dirname(test_location=test_location))
        discovered = SnapshotCollections()
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            collection = SnapshotCollection(location=str(path))
            collection.add(Snapshot(name=path.relative_to(root).as_posix()))
            discovered.add(collection)
        return discovered

    def read_snapshot_collection(self, *, snapshot_location: str) -> SnapshotCollection:
        collection = SnapshotCollection(location=snapshot_location)
        root = next(p for p in Path(snapshot_location).parents if p.parent == GOLDEN)
        collection.add(Snapshot(name=Path(snapshot_location).relative_to(root).as_posix()))
        return collection

"""What the policy file itself says, before defaults fill it in: the few checks that judge a field as written (one
that has no effect is reported only where the user wrote it, a unit as it was spelt) read it here."""

from __future__ import annotations

from typing import Any

from policyc.diagnostics import Path

_ABSENT = object()


class Written:
    """The loaded document, looked up by document path (the paths of the IR's items)."""

    def __init__(self, data: Any):
        self.data = data

    def get(self, path: Path, default: Any = None) -> Any:
        node = self.data
        for part in path:
            item = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
            if not (item or (isinstance(node, dict) and part in node)):
                return default
            node = node[part]
        return node

    def __contains__(self, path: Path) -> bool:
        return self.get(path, _ABSENT) is not _ABSENT

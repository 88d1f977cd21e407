"""Node name ranges: ``gpu-node-[01-16]`` expands to gpu-node-01 ... gpu-node-16.

A bound with a leading zero fixes the width (both bounds must then have the same number of digits);
bounds without leading zeros expand unpadded (``h20-[1-8]``). A name may hold several ranges; they
expand as nested loops, leftmost outermost. Every expanded name must be a valid Kubernetes node name.
"""

from __future__ import annotations

import itertools
import math
import re

from policyc.k8s import names

MAX_NODES_PER_PATTERN = 100_000
MAX_NODES = 100_000
"""Most nodes one policy may hold, over all its patterns."""

_RANGE = re.compile(r"\[(\d+)-(\d+)\]")
_OTHER_RANGE = re.compile(r"\[\s*(\d+)\s*(?:\.\.\.?|:|_|,|to|\u2013|\u2014)\s*(\d+)\s*\]")
"""A range written with another separator than '-': [1..4], [1:4], [1 to 4], [1 (en dash) 4]."""


class NodeRangeError(ValueError):
    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


def _parse(pattern: str) -> tuple[list[str], list[tuple[int, int, int]]]:
    """(literals, ranges as (start, end, width)) of a pattern; raises `NodeRangeError`."""
    parts = _RANGE.split(pattern)
    literals, bounds = parts[0::3], list(zip(parts[1::3], parts[2::3], strict=True))
    for literal in literals:
        if "[" in literal or "]" in literal:
            raise NodeRangeError(f"'{pattern}' has a malformed range", hint=_range_hint(pattern))
    ranges = []
    total = 1
    for lo, hi in bounds:
        if (lo.startswith("0") and len(lo) > 1) or (hi.startswith("0") and len(hi) > 1):
            if len(lo) != len(hi):
                raise NodeRangeError(
                    f"range [{lo}-{hi}] in '{pattern}' mixes widths",
                    hint=f"zero-padded bounds need the same number of digits, e.g. "
                    f"[{lo.zfill(len(hi))}-{hi.zfill(len(lo))}]",
                )
            width = len(lo)
        else:
            width = 0
        start, end = int(lo), int(hi)
        if start > end:
            raise NodeRangeError(
                f"range [{lo}-{hi}] in '{pattern}' is empty: {start} > {end}", hint=f"did you mean [{hi}-{lo}]?"
            )
        total *= end - start + 1
        if total > MAX_NODES_PER_PATTERN:
            raise NodeRangeError(f"'{pattern}' expands to more than {MAX_NODES_PER_PATTERN:,} nodes")
        ranges.append((start, end, width))
    return literals, ranges


def _range_hint(pattern: str) -> str:
    usual = "write ranges as [START-END] with decimal bounds, e.g. gpu-[01-16]"
    fixed = _OTHER_RANGE.sub(r"[\1-\2]", pattern)
    return f"did you mean '{fixed}'? ({usual})" if fixed != pattern and _is_valid(fixed) else usual


def _name_hint(pattern: str) -> str | None:
    """The pattern with the parts outside its ranges as node names have them: lower case, other characters as '-'."""
    pieces = re.split(r"(\[\d+-\d+\])", pattern)
    fixed = "".join(p if i % 2 else re.sub(r"[^a-z0-9.-]+", "-", p.lower()) for i, p in enumerate(pieces)).strip("-.")
    return f"did you mean '{fixed}'?" if fixed != pattern and _is_valid(fixed) else None


def _is_valid(pattern: str) -> bool:
    try:
        check(pattern)
    except NodeRangeError:
        return False
    return True


def _name(literals: list[str], numbers: tuple[str, ...]) -> str:
    name = literals[0]
    for number, literal in zip(numbers, literals[1:], strict=True):
        name += number + literal
    return name


def _check_names(pattern: str, literals: list[str], ranges: list[tuple[int, int, int]]) -> None:
    """Names of one pattern differ only in digits, so the first and the last (the longest) decide validity."""
    first = _name(literals, tuple(str(start).zfill(width) for start, _, width in ranges))
    last = _name(literals, tuple(str(end).zfill(width) for _, end, width in ranges))
    for name in dict.fromkeys((first, last)):
        problems = names.is_dns1123_subdomain(name)
        if problems:
            raise NodeRangeError(f"node name '{name}' is invalid: {'; '.join(problems)}", _name_hint(pattern))


def check(pattern: str) -> int:
    """Validate a pattern without expanding it; returns how many nodes it stands for. Raises `NodeRangeError`."""
    literals, ranges = _parse(pattern)
    _check_names(pattern, literals, ranges)
    return math.prod(end - start + 1 for start, end, _ in ranges)


def expand(pattern: str) -> list[str]:
    """The node names a pattern stands for, in order; raises `NodeRangeError`."""
    literals, ranges = _parse(pattern)
    _check_names(pattern, literals, ranges)
    numbers = [[str(n).zfill(width) for n in range(start, end + 1)] for start, end, width in ranges]
    return [_name(literals, combo) for combo in itertools.product(*numbers)]

"""Node names back to node ranges: the inverse of `policyc.language.noderanges.expand`.

Names are grouped by what surrounds their last run of digits; each group's numbers, in order, are cut into runs of
consecutive numbers written alike (zero-padded to one width, or unpadded), each run one pattern `a100-[01-05]`; a
number alone stays a plain name. `expand` gives every pattern's names back, each exactly once.
"""

from __future__ import annotations

import re

_LAST_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")


def _width(digits: str) -> int:
    """0 for a number written unpadded ('7', '10'), else its fixed width ('07' -> 2)."""
    return len(digits) if digits.startswith("0") and len(digits) > 1 else 0


def compress(names: list[str]) -> list[str]:
    """Patterns that expand to exactly `names` (each once), in the order of their first name sorted naturally."""
    groups: dict[tuple[str, str, int], set[int]] = {}
    plain = []
    for name in sorted(set(names)):
        match = _LAST_NUMBER.match(name)
        if match is None:
            plain.append(name)
            continue
        prefix, digits, suffix = match.groups()
        groups.setdefault((prefix, suffix, _width(digits)), set()).add(int(digits))
    padded_widths = {(p, s): w for p, s, w in groups if w}
    merged: dict[tuple[str, str, int], set[int]] = {}
    for (prefix, suffix, width), numbers in groups.items():
        # an unpadded number as wide as a padded group's ('10' beside '09') is written the same way in it
        if not width and (prefix, suffix) in padded_widths:
            same = {n for n in numbers if len(str(n)) == padded_widths[(prefix, suffix)]}
            merged.setdefault((prefix, suffix, padded_widths[(prefix, suffix)]), set()).update(same)
            numbers = numbers - same
        if numbers:
            merged.setdefault((prefix, suffix, width), set()).update(numbers)
    patterns = [(name, (name, 0)) for name in plain]
    for (prefix, suffix, width), numbers in merged.items():
        for first, last in _runs(sorted(numbers)):
            low, high = str(first).zfill(width), str(last).zfill(width)
            text = f"{prefix}{low}{suffix}" if first == last else f"{prefix}[{low}-{high}]{suffix}"
            patterns.append((text, (f"{prefix}{low}{suffix}", first)))
    return [text for text, _ in sorted(patterns, key=lambda p: _natural(p[1][0]))]


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def _natural(name: str) -> tuple:
    """A sort key that puts gpu-2 before gpu-10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name))

"""Slurm's formats and the resolved Slurm settings: time limits, host lists, GRES types, priority tiers.

The keys policyc writes target **Slurm 22.05** (Debian 12 ships slurmctld 22.05.8, which the tests run on the
generated files): `NodeName` (CPUs, RealMemory, Gres, Features, State), `PartitionName` (Nodes, Default, MaxTime,
PriorityTier, State) in slurm.conf, and `NodeName Name Type File` in gres.conf, as slurm.conf(5) and gres.conf(5)
of that release describe them. Every one of them is also valid in later releases, which Slinky's images run.

- **Time limits** (`MaxTime`): minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes,
  days-hours:minutes:seconds, or UNLIMITED (INFINITE is Slurm's synonym). Slurm counts whole minutes and rounds
  seconds up; policyc writes the limit as days-hours:minutes:seconds (``10080`` and ``7-0`` are ``7-00:00:00``).
- **Host lists**: node names grouped by the digits they end with, `h100-[01-16,18]`; only a trailing number is
  bracketed (Slurm requires a range at the end of a name), one width per bracket, so that `gpu9` and `gpu10`, or
  `n01` and `n1`, never share a range whose width Slurm could read otherwise.
- **GRES type** of a product: the product in lower case, without NVIDIA's brand words (NVIDIA, Tesla, Quadro),
  up to its next '-': NVIDIA-H100-80GB -> h100, NVIDIA-A100-SXM4-80GB -> a100, Tesla-T4 -> t4. That word is a
  substring of the name Slurm's GPU autodetection gives the card (the NVML name, lower case, spaces as '_'), as
  gres.conf(5) requires of a configured Type when autodetection also runs; `slurm.gresType` overrides it.
- **PriorityTier** of a priority class: its value, clamped to Slurm's 0..65533 (values below 0 give 0, above
  65533 give 65533). The mapping keeps the classes' order (it is monotone); two classes whose values both fall
  outside the range would tie, which the checks report (PC466).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from policyc.diagnostics import Path

UNLIMITED = "UNLIMITED"
_TIME = re.compile(
    r"(?P<days>\d+)-(?P<dh>\d+)(?::(?P<dm>\d+)(?::(?P<ds>\d+))?)?"  # days-hours[:minutes[:seconds]]
    r"|(?P<a>\d+)(?::(?P<b>\d+)(?::(?P<c>\d+))?)?"  # minutes[:seconds] or hours:minutes:seconds
)
MAX_MINUTES = 0xFFFFFFFE - 1
"""The longest finite time limit: Slurm keeps minutes in 32 bits, 0xfffffffe being INFINITE."""
MEBIBYTE = 1024 * 1024
"""Slurm's megabyte (RealMemory)."""
MAX_PRIORITY_TIER = 65533
"""slurm.conf(5): PriorityTier "may not exceed 65533"."""
GRES_TYPE = r"^[a-z0-9][a-z0-9._]*$"
"""A GRES type policyc writes: no ':' or ',' (Slurm's separators in a Gres value), no '-' (so that it stays a
substring of an autodetected name, where a space of the card's name becomes '_'), lower case."""
NVIDIA_BRANDS = ("nvidia", "tesla", "quadro")


class TimeError(ValueError):
    pass


def minutes(text: str) -> int | None:
    """A Slurm time limit in minutes, seconds rounded up (None: UNLIMITED); raises `TimeError`."""
    if text in (UNLIMITED, "INFINITE"):
        return None
    match = _TIME.fullmatch(text)
    if match is None:
        raise TimeError(
            f"'{text}' is not a Slurm time limit: write minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
            "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED"
        )
    g = {k: int(v) for k, v in match.groupdict().items() if v is not None}
    if "days" in g:
        seconds = ((g["days"] * 24 + g["dh"]) * 60 + g.get("dm", 0)) * 60 + g.get("ds", 0)
    elif "c" in g:  # hours:minutes:seconds
        seconds = (g["a"] * 60 + g["b"]) * 60 + g["c"]
    else:  # minutes[:seconds]
        seconds = g["a"] * 60 + g.get("b", 0)
    total = -(-seconds // 60)
    if total == 0:
        raise TimeError(f"'{text}' is no time at all: the partition would refuse every job")
    if total > MAX_MINUTES:
        raise TimeError(f"'{text}' is longer than Slurm can count ({MAX_MINUTES:,} minutes); write UNLIMITED")
    return total


def time_text(limit: int | None) -> str:
    """A limit in minutes as days-hours:minutes:seconds, or UNLIMITED."""
    if limit is None:
        return UNLIMITED
    days, rest = divmod(limit, 24 * 60)
    return f"{days}-{rest // 60:02d}:{rest % 60:02d}:00"


_TRAILING_NUMBER = re.compile(r"(.*?)(\d+)")


def hostlist(names: Iterable[str]) -> str:
    """Node names as a Slurm host list: `gpu-[01-16,18],t4-spare-1` (see the module's docstring)."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in set(names):
        match = _TRAILING_NUMBER.fullmatch(name)
        if match is None or not match.group(1):
            plain.append(name)
        else:
            groups.setdefault((match.group(1), len(match.group(2))), []).append(int(match.group(2)))
    parts: list[tuple[tuple, str]] = [((name, -1, -1), name) for name in plain]
    for (prefix, width), numbers in groups.items():
        numbers.sort()
        if len(numbers) == 1:
            parts.append(((prefix, width, numbers[0]), f"{prefix}{numbers[0]:0{width}d}"))
            continue
        ranges, start, last = [], numbers[0], numbers[0]
        for number in [*numbers[1:], None]:
            if number is not None and number == last + 1:
                last = number
                continue
            ranges.append(f"{start:0{width}d}" if start == last else f"{start:0{width}d}-{last:0{width}d}")
            start = last = number  # type: ignore[assignment]  # None only after the last range
        parts.append(((prefix, width, numbers[0]), f"{prefix}[{','.join(ranges)}]"))
    return ",".join(text for _, text in sorted(parts))


def gres_type(product: str) -> str:
    """The GRES type of a GPU product (see the module's docstring)."""
    words = product.lower().split("-")
    while len(words) > 1 and words[0] in NVIDIA_BRANDS:
        words.pop(0)
    return words[0]


def priority_tier(value: int) -> int:
    """A priority class's value as a partition's PriorityTier (see the module's docstring)."""
    return min(max(value, 0), MAX_PRIORITY_TIER)


def device_files(cards: int) -> str:
    """NVIDIA's device files of a node's cards, as gres.conf's File takes them."""
    return "/dev/nvidia0" if cards == 1 else f"/dev/nvidia[0-{cards - 1}]"


@dataclass(frozen=True, slots=True)
class PoolSlurm:
    """`nodePools[].slurm`, resolved."""

    partition: str
    default: bool
    max_time: int | None
    """Minutes (None: UNLIMITED)."""
    priority_class: str | None
    shared: bool
    """False: Slurm-only, the nodes are tainted `<domain>/slurm-only` so that no Kubernetes workload lands there."""
    gres_type: str
    cards: int
    """Physical GPUs per node that Slurm schedules (0: none; shared cards count once)."""
    path: Path


@dataclass(frozen=True, slots=True)
class SlurmSettings:
    """`spec.slurm`, resolved (its defaults when the policy has slurm pools and no spec.slurm)."""

    operator: str
    namespace: str
    controller: str
    path: Path | None
    """None: the policy does not state spec.slurm."""

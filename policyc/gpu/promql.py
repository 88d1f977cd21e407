"""What policyc knows of Prometheus and the DCGM exporter: durations, node-name regexes, the exporter's counters,
and a small scan of PromQL expressions for the lint in `policyc.checks.monitoring`.

The scan is not a parser (promtool is the oracle for syntax: `tests/test_monitoring.py` runs it). It tokenizes an
expression (strings, comments, numbers, identifiers, brackets), skips label matchers, ranges and grouping clauses
(`by (...)`, `on (...)` ...), and reports every metric name with the function calls whose arguments enclose it,
at any depth: in ``sum(rate(X[5m]))`` X is inside `rate` and `sum`. Limits: it does not know operator precedence
or value types (``rate(X[5m:] > 0)`` is reported as rate over X, as is a gauge inside a subquery that rate
reads), and a metric named like a function and followed by a parenthesis is taken for the function.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

# --- durations ---------------------------------------------------------------------------------------------------

DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
"""A Prometheus duration, as the PrometheusRule CRD's `for` pattern states it (units in this order, each once)."""
_UNITS_MS = {"y": 365 * 86_400_000, "w": 7 * 86_400_000, "d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000,
             "ms": 1}  # fmt: skip
_SPELLED = {"sec": "s", "secs": "s", "second": "s", "seconds": "s", "min": "m", "mins": "m", "minute": "m",
            "minutes": "m", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "d", "days": "d",
            "week": "w", "weeks": "w"}  # fmt: skip


def duration_ms(text: str) -> int | None:
    """Milliseconds of a Prometheus duration ('1h30m' -> 5400000), or None when it is not one ('' included)."""
    if not text or not re.fullmatch(DURATION, text):
        return None
    return sum(int(n) * _UNITS_MS[u] for n, u in re.findall(r"([0-9]+)(ms|[ywdhms])", text))


def format_duration(ms: int) -> str:
    """The shortest Prometheus duration of `ms` milliseconds (5400000 -> '1h30m'); '0s' for zero."""
    out = ""
    for unit in ("d", "h", "m", "s", "ms"):  # no y or w: 14d reads better than 2w, and Prometheus takes both
        count, ms = divmod(ms, _UNITS_MS[unit])
        out += f"{count}{unit}" if count else ""
    return out or "0s"


def duration_hint(text: str) -> str | None:
    """A fix-it for a duration Prometheus refuses: '5min' -> '5m', '1.5h' -> '90m', '1h 30m' -> '1h30m'."""
    squeezed = re.sub(r"\s+", "", text.lower())
    parts = re.findall(r"([0-9]*\.?[0-9]+)([a-z]+)", squeezed)
    if not parts or "".join(n + u for n, u in parts) != squeezed:
        return None
    total = Decimal(0)
    for number, unit in parts:
        unit = _SPELLED.get(unit, unit)
        if unit not in _UNITS_MS:
            return None
        total += Decimal(number) * _UNITS_MS[unit]
    if total != total.to_integral_value():
        return None
    return f"did you mean '{format_duration(int(total))}'?"


def number(value: Decimal | float | int) -> str:
    """A number as PromQL and people read it: 700, 0.95, 76.5 (no exponent, no trailing zeros)."""
    text = format(Decimal(str(value)).normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# --- node names as a regex ---------------------------------------------------------------------------------------


_LAST_NUMBER = re.compile(r"(.*?)([0-9]+)([^0-9]*)")
"""A node name's last run of digits, with what comes before and after it."""


def node_regex(nodes: Iterable[str]) -> str:
    """An RE2 regex that matches exactly these node names (Prometheus anchors `=~` at both ends).

    Names that differ only in their last run of digits, of one width, share one alternative with a digit range:
    gpu-node-01 ... gpu-node-16 -> ``gpu-node-(?:0[1-9]|1[0-6])``. Dots are written ``[.]`` so that the regex needs no
    backslash inside a PromQL string.
    """
    groups: dict[tuple[str, str, int], list[str]] = {}
    literals: list[str] = []
    for name in sorted(set(nodes)):
        match = _LAST_NUMBER.fullmatch(name)
        if match is None:
            literals.append(_literal(name))
            continue
        prefix, digits, suffix = match.groups()
        groups.setdefault((prefix, suffix, len(digits)), []).append(digits)
    parts = [*literals]
    for (prefix, suffix, width), numbers in sorted(groups.items()):
        body = grouped("|".join(_fixed_width_range(lo, hi) for lo, hi in _runs(numbers, width)))
        parts.append(f"{_literal(prefix)}{body}{_literal(suffix)}")
    return parts[0] if len(parts) == 1 else "|".join(sorted(parts))


def _literal(text: str) -> str:
    return text.replace(".", "[.]")


def _runs(numbers: Sequence[str], width: int) -> list[tuple[str, str]]:
    """Consecutive runs of the (sorted, equal-width) digit strings, as (first, last)."""
    values = sorted(int(n) for n in numbers)
    runs, start = [], values[0]
    for previous, value in itertools.pairwise(values):
        if value != previous + 1:
            runs.append((start, previous))
            start = value
    runs.append((start, values[-1]))
    return [(str(lo).zfill(width), str(hi).zfill(width)) for lo, hi in runs]


def _fixed_width_range(lo: str, hi: str) -> str:
    """A regex for the digit strings of len(lo) from lo to hi (lo <= hi, same length)."""
    if lo == hi:
        return lo
    if len(lo) == 1:
        return _digit_class(lo, hi)
    if lo[0] == hi[0]:
        return lo[0] + grouped(_fixed_width_range(lo[1:], hi[1:]))
    rest = len(lo) - 1
    whole_lo, whole_hi = lo[1:] == "0" * rest, hi[1:] == "9" * rest
    first, last = int(lo[0]) + (not whole_lo), int(hi[0]) - (not whole_hi)
    out = [] if whole_lo else [lo[0] + grouped(_fixed_width_range(lo[1:], "9" * rest))]
    if first <= last:
        out.append(_digit_class(str(first), str(last)) + _any_digits(rest))
    if not whole_hi:
        out.append(hi[0] + grouped(_fixed_width_range("0" * rest, hi[1:])))
    return "|".join(out)


def grouped(alternatives: str) -> str:
    """`alternatives` wrapped in a group when it has a '|' outside every group."""
    depth = 0
    for char in alternatives:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "|" and depth == 0:
            return f"(?:{alternatives})"
    return alternatives


def _digit_class(lo: str, hi: str) -> str:
    return lo if lo == hi else f"[{lo}-{hi}]"


def _any_digits(count: int) -> str:
    return "[0-9]" if count == 1 else f"[0-9]{{{count}}}"


# --- the DCGM exporter's counters --------------------------------------------------------------------------------

GAUGE, COUNTER = "gauge", "counter"


@dataclass(frozen=True, slots=True, eq=False)
class Field:
    name: str
    type: str
    """The Prometheus type the exporter's CSV gives it (gauge or counter)."""
    sets: frozenset[str]
    """The shipped counter files that enable it (a commented row enables it in none)."""


COUNTER_SETS = {
    "default": "etc/default-counters.csv",
    "dcp-metrics-included": "etc/dcp-metrics-included.csv",
}
"""The counter files NVIDIA/dcgm-exporter ships (read at its main branch, the 4.x releases up to 4.8): an exporter
reads one of them (`-f`, or `DCGM_EXPORTER_COLLECTORS`). DCGM Exporter 4.9.0 renames several default fields (its
release notes): these names are those before that release."""
_D, _P = "default", "dcp-metrics-included"
FIELDS: dict[str, Field] = {
    f.name: f
    for f in (
        Field("DCGM_FI_DEV_SM_CLOCK", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_MEM_CLOCK", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_MEMORY_TEMP", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_GPU_TEMP", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_POWER_USAGE", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", COUNTER, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_PCIE_TX_THROUGHPUT", COUNTER, frozenset({_D})),
        Field("DCGM_FI_DEV_PCIE_RX_THROUGHPUT", COUNTER, frozenset({_D})),
        Field("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", COUNTER, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_GPU_UTIL", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_MEM_COPY_UTIL", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_ENC_UTIL", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_DEC_UTIL", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_XID_ERRORS", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_POWER_VIOLATION", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_THERMAL_VIOLATION", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_SYNC_BOOST_VIOLATION", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_LOW_UTIL_VIOLATION", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_RELIABILITY_VIOLATION", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_FB_FREE", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_FB_USED", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_FB_RESERVED", GAUGE, frozenset({_P})),
        Field("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_RETIRED_SBE", COUNTER, frozenset({_P})),
        Field("DCGM_FI_DEV_RETIRED_DBE", COUNTER, frozenset({_P})),
        Field("DCGM_FI_DEV_RETIRED_PENDING", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", COUNTER, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_NVLINK_BANDWIDTH_L0", COUNTER, frozenset()),
        Field("DCGM_FI_DEV_VGPU_LICENSE_STATUS", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", COUNTER, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", COUNTER, frozenset({_D, _P})),
        Field("DCGM_FI_DEV_ROW_REMAP_FAILURE", GAUGE, frozenset({_D, _P})),
        Field("DCGM_FI_PROF_GR_ENGINE_ACTIVE", GAUGE, frozenset({_P})),
        Field("DCGM_FI_PROF_SM_ACTIVE", GAUGE, frozenset()),
        Field("DCGM_FI_PROF_SM_OCCUPANCY", GAUGE, frozenset()),
        Field("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", GAUGE, frozenset({_P})),
        Field("DCGM_FI_PROF_DRAM_ACTIVE", GAUGE, frozenset({_P})),
        Field("DCGM_FI_PROF_PIPE_FP64_ACTIVE", GAUGE, frozenset()),
        Field("DCGM_FI_PROF_PIPE_FP32_ACTIVE", GAUGE, frozenset()),
        Field("DCGM_FI_PROF_PIPE_FP16_ACTIVE", GAUGE, frozenset()),
        Field("DCGM_FI_PROF_PCIE_TX_BYTES", GAUGE, frozenset({_P})),
        Field("DCGM_FI_PROF_PCIE_RX_BYTES", GAUGE, frozenset({_P})),
        # The exporter's own, off unless a CSV row enables it (its documentation's commented rows):
        Field("DCGM_EXP_XID_ERRORS_COUNT", GAUGE, frozenset()),
        Field("DCGM_EXP_CLOCK_EVENTS_COUNT", GAUGE, frozenset()),
    )
}
"""Every row of the two shipped files (active or commented) with its type. Label rows (DCGM_FI_DRIVER_VERSION ...)
add labels, not metrics, and are left out."""
XID = "DCGM_FI_DEV_XID_ERRORS"
"""A gauge whose value is the code of the last XID error (it stays until the exporter restarts; its `err_code` label
repeats it): not a count, so neither rate()/increase() nor sums or averages of it mean anything."""
EXPORTER_METRIC = re.compile(r"^DCGM_(FI|EXP)_[A-Z0-9_]+$")


def enabled_fields(counter_set: str, extra: dict[str, str]) -> dict[str, str]:
    """Metric -> type of what an exporter reading `counter_set` plus the `extra` rows exports."""
    out = {f.name: f.type for f in FIELDS.values() if counter_set in f.sets}
    return {**out, **extra}


# --- the scan ----------------------------------------------------------------------------------------------------

COUNTER_FUNCTIONS = frozenset({"rate", "irate", "increase", "resets"})
"""Functions Prometheus defines for counters only."""
GAUGE_FUNCTIONS = frozenset({"delta", "idelta", "deriv", "predict_linear"})
"""Functions Prometheus defines for gauges only ("delta should only be used with gauges")."""
ARITHMETIC = frozenset({
    *COUNTER_FUNCTIONS, *GAUGE_FUNCTIONS, "sum", "avg", "stddev", "stdvar", "quantile", "sum_over_time",
    "avg_over_time", "quantile_over_time", "stddev_over_time", "stdvar_over_time", "holt_winters",
    "double_exponential_smoothing", "histogram_quantile",
})  # fmt: skip
"""Functions that add, average or differentiate values: meaningless over an error code."""
AGGREGATIONS = frozenset({"sum", "avg", "min", "max", "group", "stddev", "stdvar", "count", "count_values", "bottomk",
                          "topk", "quantile", "limitk", "limit_ratio"})  # fmt: skip
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", *GROUPING})

_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<comment>\#[^\n]*)
    |(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)
    |(?P<number>(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)[0-9a-zA-Z]*)
    |(?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
    |(?P<open>[({\[])|(?P<close>[)}\]])
    |(?P<other>[-+*/%^=!<>~,@]+)""",
    re.VERBOSE,
)
_PAIRS = {"(": ")", "{": "}", "[": "]"}


class PromqlError(ValueError):
    def __init__(self, message: str, column: int):
        super().__init__(message)
        self.column = column
        """1-based offset in the expression (`place` says it as line and column)."""


@dataclass(frozen=True, slots=True, eq=False)
class MetricUse:
    name: str
    column: int
    """1-based offset of the name in the expression."""
    functions: tuple[str, ...]
    """The function calls and aggregations whose arguments enclose it, innermost first."""


def place(expr: str, column: int) -> str:
    """'column 7', or 'line 2, column 3' in an expression of several lines, of a 1-based offset."""
    before = expr[: column - 1]
    line = before.count("\n") + 1
    return f"column {column}" if line == 1 else f"line {line}, column {column - 1 - before.rfind(chr(10))}"


def metric_uses(expr: str) -> list[MetricUse]:
    """Every metric name of `expr`, with the calls enclosing it. Raises `PromqlError` on unbalanced brackets,
    unterminated strings and characters PromQL does not have."""
    scan = _Scan(_tokens(expr))
    i = 0
    while i < len(scan.tokens):
        i = scan.step(i)
    if scan.stack:
        raise PromqlError(f"'{scan.stack[-1][0]}' is never closed", scan.stack[-1][2] + 1)
    return scan.uses


class _Scan:
    """The scan of an expression's tokens for metric names, one token (or bracketed group) per step."""

    def __init__(self, tokens: list[tuple[str, str, int]]):
        self.tokens = tokens
        self.uses: list[MetricUse] = []
        self.stack: list[tuple[str, str | None, int]] = []  # (bracket, the call it opens or None, column)
        self.pending: str | None = None  # an aggregation whose argument follows a `by (...)` clause

    def step(self, i: int) -> int:
        """Read the token at `i`; the index of the next one to read."""
        kind, text, at = self.tokens[i]
        if kind == "ident":
            return self.ident(i, text, at)
        if kind == "open":
            return self.open(i, text, at)
        if kind == "close":
            if not self.stack or _PAIRS[self.stack[-1][0]] != text:
                raise PromqlError(f"unexpected '{text}'", at + 1)
            self.stack.pop()
        return i + 1

    def ident(self, i: int, text: str, at: int) -> int:
        following = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        if following is not None and following[1] == "(":
            if text in GROUPING:
                return _skip(self.tokens, i + 1)
            self.stack.append(("(", text, following[2]))
            self.pending = None
            return i + 2
        if text in AGGREGATIONS and following is not None and following[1] in ("by", "without"):
            self.pending = text
        elif text not in KEYWORDS:
            self.uses.append(MetricUse(text, at + 1, self.enclosing()))
        return i + 1

    def open(self, i: int, text: str, at: int) -> int:
        if text == "(":
            self.stack.append(("(", self.pending, at))
            self.pending = None
            return i + 1
        # label matchers and ranges hold no metric, but `{__name__="x"}` names one
        end = _skip(self.tokens, i)
        name = _name_matcher(self.tokens[i + 1 : end - 1])
        if name is not None:
            self.uses.append(MetricUse(name, at + 1, self.enclosing()))
        return end

    def enclosing(self) -> tuple[str, ...]:
        """The calls the scan is inside, innermost first."""
        return tuple(call for _, call, _ in reversed(self.stack) if call)


def _tokens(expr: str) -> list[tuple[str, str, int]]:
    out, at = [], 0
    while at < len(expr):
        match = _TOKEN.match(expr, at)
        if match is None:
            quote = expr[at] in "\"'`"
            raise PromqlError("unterminated string" if quote else f"unexpected character '{expr[at]}'", at + 1)
        kind = match.lastgroup or ""
        if kind not in ("space", "comment"):
            out.append((kind, match.group(), at))
        at = match.end()
    return out


def _skip(tokens: list[tuple[str, str, int]], i: int) -> int:
    """The index after the bracket closing the one at `i` (raises `PromqlError` when it does not close)."""
    opening, depth = tokens[i], 0
    for j in range(i, len(tokens)):
        kind = tokens[j][0]
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth == 0:
                return j + 1
    raise PromqlError(f"'{opening[1]}' is never closed", opening[2] + 1)


def _name_matcher(tokens: Sequence[tuple[str, str, int]]) -> str | None:
    for j in range(len(tokens) - 2):
        if tokens[j][1] == "__name__" and tokens[j + 1][1] == "=" and tokens[j + 2][0] == "string":
            return tokens[j + 2][1][1:-1]
    return None

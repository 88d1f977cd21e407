"""Exact Kubernetes resource quantities (apimachinery `api/resource.Quantity`).

A `Quantity` holds an exact decimal value, kept as ``coefficient * 10**exponent`` with no trailing zeros in
the coefficient, and the format it prints in. Parsing follows `ParseQuantity`: the value is rounded away from
zero to a whole number of nanos (1n), a BinarySI value is capped at 2**63-1 in magnitude and a BinarySI value
between 0 and 1 switches to DecimalSI. `str()` is the canonical form Kubernetes computes (`CanonicalizeBytes`):
as large a suffix as keeps the number whole, so ``12000m`` prints as ``12`` and ``1024Mi`` as ``1Gi``.

Kubernetes also echoes some already-parsed strings verbatim (``+1``, ``1.500``, ``1E3`` survive a round trip
through the API server unchanged); `str()` never does, it always returns the canonical form.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Final, Literal

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]
DECIMAL_SI: Final = "DecimalSI"
BINARY_SI: Final = "BinarySI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
FORMATS: Final = (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT)

MAX_BINARY_SI: Final = (1 << 63) - 1
"""Largest magnitude a parsed BinarySI quantity can have; larger ones are capped to it."""

_NANO_EXPONENT = -9
_SYNTAX = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_DECIMAL_SUFFIXES: Final = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX_OF: Final = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_OF: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
# What the JSON decoder trims around a quantity (Go's unicode.IsSpace).
_GO_SPACE = (
    " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


_set = object.__setattr__


class QuantityError(ValueError):
    """A string that Kubernetes would not accept as a quantity."""


def _normalized(coefficient: int, exponent: int) -> tuple[int, int]:
    if coefficient % 10:
        return coefficient, exponent
    if coefficient == 0:
        return 0, 0
    while coefficient % 10 == 0:
        coefficient //= 10
        exponent += 1
    return coefficient, exponent


class Quantity:
    """An immutable, hashable, totally ordered Kubernetes quantity.

    Equality, hashing and ordering use the value only: ``Quantity.parse("1Gi") == Quantity.parse("1073741824")``.
    """

    __slots__ = ("_coefficient", "_exponent", "_format", "_text", "_value")

    _coefficient: int
    _exponent: int
    _format: Format
    _text: str | None
    _value: Fraction | None

    def __init__(self) -> None:
        raise TypeError("use Quantity.parse, Quantity.from_json or Quantity.from_value")

    @classmethod
    def _make(cls, coefficient: int, exponent: int, fmt: Format) -> Quantity:
        q = object.__new__(cls)
        coefficient, exponent = _normalized(coefficient, exponent)
        _set(q, "_coefficient", coefficient)
        _set(q, "_exponent", exponent)
        _set(q, "_format", fmt)
        _set(q, "_text", None)
        _set(q, "_value", None)
        return q

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Quantity is immutable")

    def __reduce__(self) -> tuple:
        return _restore, (self._coefficient, self._exponent, self._format)

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: dict) -> Quantity:
        return self

    # --- construction ---------------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse a quantity string exactly as `resource.ParseQuantity` does (no surrounding spaces allowed)."""
        if not isinstance(text, str):
            raise QuantityError(f"a quantity must be a string, not {type(text).__name__}")
        return _parse(text)

    @classmethod
    def from_json(cls, value: str | int | float | None) -> Quantity:
        """A quantity as the API server reads it from a JSON or YAML body.

        A string loses one pair of surrounding double quotes and then surrounding whitespace; an int or a
        float is read from its decimal spelling; null is the zero quantity. Booleans are rejected.
        """
        if value is None:
            return ZERO
        if isinstance(value, bool):
            raise QuantityError(f"a quantity must be a string or a number, not the boolean {str(value).lower()}")
        if isinstance(value, int):
            return _parse(str(value))
        if isinstance(value, float):
            if not math.isfinite(value):
                raise QuantityError(f"a quantity must be a finite number, not {value}")
            return _parse(repr(value))
        if isinstance(value, str):
            if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
                value = value[1:-1]
            return _parse(value.strip(_GO_SPACE))
        raise QuantityError(f"a quantity must be a string or a number, not {type(value).__name__}")

    @classmethod
    def from_value(cls, value: int | Fraction | Decimal | str, fmt: Format = DECIMAL_SI) -> Quantity:
        """A quantity of an exact value, without rounding, printed in `fmt` (like `NewDecimalQuantity`).

        `value` is an int, a Fraction or Decimal with a terminating decimal expansion, or a decimal string
        such as ``"1234.567"``.
        """
        if fmt not in FORMATS:
            raise QuantityError(f"unknown quantity format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if isinstance(value, bool):
            raise QuantityError("a quantity value must be a number, not a boolean")
        if isinstance(value, int):
            return cls._make(value, 0, fmt)
        if isinstance(value, str):
            try:
                value = Decimal(value)
            except ArithmeticError:
                raise QuantityError(f"{value!r} is not a decimal number") from None
        if isinstance(value, Decimal):
            if not value.is_finite():
                raise QuantityError(f"a quantity value must be finite, not {value}")
            sign, digits, exponent = value.as_tuple()
            coefficient = int("".join(map(str, digits)) or "0")
            return cls._make(-coefficient if sign else coefficient, int(exponent), fmt)
        if isinstance(value, Fraction):
            return cls._make(*_fraction_to_decimal(value), fmt)
        raise QuantityError(f"a quantity value must be an int, Fraction, Decimal or str, not {type(value).__name__}")

    # --- accessors ------------------------------------------------------------------------------------

    @property
    def format(self) -> Format:
        return self._format

    @property
    def value(self) -> Fraction:
        """The exact value (worked out once: the checks and proofs read it again and again)."""
        value = self._value
        if value is None:
            if self._exponent >= 0:
                value = Fraction(self._coefficient * 10**self._exponent)
            else:
                value = Fraction(self._coefficient, 10**-self._exponent)
            _set(self, "_value", value)
        return value

    def is_integer(self) -> bool:
        """Whether the value is a whole number."""
        return self._exponent >= 0

    def is_negative(self) -> bool:
        return self._coefficient < 0

    def exceeds(self, power_of_ten: int) -> bool:
        """Whether the magnitude is at least 10**power_of_ten, without computing the value (which for
        a quantity like 1e999999999 would take minutes)."""
        return self._coefficient != 0 and self._exponent + _digit_count(abs(self._coefficient)) > power_of_ten

    def is_zero(self) -> bool:
        return self._coefficient == 0

    # --- text -----------------------------------------------------------------------------------------

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = _canonical(self._coefficient, self._exponent, self._format)
            _set(self, "_text", text)
        return text

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r}, {self._format!r})"

    @classmethod
    def canonical(cls, value: int | Fraction | Decimal | str, fmt: str) -> str:
        """Kubernetes' canonical string for an exact value in a format: ``canonical(1536 * 2**20, "BinarySI")``
        is ``"1536Mi"``. Like `CanonicalizeBytes`, a format Kubernetes does not know prints as DecimalExponent."""
        return str(cls.from_value(value, fmt if fmt in FORMATS else DECIMAL_EXPONENT))  # type: ignore[arg-type]

    # --- comparison -----------------------------------------------------------------------------------

    def _cmp(self, other: Quantity) -> int:
        a, b = self._coefficient, other._coefficient
        ea, eb = self._exponent, other._exponent
        if ea != eb:
            if a == 0 or b == 0 or (a > 0) != (b > 0):
                return (a > b) - (a < b)
            shift = ea - eb
            if abs(shift) > 18:
                # Settle far-apart magnitudes by their decimal exponents before scaling a coefficient.
                order_a, order_b = ea + _digit_count(abs(a)), eb + _digit_count(abs(b))
                if order_a != order_b:
                    return (1 if order_a > order_b else -1) * (1 if a > 0 else -1)
            if shift > 0:
                a *= 10**shift
            else:
                b *= 10**-shift
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._coefficient == other._coefficient and self._exponent == other._exponent

    def __hash__(self) -> int:
        return hash((self._coefficient, self._exponent))

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._cmp(other) < 0

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._cmp(other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._cmp(other) > 0

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._cmp(other) >= 0

    def compare(self, other: Quantity) -> int:
        """-1, 0 or 1, like `Quantity.Cmp`."""
        return self._cmp(other)

    # --- arithmetic -----------------------------------------------------------------------------------

    def _combine(self, other: Quantity, sign: int) -> Quantity:
        # Like Quantity.Add/Sub: the result keeps the left operand's format unless the left operand is zero.
        if other._coefficient == 0 and self._coefficient != 0:  # itself (quotas hold many zeros)
            return self
        fmt = other._format if self._coefficient == 0 else self._format
        a, b = self._coefficient, sign * other._coefficient
        ea, eb = self._exponent, other._exponent
        if ea > eb:
            return Quantity._make(a * 10 ** (ea - eb) + b, eb, fmt)
        return Quantity._make(a + b * 10 ** (eb - ea), ea, fmt)

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._combine(other, 1)

    def __radd__(self, other: int) -> Quantity:
        # Only so that sum() works: its start value is the integer 0.
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return NotImplemented

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._combine(other, -1)

    def __mul__(self, factor: int) -> Quantity:
        if not isinstance(factor, int) or isinstance(factor, bool):
            return NotImplemented
        return Quantity._make(self._coefficient * factor, self._exponent, self._format)

    __rmul__ = __mul__

    def __neg__(self) -> Quantity:
        return Quantity._make(-self._coefficient, self._exponent, self._format)


def _fraction_to_decimal(value: Fraction) -> tuple[int, int]:
    """(coefficient, exponent) of a Fraction whose denominator has no prime factors but 2 and 5."""
    denominator = value.denominator
    twos = (denominator & -denominator).bit_length() - 1
    rest = denominator >> twos
    fives = 0
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        raise QuantityError(f"{value} has no exact decimal representation")
    digits = max(twos, fives)
    return value.numerator * 10**digits // denominator, -digits


def _shown(text: str) -> str:
    """`text` quoted for an error message, shortened if long."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _digit_count(n: int) -> int:
    """Number of decimal digits of a positive int, without converting it to a string."""
    estimate = int(n.bit_length() * 0.30102999566398120) + 1  # exact or one too many
    return estimate if n >= 10 ** (estimate - 1) else estimate - 1


def _restore(coefficient: int, exponent: int, fmt: Format) -> Quantity:
    return Quantity._make(coefficient, exponent, fmt)


def _wrap_int32(n: int) -> int:
    return (n + (1 << 31)) % (1 << 32) - (1 << 31)


@lru_cache(maxsize=8192)
def _parse(text: str) -> Quantity:
    if not text:
        raise QuantityError("a quantity must not be empty")
    match = _SYNTAX.fullmatch(text)
    if match is None:
        raise QuantityError(
            f"{_shown(text)} is not a quantity: expected a number with an optional suffix, "
            f"such as '500m', '2', '1.5Gi' or '1e3'"
        )
    sign, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    exponent, fmt = _suffix(text, suffix)
    if not whole and not fraction:
        # Kubernetes reads a number without digits ("", "+", ".") as 0 on its fast path, which it takes
        # unless the value needs finer than nano precision or a suffix of Pi or more; then it fails.
        if (fmt == BINARY_SI and exponent > 40) or (fmt != BINARY_SI and exponent < _NANO_EXPONENT):
            raise QuantityError(f"{_shown(text)} is not a quantity: the number has no digits")
        return Quantity._make(0, 0, fmt)
    try:
        coefficient = int(whole + fraction)
    except ValueError:
        raise QuantityError(f"{_shown(text)} has too many digits") from None
    if sign == "-":
        coefficient = -coefficient
    if fmt == BINARY_SI:
        coefficient <<= exponent
        exponent = -len(fraction)
    else:
        exponent -= len(fraction)
    return _bounded(coefficient, exponent, fmt)


def _suffix(text: str, suffix: str) -> tuple[int, Format]:
    """The exponent a quantity's suffix stands for (of 2 for a binary one, else of 10), and its format."""
    binary = _BINARY_SUFFIXES.get(suffix)
    if binary is not None:
        return binary, BINARY_SI
    decimal = _DECIMAL_SUFFIXES.get(suffix)
    if decimal is not None:
        return decimal, DECIMAL_SI
    scientific = _EXPONENT.fullmatch(suffix)
    if scientific is None or not -(1 << 63) <= int(scientific[1]) < (1 << 63):
        raise QuantityError(
            f"{_shown(text)} has an unknown suffix {suffix!r}: use n, u, m, k, M, G, T, P, E, "
            f"Ki, Mi, Gi, Ti, Pi, Ei or a decimal exponent such as e3"
        )
    # Kubernetes parses the exponent as int64 and then truncates it to int32.
    return _wrap_int32(int(scientific[1])), DECIMAL_EXPONENT


def _bounded(coefficient: int, exponent: int, fmt: Format) -> Quantity:
    """coefficient x 10**exponent rounded up to nanos, and a binary quantity capped as Kubernetes caps it (or, below
    one, written in decimal)."""
    if exponent < _NANO_EXPONENT and coefficient:
        coefficient, exponent = _round_up_to_nanos(coefficient, exponent)
    if fmt == BINARY_SI and coefficient:
        # Here the exponent is between -9 and 0: a binary suffix scales by a power of two.
        magnitude, scale = abs(coefficient), 10**-exponent
        if magnitude > MAX_BINARY_SI * scale:
            coefficient, exponent = (MAX_BINARY_SI if coefficient > 0 else -MAX_BINARY_SI), 0
        elif magnitude < scale:
            fmt = DECIMAL_SI
    return Quantity._make(coefficient, exponent, fmt)


def _round_up_to_nanos(coefficient: int, exponent: int) -> tuple[int, int]:
    """Round away from zero to a multiple of 10**-9 (`inf.RoundUp` at scale 9)."""
    magnitude = abs(coefficient)
    drop = _NANO_EXPONENT - exponent
    if drop >= _digit_count(magnitude):
        nanos = 1  # the whole value is below one nano
    else:
        nanos, remainder = divmod(magnitude, 10**drop)
        nanos += remainder != 0
    return (nanos if coefficient > 0 else -nanos), _NANO_EXPONENT


def _canonical(coefficient: int, exponent: int, fmt: Format) -> str:
    if coefficient == 0:
        return "0"
    sign = "-" if coefficient < 0 else ""
    magnitude = abs(coefficient)
    if fmt == BINARY_SI:
        # Binary suffixes only for whole numbers of at least 1024; anything else prints as DecimalSI.
        if exponent >= 0 and (exponent >= 4 or magnitude * 10**exponent >= 1024):
            number = magnitude * 10**exponent
            power = 0
            # Kubernetes has no suffix beyond Ei; stopping there keeps larger sums readable and exact.
            while power < 6 and number & 1023 == 0:
                number >>= 10
                power += 1
            return f"{sign}{number}{_BINARY_SUFFIX_OF[power]}"
        fmt = DECIMAL_SI
    shift = exponent % 3  # lower the exponent to a multiple of three
    mantissa, exponent = magnitude * 10**shift, exponent - shift
    if fmt == DECIMAL_SI:
        suffix = _DECIMAL_SUFFIX_OF.get(exponent)
        if suffix is not None:
            return f"{sign}{mantissa}{suffix}"
        # No SI suffix beyond E or below n: Kubernetes falls back to exponent notation.
    return f"{sign}{mantissa}e{exponent}" if exponent else f"{sign}{mantissa}"


ZERO: Final = Quantity._make(0, 0, DECIMAL_SI)

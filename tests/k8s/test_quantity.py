"""Quantity behaviour the compiler relies on beyond the Kubernetes vectors: canonical output, sums, JSON input."""

from __future__ import annotations

from fractions import Fraction

import pytest

from policyc.k8s.quantity import BINARY_SI, DECIMAL_SI, Quantity, QuantityError


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("12000m", "12"),
        ("1024Mi", "1Gi"),
        ("0.5", "500m"),
        ("1.5Gi", "1536Mi"),
        ("2048Ki", "2Mi"),
        ("1000M", "1G"),
        ("1500m", "1500m"),
        ("0.1Gi", "107374182400m"),
        ("-0", "0"),
        ("1e3", "1e3"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert str(Quantity.parse(text)) == canonical


def test_sums_keep_the_left_format_and_are_exact() -> None:
    total = sum([Quantity.parse("1Gi"), Quantity.parse("512Mi")])
    assert isinstance(total, Quantity)
    assert str(total) == "1536Mi"
    assert str(Quantity.parse("100m") + Quantity.parse("900m")) == "1"
    assert (Quantity.parse("1Gi") + Quantity.parse("1G")).format == BINARY_SI
    assert (Quantity.parse("1G") + Quantity.parse("1Gi")).format == DECIMAL_SI
    assert str(Quantity.parse("0") + Quantity.parse("1Gi")) == "1Gi"  # a zero left operand takes the right's format
    assert str(Quantity.parse("1") - Quantity.parse("250m")) == "750m"
    assert str(3 * Quantity.parse("1Gi")) == "3Gi"
    assert (Quantity.parse("0.1") + Quantity.parse("0.2")).value == Fraction(3, 10)


def test_comparison_across_formats() -> None:
    assert Quantity.parse("1Gi") == Quantity.parse("1073741824") == Quantity.parse("1024Mi")
    assert Quantity.parse("1Gi") > Quantity.parse("1G")
    assert Quantity.parse("1000m") == Quantity.parse("1")
    assert Quantity.parse("999m") < Quantity.parse("1") <= Quantity.parse("1e0")
    assert len({Quantity.parse("1Gi"), Quantity.parse("1073741824"), Quantity.parse("1G")}) == 2
    ordered = list(map(Quantity.parse, ["500m", "2", "1k", "1Gi"]))
    assert sorted(reversed(ordered)) == ordered


def test_from_json() -> None:
    assert str(Quantity.from_json(8)) == "8"
    assert str(Quantity.from_json(0.1)) == "100m"
    assert str(Quantity.from_json(1.5)) == "1500m"
    assert str(Quantity.from_json('" 64Gi "')) == "64Gi"
    assert Quantity.from_json(None) == Quantity.parse("0")
    with pytest.raises(QuantityError, match="boolean"):
        Quantity.from_json(True)
    with pytest.raises(QuantityError):
        Quantity.from_json(float("nan"))


def test_accessors_and_errors() -> None:
    q = Quantity.parse("1.5")
    assert not q.is_integer() and not q.is_negative() and q.value == Fraction(3, 2)
    assert Quantity.parse("2k").is_integer() and Quantity.parse("-1m").is_negative()
    with pytest.raises(AttributeError):
        q._format = BINARY_SI  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown suffix 'mi'"):
        Quantity.parse("1mi")
    with pytest.raises(QuantityError, match="not a quantity"):
        Quantity.parse(" 1")


def test_exact_values() -> None:
    assert str(Quantity.from_value(Fraction(1, 8))) == "125m"
    assert Quantity.canonical(1536 * 2**20, BINARY_SI) == "1536Mi"
    with pytest.raises(QuantityError, match="no exact decimal"):
        Quantity.from_value(Fraction(1, 3))

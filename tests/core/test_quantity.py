"""Kubernetes quantities, exact and rounded up as apimachinery's resource.Quantity does."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dagpilot.core import quantity


@pytest.mark.parametrize(("text", "exact"), [
    ("500m", Fraction(1, 2)), ("1.5Gi", 1536 * 2**20), ("1e3", 1000), ("1E3", 1000),
    ("1E", 10**18), ("2Ki", 2048), ("128974848", 128974848), ("129e6", 129_000_000),
    ("123Mi", 123 * 2**20), ("+5", 5), ("-1", -1), (".5", Fraction(1, 2)), ("5.", 5),
    ("100n", Fraction(1, 10**7)), ("3u", Fraction(3, 10**6)), ("1.25k", 1250),
])
def test_valid_quantities_parse_exactly(text: str, exact: Fraction) -> None:
    assert quantity.parse(text) == exact


@pytest.mark.parametrize(("text", "value", "milli"), [
    ("0.5", 1, 500), ("1.5m", 1, 2), ("1Gi", 2**30, 2**30 * 1000), ("250m", 1, 250),
    ("-1.5", -1, -1500),
])
def test_value_and_milli_value_round_up(text: str, value: int, milli: int) -> None:
    assert (quantity.value(text), quantity.milli_value(text)) == (value, milli)


@pytest.mark.parametrize("text", ["", "1.2.3", "Gi", "1Ki5", "1e", "abc", "1 Gi", "\uff11",
                                  "1e999", "1K", "1gi", ".", "x" * 100, "1e-31"])
def test_invalid_quantities_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(ValueError, match=r"quantity|exponent|digits"):
        quantity.parse(text)


def test_cpu_is_counted_in_whole_millicores_and_printed_canonically() -> None:
    assert quantity.cores("1.0005") == 1.001
    assert [quantity.format_milli(m) for m in (16000, 500, 1500)] == ["16", "500m", "1500m"]

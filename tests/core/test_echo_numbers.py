"""The shared checks of what comes from outside: bounded reprs, printable text, finite numbers in
range, ASCII counts, CSV shapes."""

from __future__ import annotations

import math

import pytest

from dagpilot.core.csv_shape import check_shape
from dagpilot.core.echo import printable, shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.numbers import ascii_whole, finite, problem, whole
from dagpilot.core.units import duration_s, quantity


def test_shown_is_a_repr_when_short() -> None:
    assert shown("abc") == "'abc'"
    assert shown([1, "x", None]) == "[1, 'x', None]"
    assert shown({"a": 1.5}) == "{'a': 1.5}"


@pytest.mark.parametrize("value", [
    "x" * 10**6,
    list(range(10**6)),
    {str(i): i for i in range(10**5)},
    10**4000,  # int's repr refuses over 4,300 digits
    -(10**400),
])
def test_shown_is_bounded(value: object) -> None:
    assert len(shown(value)) <= 60


def test_shown_of_a_self_similar_container_visits_only_what_it_prints() -> None:
    # A YAML alias bomb: one list referenced nine levels deep, 10**9 leaves once expanded.
    level: list[object] = ["lol"] * 10
    for _ in range(8):
        level = [level] * 10
    assert len(shown(level)) <= 60
    deep: list[object] = []
    for _ in range(20_000):  # deeper than the recursion limit
        deep = [deep]
    assert shown(deep).startswith("[[[")


@pytest.mark.parametrize(("text", "expected"), [
    ("plain id", "plain id"),
    ("red\x1b[31mtext", "red\\x1b[31mtext"),
    ("bell\x07", "bell\\x07"),
    ("two\nlines", "two\\nlines"),
    ("\u202eevil", "\\u202eevil"),  # a right-to-left override
])
def test_printable(text: str, expected: str) -> None:
    assert printable(text) == expected


def test_invalid_input_prints_no_control_characters() -> None:
    error = InvalidInput("a\x1b]0;title\x07.json", "task \x1b[2J", "field\x1b", "bad \x1b[31m")
    assert "\x1b" not in str(error) and "\x07" not in str(error)
    assert "\\x1b" in str(error)


@pytest.mark.parametrize(("value", "reason"), [
    (math.nan, "not a finite number"),
    (math.inf, "not a finite number"),
    (-math.inf, "not a finite number"),
    (float("1e400"), "not a finite number"),
    (-1, "below the minimum"),
    (11, "beyond the limit"),
    (2**63, "beyond the limit"),
    (10**4000, "beyond any limit"),
])
def test_problem(value: float, reason: str) -> None:
    found = problem(value, 0, 10)
    assert found is not None and reason in found


def test_finite_and_whole() -> None:
    assert finite(3, "f", "r", "x", low=0, high=10) == 3.0
    assert whole(4.0, "f", "r", "x", high=10) == 4
    with pytest.raises(InvalidInput, match="expected a number") as caught:
        finite(True, "f", "r", "x")
    assert (caught.value.file, caught.value.record, caught.value.field) == ("f", "r", "x")
    with pytest.raises(InvalidInput, match="whole number"):
        whole(2.5, "f", "r", "x")
    with pytest.raises(InvalidInput, match="beyond any limit"):
        finite(10**4000, "f", "r", "x")  # float() of it would overflow


@pytest.mark.parametrize(("text", "number"), [
    ("7", 7), ("007", 7), ("1" * 18, int("1" * 18)),
    ("²", None), ("٣", None), (" 7", None), ("1_000", None), ("-1", None), ("", None),
    ("1" * 19, None),
])
def test_ascii_whole(text: str, number: int | None) -> None:
    assert ascii_whole(text) == number


@pytest.mark.parametrize("text", ["1e999", "-1e999", "inf", "nan", "9" * 400, "٣Gi", math.inf,
                                  math.nan, 10**400])
def test_quantities_are_finite(text: str | float) -> None:
    with pytest.raises(ValueError, match=r"finite|not a Kubernetes quantity"):
        quantity(text)


@pytest.mark.parametrize("text", ["inf", "nan", "1e999", math.inf, 10**400, "1e400h"])
def test_durations_are_finite(text: str | float) -> None:
    with pytest.raises(ValueError, match=r"finite|not a duration"):
        duration_s(text)


@pytest.mark.parametrize(("data", "record", "field"), [
    (b"a,b,a\n1,2,3\n", "header (line 1)", "a"),
    (b"a,b,c\n1,2,3\n4,5\n", "line 3", "c"),
    (b'a,b,c\n"x,y",2\n', "line 2", "c"),  # a quoted comma does not make up for a field
    (b'a,b,c\nx"y,2\n', "line 2", "c"),  # a quote inside a field: the exact reader decides
])
def test_csv_shape_refused(data: bytes, record: str, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_shape(data, "t.csv")
    assert (caught.value.record, caught.value.field) == (record, field)


@pytest.mark.parametrize("data", [
    b"a,b,c\n1,2,3\n", b"a,b,c\r\n1,2,3\r\n", b"a,b,c\n1,,\n", b'a,b,c\n"x\ny",2,3\n',
    b'a,b,c\n"say ""hi""",2,3\n', b"a,b,c\n1,2,3\n\n", b"", b"a,b,c",
])
def test_csv_shape_accepted(data: bytes) -> None:
    check_shape(data, "t.csv")

"""sjf-cp: longest remaining critical path first, best fit."""

from __future__ import annotations

from dagpilot.schedulers import sjf_cp
from tests.schedulers.views import TinyRun, diamond, two_nodes


def test_diamond_sequence() -> None:
    # Leftover (cpu share + memory share): s on a 0.75 + 0.9375, on b 0.5 + 0.9375 -> b.
    # At 10, by b-level x (40), y (30), z (15): x fills b exactly (0 + 0.9375) -> b;
    # y and z fit only on a. t at 40: b again (1.4375 < 1.6875).
    placements = TinyRun([diamond()], two_nodes(), sjf_cp.build()).run()
    assert placements == [(0, "J/s", "b"), (10, "J/x", "b"), (10, "J/y", "a"),
                          (10, "J/z", "a"), (40, "J/t", "b")]


def test_longer_path_goes_first_even_when_younger() -> None:
    short = diamond()
    placements = TinyRun([short], two_nodes(), sjf_cp.build()).run()
    at_ten = [name for time, name, _ in placements if time == 10]
    assert at_ten == ["J/x", "J/y", "J/z"]  # b-levels 40, 30, 15

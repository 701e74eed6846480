"""load-aware: Trimaran TargetLoadPacking on sampled usage plus pods bound since the sample."""

from __future__ import annotations

from dagpilot.schedulers import load_aware
from tests.schedulers.views import TinyRun, diamond, node


def test_diamond_sequence() -> None:
    # a: 8 cpu, b: 3 cpu; metrics sampled at each decision point, pods predicted at 1.5 x request.
    # s: a 1500/8000 = 18.75 % -> 68, b 50 % -> 33 -> a.
    # At 10 (s done, fresh sample: idle): x (3000m): a 37.5 % -> 96, b 100 % -> 0 -> a.
    # y: a (x placed since the sample) 56.25 % -> 29, b 50 % -> 33 -> b.
    # z: a 56.25 % -> 29, b 100 % -> 0 -> a. t at 40: idle again -> a.
    placements = TinyRun([diamond()], [node("a", 8), node("b", 3)], load_aware.build()).run()
    assert placements == [(0, "J/s", "a"), (10, "J/x", "a"), (10, "J/y", "b"),
                          (10, "J/z", "a"), (40, "J/t", "a")]


def test_target_is_a_setting() -> None:
    # Target 70 %: s: a 18.75 % -> 78, b 50 % -> 91 -> b. x: a 37.5 % -> 86, b 100 % -> 0 -> a.
    # y: a 56.25 % -> 94, b 91 -> a (packing on past 40 %). z: a 75 % -> 58, b 91 -> b. t: b.
    placements = TinyRun([diamond()], [node("a", 8), node("b", 3)],
                         load_aware.build(target_percent=70)).run()
    assert [n for _, _, n in placements] == ["b", "a", "a", "b", "b"]

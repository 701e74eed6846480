"""tetris: packing alignment combined with shortest remaining work."""

from __future__ import annotations

from dagpilot.schedulers import tetris
from tests.schedulers.views import TinyRun, diamond, job, node, task, two_nodes


def test_diamond_sequence() -> None:
    # Alignment (request/alloc . free/alloc over cpu and memory): s: a 0.25 + 0.0625,
    # b 0.5 + 0.0625 -> b. At 10 (one job, so the work term is equal): x on b 1.0625 beats
    # y/z on b 0.5625 -> x on b; y: only a fits (0.3125); z: a (0.1875 + 0.0586). t: b.
    placements = TinyRun([diamond()], two_nodes(), tetris.build()).run()
    assert placements == [(0, "J/s", "b"), (10, "J/x", "b"), (10, "J/y", "a"),
                          (10, "J/z", "a"), (40, "J/t", "b")]


def test_the_job_with_less_remaining_work_goes_first() -> None:
    long_job = job("long", [task("p", 1, 100)])
    short_job = job("short", [task("p", 1, 10)])
    # Same alignment; remaining work 100 against 10 core-seconds: short first, long at 10.
    placements = TinyRun([long_job, short_job], [node("a", 1)], tetris.build()).run()
    assert placements == [(0, "short/p", "a"), (10, "long/p", "a")]


def test_packing_prefers_the_node_the_pod_fills() -> None:
    work = job("J", [task("p", 2, 10)])
    placements = TinyRun([work], [node("roomy", 8), node("snug", 2)], tetris.build()).run()
    assert placements == [(0, "J/p", "snug")]

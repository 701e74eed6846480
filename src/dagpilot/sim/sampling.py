"""When the metrics scrapes come: the ticks of a grid k x sample_interval_s, and how many a run
may record.

A quiet run (no pod pending or bound, nothing for the engine to do but wait for the next job
to arrive) changes no sample until that arrival: every tick in between would record the same
sample and leave the scrape as the last of them leaves it (storage and node changes wait for
the next scrape either way). So from a quiet tick the grid jumps to the last tick before the
next arrival, and a trace whose next job comes in a year costs two ticks, not two million. The
native core (csrc/run.c) takes the same ticks.

While a run is busy it takes a sample every tick; MAX_SAMPLES of them end it (as a horizon
would, with a warning), so that a run always ends by the last arrival plus MAX_SAMPLES x
sample_interval_s, and its record stays within memory.
"""

from __future__ import annotations

import math

MAX_SAMPLES = 1_000_000  # 174 days of busy time at the default 15 s


def next_tick(index: int, interval_s: float, quiet_until_s: float | None) -> int:
    """The grid index of the tick after tick `index`: the next one, or, when the run is quiet
    until `quiet_until_s` (the next arrival), the last one before it, if that is later."""
    following = index + 1
    if quiet_until_s is None or math.isinf(quiet_until_s):
        return following
    return max(following, last_tick_before(quiet_until_s, interval_s))


def last_tick_before(time_s: float, interval_s: float) -> int:
    """The largest k >= 0 with k x interval_s < time_s (0 when there is none)."""
    k = max(math.ceil(time_s / interval_s) - 1, 0)
    while (k + 1) * interval_s < time_s:  # the division's rounding, corrected
        k += 1
    while k > 0 and k * interval_s >= time_s:
        k -= 1
    return k

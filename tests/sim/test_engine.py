from __future__ import annotations

import numpy as np
import pytest

from dagpilot.sim.engine import StartupDelays, next_poll


@pytest.mark.parametrize(("now", "phase", "interval", "expected"), [
    (0.0, 1.5, 5.0, 1.5),
    (1.5, 1.5, 5.0, 1.5),  # exactly on a wake-up
    (1.6, 1.5, 5.0, 6.5),
    (12.0, 1.5, 5.0, 16.5),
    (7.25, 3.0, 0.0, 7.25),  # no polling: at once
])
def test_next_poll(now: float, phase: float, interval: float, expected: float) -> None:
    assert next_poll(now, phase, interval) == pytest.approx(expected)


def test_next_poll_is_never_before_now() -> None:
    for now in np.linspace(0.0, 1_000.0, 997):
        assert next_poll(float(now), 0.1, 0.3) >= now


def test_startup_delays_are_log_normal_around_the_median() -> None:
    delays = StartupDelays(np.random.default_rng(0), 3.0, 0.4)
    draws = np.array([delays.draw() for _ in range(4_000)])
    assert np.median(draws) == pytest.approx(3.0, rel=0.05)
    assert np.std(np.log(draws)) == pytest.approx(0.4, rel=0.05)
    assert StartupDelays(np.random.default_rng(0), 2.5, 0.0).draw() == 2.5
    assert StartupDelays(np.random.default_rng(0), 0.0, 0.4).draw() == 0.0

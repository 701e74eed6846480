"""Two observations equal bit for bit: every array of the same dtype and values, every other
field equal (the lane paths are checked against the one-view path with it)."""

from __future__ import annotations

import dataclasses

import numpy as np

from dagpilot.state import Observation


def assert_same_observation(one: Observation, other: Observation) -> None:
    for field in dataclasses.fields(Observation):
        a, b = getattr(one, field.name), getattr(other, field.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field.name
        else:
            assert a == b, field.name

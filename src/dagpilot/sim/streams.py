"""Independent random streams of one run, derived from its seed by name.

Each source of randomness (start-up delays, node faults, storage QoS, engine polling phases, the
scheduler's tie-breaks) draws from its own stream, so the faults and QoS collapses of a seed are
the same whichever scheduler runs: comparisons between schedulers stay paired.
"""

from __future__ import annotations

import zlib

import numpy as np


def stream(seed: int, name: str) -> np.random.Generator:
    """The generator of stream `name` for run `seed`; the same pair always gives the same draws."""
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(name.encode())]))


NORMAL_BLOCK = 1024  # normals drawn at once: the native core takes them in the same blocks


class NormalBuffer:
    """Standard normal draws from one generator, taken in blocks (a scalar draw costs ~1 µs)."""

    __slots__ = ("_block", "_next", "_rng", "_size")

    def __init__(self, rng: np.random.Generator, size: int = NORMAL_BLOCK) -> None:
        self._rng = rng
        self._size = size
        self._block: list[float] = []
        self._next = 0

    def draw(self) -> float:
        if self._next == len(self._block):
            self._block = self._rng.standard_normal(self._size).tolist()
            self._next = 0
        value = self._block[self._next]
        self._next += 1
        return value

"""Delta debugging (Zeller's ddmin) on lines, then on bytes: the smallest input found that
still fails the same way, within a budget of test runs."""

from __future__ import annotations

from collections.abc import Callable

Check = Callable[[bytes], bool]  # True: this input still fails the same way


class Budget:
    def __init__(self, tests: int) -> None:
        self.left = tests

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def minimize(data: bytes, still_fails: Check, tests: int = 300) -> bytes:
    budget = Budget(tests)
    lines = ddmin(data.splitlines(keepends=True), still_fails, budget)
    return b"".join(ddmin([bytes([b]) for b in b"".join(lines)], still_fails, budget))


def ddmin(units: list[bytes], still_fails: Check, budget: Budget) -> list[bytes]:
    """Remove chunks of `units` while the input still fails: halves first, then finer."""
    chunks = 2
    while len(units) >= 2 and budget.left > 0:
        size = -(-len(units) // chunks)
        for start in range(0, len(units), size):
            rest = units[:start] + units[start + size:]
            if not budget.spend():
                return units
            if still_fails(b"".join(rest)):
                units, chunks = rest, max(chunks - 1, 2)
                break
        else:
            if chunks >= len(units):
                break
            chunks = min(chunks * 2, len(units))
    return units

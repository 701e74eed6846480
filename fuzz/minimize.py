"""Delta debugging (Zeller's ddmin): the smallest input found that still fails the same way,
within a budget of test runs. JSON is reduced as a tree first (entries of objects and arrays
removed, level by level, so every candidate still parses), then any input on lines, then
on bytes."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

Unit = TypeVar("Unit")
Check = Callable[[bytes], bool]  # True: this input still fails the same way


class Budget:
    """Test runs left, and a deadline: a test of a large input can take seconds."""

    def __init__(self, tests: int, seconds: float = math.inf) -> None:
        self._tests = tests
        self._deadline = time.monotonic() + seconds

    @property
    def left(self) -> int:
        return self._tests if time.monotonic() < self._deadline else 0

    def spend(self) -> bool:
        """Take one test; False when none is left (or the time is up)."""
        self._tests -= 1
        return self._tests >= 0 and time.monotonic() < self._deadline


def minimize(data: bytes, still_fails: Check, tests: int = 300, syntax: str = "",
             seconds: float = math.inf) -> bytes:
    budget = Budget(tests, seconds)
    if budget.spend() and still_fails(b""):
        return b""  # what fails is the wrap (a gzip bomb) or the file's mere presence
    if syntax == "json":
        data = _json_tree(data, still_fails, budget)
    lines = ddmin(data.splitlines(keepends=True), lambda kept: still_fails(b"".join(kept)), budget)
    data = b"".join(lines)
    return b"".join(ddmin([bytes([b]) for b in data], lambda kept: still_fails(b"".join(kept)),
                          budget))


def ddmin(units: list[Unit], still_fails: Callable[[list[Unit]], bool],
          budget: Budget) -> list[Unit]:
    """Remove chunks of `units` while the input still fails: halves first, then finer."""
    chunks = 2
    while len(units) >= 2 and budget.left > 0:
        size = -(-len(units) // chunks)
        for start in range(0, len(units), size):
            rest = units[:start] + units[start + size:]
            if not budget.spend():
                return units
            if still_fails(rest):
                units, chunks = rest, max(chunks - 1, 2)
                break
        else:
            if chunks >= len(units):
                break
            chunks = min(chunks * 2, len(units))
    return units


def _json_tree(data: bytes, still_fails: Check, budget: Budget) -> bytes:
    """Remove object members and array items, breadth first, while the document still fails."""
    try:
        tree = json.loads(data)
    except (ValueError, RecursionError):
        return data  # does not parse (a 5,000-digit number, 100,000 brackets): lines and bytes

    def text(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()

    if not budget.spend() or not still_fails(text(tree)):
        return data  # what failed did not survive a rewrite (a duplicated key)
    holder = [tree]  # the root is item 0 of a list, so every node has a parent
    queue: list[tuple[Any, Any]] = [(holder, 0)]
    while queue and budget.left > 0:
        parent, key = queue.pop(0)
        node = parent[key]
        if not isinstance(node, dict | list):
            continue
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))

        def fails_with(kept: list[Any], parent: Any = parent, key: Any = key,
                       node: Any = node) -> bool:
            parent[key] = _restricted(node, kept)
            try:
                return still_fails(text(holder[0]))
            finally:
                parent[key] = node

        reduced = _restricted(node, ddmin(keys, fails_with, budget))
        parent[key] = reduced
        children = reduced.keys() if isinstance(reduced, dict) else range(len(reduced))
        queue.extend((reduced, child) for child in children)
    return text(holder[0])


def _restricted(node: dict[Any, Any] | list[Any], kept: list[Any]) -> Any:
    if isinstance(node, dict):
        return {key: node[key] for key in kept}
    return [node[index] for index in kept]

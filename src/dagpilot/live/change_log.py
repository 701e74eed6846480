"""The tokens of `ClusterView.changed_nodes`: which node rows changed since a given moment.

Token t names the moment when t - start entries had been logged under the current `cluster`.
A new cluster starts a new log whose first token is one past every token given before, so an
old token is never replayed against rows that may now name other nodes. The log keeps at most
`capacity` entries; a token older than what it keeps gets None (the reader rescans).
"""

from __future__ import annotations

from collections.abc import Sequence


class ChangeLog:
    def __init__(self, capacity: int = 1 << 16) -> None:
        self.capacity = capacity
        self._rows: list[int] = []
        self._first = 0  # the token of the oldest moment the log can replay

    @property
    def token(self) -> int:
        return self._first + len(self._rows)

    def add(self, row: int) -> None:
        self._rows.append(row)
        if len(self._rows) > self.capacity:
            dropped = len(self._rows) - self.capacity // 2
            del self._rows[:dropped]
            self._first += dropped

    def restart(self) -> None:
        """The cluster changed: tokens given so far no longer replay."""
        self._first = self.token + 1
        self._rows.clear()

    def since(self, token: int) -> tuple[int, Sequence[int] | None]:
        now = self.token
        if not self._first <= token <= now:
            return now, None
        return now, self._rows[token - self._first:]

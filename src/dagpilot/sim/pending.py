"""The pending pods as a read-only sequence over the live queue, so that reading it is O(1).

Rebuilding a tuple of a long backlog after every placement would cost a scheduler O(backlog)
per decision. This view iterates the queue in place (oldest first) and reaches items near
either end by walking from that end; only an index deep inside the queue materialises a tuple,
kept until the queue changes. Like the rest of the view it is valid until the next placement.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import overload

from dagpilot.core.view import PodRef

NEAR_END = 32  # items this close to an end are reached by walking from it


class PendingPods(Sequence[PodRef]):
    """Oldest first; `uid -> pod` insertion order is creation order."""

    __slots__ = ("_pods", "_tuple")

    def __init__(self, pods: dict[int, PodRef]) -> None:
        self._pods = pods
        self._tuple: tuple[PodRef, ...] | None = None

    def changed(self) -> None:
        self._tuple = None

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[PodRef]:
        return iter(self._pods.values())

    def __reversed__(self) -> Iterator[PodRef]:
        return reversed(self._pods.values())

    def __bool__(self) -> bool:
        return bool(self._pods)

    @overload
    def __getitem__(self, index: int) -> PodRef: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[PodRef]: ...

    def __getitem__(self, index: int | slice) -> PodRef | Sequence[PodRef]:
        if isinstance(index, slice):
            start, stop, step = index.start or 0, index.stop, index.step or 1
            if 0 <= start < NEAR_END and stop is not None and 0 <= stop <= start + NEAR_END and \
                    step > 0:
                return tuple(islice(self._pods.values(), start, stop, step))
            return self._all()[index]
        size = len(self._pods)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError("pending index out of range")
        if position < NEAR_END:
            return next(islice(self._pods.values(), position, None))
        if size - 1 - position < NEAR_END:
            return next(islice(reversed(self._pods.values()), size - 1 - position, None))
        return self._all()[position]

    def _all(self) -> tuple[PodRef, ...]:
        if self._tuple is None:
            self._tuple = tuple(self._pods.values())
        return self._tuple

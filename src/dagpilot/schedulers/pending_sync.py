"""PendingSync: follows `view.pending` between decisions without rescanning it.

The view lists pending pods oldest first, so new pods join at the tail: a backwards scan until
a known pod finds them. When the counts disagree (a pod left without being placed by us, or
joined out of order) the caller rebuilds from the whole list.
"""

from __future__ import annotations

from collections.abc import Sequence

from dagpilot.core.view import PodRef


class PendingSync:
    def __init__(self) -> None:
        self._known: set[int] = set()

    def changes(self, pending: Sequence[PodRef]) -> tuple[list[PodRef], bool]:
        """(pods to add, oldest first; whether to clear everything first)."""
        joined: list[PodRef] = []
        known = self._known
        for pod in reversed(pending):
            if pod.uid in known:
                break
            joined.append(pod)
        if len(self._known) + len(joined) == len(pending):
            self._known.update(pod.uid for pod in joined)
            joined.reverse()
            return joined, False
        self._known = {pod.uid for pod in pending}
        return list(pending), True

    def taken(self, pod: PodRef) -> None:
        """The pod was placed: the caller applies the placement before the next call."""
        self._known.discard(pod.uid)

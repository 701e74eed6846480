"""The watcher's loop with an in-memory API (code paths only): list then watch from the list's
resourceVersion, resume after the server ends a watch, list again after 410 Gone, back off
after failures, and treat a resource the server does not serve as empty when allowed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import Gone, Listing, Resource, WatchEvent
from dagpilot.live.watcher import Change, Relist, Watcher


def _object(name: str, version: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": str(version)}}


class ScriptedApi:
    """Answers list_all and watch from scripts; records the resourceVersions watched from."""

    server = "https://fake"

    def __init__(self, lists: list[Any], watches: list[Any]) -> None:
        self.lists, self.watches = lists, watches
        self.watched_from: list[str] = []
        self.done = threading.Event()

    def list_all(self, resource: Resource, selectors: object = None) -> Listing:
        step = self.lists.pop(0)
        if isinstance(step, Exception):
            raise step
        return step

    def watch(self, resource: Resource, version: str, stop: threading.Event | None = None,
              selectors: object = None) -> Iterator[WatchEvent]:
        self.watched_from.append(version)
        if not self.watches:
            self.done.set()
            assert stop is not None
            stop.wait(10)
            return
        step = self.watches.pop(0)
        if isinstance(step, Exception):
            raise step
        yield from step

    def stop_watches(self) -> None:
        pass


def _run(api: ScriptedApi, **options: Any) -> tuple[list[Relist | Change], Watcher]:
    received: list[Relist | Change] = []
    watcher = Watcher(api, Resource.PODS, lambda raw: raw["metadata"]["name"], received.append,
                      first_delay_s=0.001, max_delay_s=0.002, **options)  # type: ignore[arg-type]
    watcher.start()
    assert api.done.wait(10), "the script did not run to its end"
    watcher.stop()
    return received, watcher


def test_a_watch_resumes_from_the_last_version_and_relists_after_gone() -> None:
    api = ScriptedApi(
        lists=[Listing([_object("a", 5)], "10"), Listing([_object("b", 30)], "31")],
        watches=[[WatchEvent("ADDED", _object("c", 11)), WatchEvent("BOOKMARK", _object("", 15))],
                 [WatchEvent("MODIFIED", _object("c", 16))],
                 Gone("too old resource version")])
    received, watcher = _run(api)
    assert api.watched_from == ["10", "15", "16", "31"]
    assert [type(item).__name__ for item in received] == ["Relist", "Change", "Change",
                                                          "Relist"]
    first, _, modified, second = received
    assert isinstance(first, Relist) and first.records == ["a"]
    assert isinstance(modified, Change) and (modified.type, modified.record) == ("MODIFIED", "c")
    assert isinstance(second, Relist) and second.records == ["b"]
    assert watcher.health.gone == 1 and watcher.health.lists == 2 and watcher.health.events == 2


def test_failures_are_counted_and_retried_until_the_server_answers() -> None:
    refused = KubeApiError("https://fake", "unreachable: refused")
    api = ScriptedApi(lists=[refused, refused, Listing([], "7")], watches=[])
    received, watcher = _run(api)
    assert watcher.health.failures == 2 and watcher.health.consecutive_failures == 0
    assert watcher.health.last_error is refused and watcher.health.synced.is_set()
    assert received == [Relist(Resource.PODS, [])] and api.watched_from == ["7"]


def test_a_resource_that_is_not_served_is_empty_when_allowed() -> None:
    missing = KubeApiError("https://fake", "HTTP 404: the server could not find it", 404)
    api = ScriptedApi(lists=[missing, Listing([_object("w", 3)], "4")], watches=[])
    received, watcher = _run(api, absent_ok=True, absent_retry_s=0.001)
    assert received == [Relist(Resource.PODS, []), Relist(Resource.PODS, ["w"])]
    assert watcher.health.failures == 0

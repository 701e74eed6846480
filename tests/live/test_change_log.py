"""The change log's tokens: replay since a token, none across a cluster change or past the
capacity kept."""

from __future__ import annotations

from dagpilot.live.change_log import ChangeLog


def test_a_token_replays_the_rows_logged_since() -> None:
    log = ChangeLog()
    start = log.token
    log.add(3)
    middle = log.token
    log.add(1)
    assert log.since(start) == (start + 2, [3, 1]) and log.since(middle) == (middle + 1, [1])
    assert log.since(log.token) == (log.token, [])
    assert log.since(-1)[1] is None and log.since(log.token + 1)[1] is None


def test_a_restart_makes_every_earlier_token_unknown() -> None:
    log = ChangeLog()
    log.add(0)
    old = log.token
    log.restart()
    assert log.token > old and log.since(old)[1] is None and log.since(log.token)[1] == []


def test_tokens_older_than_what_the_log_keeps_are_unknown() -> None:
    log = ChangeLog(capacity=4)
    first = log.token
    for row in range(10):
        log.add(row)
    _token, rows = log.since(log.token - 2)
    assert rows == [8, 9] and log.since(first)[1] is None

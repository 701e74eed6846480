"""The twin's per-pod page cache is what its node holds (cache reclaimed past the capacity
first, physics.cache_held), shared by the pods in proportion to what each would cache."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from dagpilot.sandbox.twin_metrics import _cache_held

GIB = 2**30


def _node(working: int, cache: int, capacity: int) -> Any:
    return cast(Any, SimpleNamespace(mem_working=working, mem_cache=cache, mem_capacity=capacity))


def test_with_room_each_pod_holds_what_it_would_cache() -> None:
    node = _node(working=4 * GIB, cache=2 * GIB, capacity=16 * GIB)
    assert _cache_held(GIB, node) == GIB


def test_past_the_capacity_the_pods_share_what_the_node_keeps() -> None:
    node = _node(working=14 * GIB, cache=4 * GIB, capacity=16 * GIB)  # room for 2 of 4 GiB
    shares = [_cache_held(wanted, node) for wanted in (GIB, 3 * GIB)]
    assert shares == [GIB / 2, 3 * GIB / 2] and sum(shares) == 2 * GIB


def test_working_sets_past_the_capacity_leave_no_cache_and_no_cache_is_none() -> None:
    assert _cache_held(GIB, _node(working=17 * GIB, cache=GIB, capacity=16 * GIB)) == 0.0
    assert _cache_held(0, _node(working=GIB, cache=0, capacity=16 * GIB)) == 0.0

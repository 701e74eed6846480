"""A policy process's settings: torch's threads, the frozen start-up heap, collections held
off during a call (the `dagpilot` scheduler's own test is in tests/test_agent_latency.py)."""

from __future__ import annotations

import gc

import torch

from dagpilot.policy.process import (
    collections_deferred,
    set_torch_threads,
    settle_heap,
    settle_scheduler_process,
)
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: the threads are restored after each test


def test_torch_threads_are_set_or_left() -> None:
    set_torch_threads(2)
    assert torch.get_num_threads() == 2
    set_torch_threads(None)
    assert torch.get_num_threads() == 2


def test_settling_the_heap_freezes_what_is_alive() -> None:
    try:
        settle_heap()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_scheduler_process_gets_one_thread_and_a_frozen_heap_unless_told_not_to() -> None:
    set_torch_threads(2)
    settle_scheduler_process(settle=False)
    assert torch.get_num_threads() == 1 and gc.get_freeze_count() == 0
    try:
        settle_scheduler_process(3)
        assert torch.get_num_threads() == 3 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_collections_are_off_during_the_call_and_back_after_it() -> None:
    assert collections_deferred(gc.isenabled) is False
    assert gc.isenabled()
    gc.disable()
    try:
        collections_deferred(gc.isenabled)
        assert not gc.isenabled()  # a caller without automatic collections keeps it so
    finally:
        gc.enable()

"""A policy process's settings: torch's threads, the frozen start-up heap, collections held
off during a call (the `dagpilot` scheduler's own test is in tests/test_agent_latency.py)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

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


FIRST_FULL_COLLECTION = textwrap.dedent("""
    import gc
    from dagpilot.policy.process import settle_heap
    heap = [[i] for i in range(1_000_000)]  # a large start-up heap, frozen below
    settle_heap()
    full = []
    gc.callbacks.append(lambda phase, info: full.append(1)
                        if phase == "start" and info["generation"] == 2 else None)
    class Cyclic:
        def __init__(self):
            self.me = self  # only the cyclic collector frees it
    window, made = [], 0
    while not full and made < 2_000_000:
        window.append([Cyclic() for _ in range(500)])  # lives long enough to be promoted
        made += 500
        if len(window) > 20:
            window.pop(0)  # then garbage in the oldest generation
    print(made)
""")


def test_full_collections_after_settling_do_not_wait_on_the_frozen_heaps_size() -> None:
    # In a fresh interpreter: freezing this one's heap would change every later test's gc.
    # Left counting the 1,000,000 frozen objects as long-lived, the collector holds off its
    # first full collection until some 250,000 objects were promoted; counting only what is
    # not frozen, it comes at its own cadence (under 100,000 with CPython's thresholds).
    made = subprocess.run([sys.executable, "-c", FIRST_FULL_COLLECTION], check=True,
                          capture_output=True, text=True, timeout=120).stdout
    assert int(made) < 150_000


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

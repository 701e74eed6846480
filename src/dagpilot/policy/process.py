"""How a process that runs the policy is set up: torch's threads, the start-up heap, and
garbage collection around a decision. Process-wide settings, so the processes call them
(a scheduler, a training run, a rollout worker, a benchmark), never a model loader:

    scheduler = load_scheduler(models)
    settle_scheduler_process()       # one torch thread; the start-up heap frozen

The network's matrices are small: one intra-op thread is fastest, and runs side by side do
not oversubscribe the cores.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TypeVar

import torch

Result = TypeVar("Result")

SCHEDULER_TORCH_THREADS = 1


def set_torch_threads(count: int | None) -> None:
    """torch's intra-op threads for this process; None leaves them as they are."""
    if count is not None:
        torch.set_num_threads(count)


def settle_heap() -> None:
    """Collect once, then move every object alive now out of the cyclic collector's sight
    (`gc.freeze`), for a long-running scheduler process, after start-up.

    The start-up heap (torch and the other modules, the model, the cluster inventory: some
    200,000 objects) is never garbage, yet every full collection walks all of it: 140-190 ms
    on the benchmark machine, a pause that would land in some decision. Frozen, a full
    collection walks only what came later (under 1 ms after hundreds of decisions). The
    memory trade-off: frozen objects are still freed by reference counting, but a frozen
    object that later becomes part of unreachable cycles is never reclaimed, so replacing
    the model in the same process (a registry reload) may keep the old one's cyclic parts;
    restart the process, or call `gc.unfreeze()` and collect, to reclaim them.

    The second collection, after the freeze, resets the collector's count of long-lived
    objects: CPython runs an automatic full collection only once the objects promoted to the
    oldest generation since the last one exceed a quarter of those that survived it, and the
    last one, before the freeze, counted the whole start-up heap. Left so, cyclic garbage that
    lived long enough to be promoted (a finished simulation's episode in the soak benchmark)
    piles up until a quarter of the frozen heap's size has been promoted, and the memory that
    pile took stays resident after it is freed. Collected again after the freeze, the count
    is of what is not frozen (nothing yet), and full collections keep pace with what came
    later (bench/serve_soak.py; docs/BENCHMARKS.md, "Serving process: soak and inference")."""
    gc.collect()
    gc.freeze()
    gc.collect()  # walks nothing frozen: it only resets the long-lived count (see above)


def settle_scheduler_process(torch_threads: int | None = SCHEDULER_TORCH_THREADS, *,
                             settle: bool = True) -> None:
    """What a long-running scheduler process does once its model is loaded: torch on
    `torch_threads` threads, and (`settle`) the start-up heap frozen (`settle_heap`)."""
    set_torch_threads(torch_threads)
    if settle:
        settle_heap()


def collections_deferred(decide: Callable[[], Result]) -> Result:
    """`decide()` with automatic garbage collection held off until it returns.

    A collection that comes due during the call runs right after it, at the caller's next
    allocation (between two decisions of a serving loop), not inside it; it is deferred, never
    skipped, and a caller that had automatic collection off keeps it off. Not a context
    manager: leaving one allocates, which would run the collection before the call returns."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return decide()
    finally:
        if enabled:
            gc.enable()

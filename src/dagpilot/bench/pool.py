"""Runs spread over worker processes: the runs of a benchmark are independent of each other.

Workers ignore Ctrl-C, so the main process alone decides what happens: it stops the pool and
keeps the results that came back. Each run is a pure function of its task and seed, so the
results are the same, bit for bit, with one worker or many (only wall-clock figures differ).
"""

from __future__ import annotations

import functools
import multiprocessing
import signal
from collections.abc import Callable, Sequence

from dagpilot.bench.results import RunResult
from dagpilot.bench.runner import RunContext, RunTask, execute_by_name

# A learned scheduler's run costs several times a heuristic's (a network per decision): its runs
# are handed out first, so that they do not start last and leave the other workers idle.
SLOW_SCHEDULERS = frozenset({"dagpilot"})


def run_in_pool(tasks: Sequence[RunTask], context: RunContext, workers: int,
                on_result: Callable[[RunTask, RunResult], None]) -> None:
    """Run every task on `workers` processes, calling `on_result` as each one finishes."""
    by_index = {task.index: task for task in tasks}
    pool = multiprocessing.Pool(min(workers, len(tasks)), initializer=_ignore_interrupts)
    try:
        work = functools.partial(execute_by_name, context=context)
        for index, result in pool.imap_unordered(work, slowest_first(tasks)):
            on_result(by_index[index], result)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def slowest_first(tasks: Sequence[RunTask]) -> list[RunTask]:
    """The tasks with the slow schedulers' runs first, otherwise in their order."""
    return sorted(tasks, key=lambda task: task.scheduler not in SLOW_SCHEDULERS)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)

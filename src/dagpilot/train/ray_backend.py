"""Rollouts as Ray actors: `--backend ray --workers N`.

Each actor holds a simulator for the training cluster and runs one lock-step group of episodes
at a time (`train.lockstep`; one episode with one lane) with the snapshot of the policy it is
sent (weights and normaliser go to the object store once per iteration). Groups are handed out
as actors become free and come back in task order; every group depends only on its tasks and
the snapshot, and the groups are the local backend's, so the results equal its, bit for bit.
Without an address Ray starts on this machine with N CPUs; with `address="auto"` (or
`ray://HOST:10001`) the same code runs on a Ray cluster, whose nodes need dagpilot installed.

`ray` is imported here only, and only when this backend is built: it is the optional `ray`
extra.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from dagpilot.core.config import SimSettings
from dagpilot.core.errors import DagpilotError
from dagpilot.core.types import Cluster
from dagpilot.policy.process import set_torch_threads
from dagpilot.train.rollout import Episode, LocalRollouts, Progress, groups
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.train.snapshot import PolicySnapshot

log = logging.getLogger(__name__)


class RayUnavailable(DagpilotError):
    """The ray backend was asked for, but ray is not installed."""


def import_ray() -> Any:
    try:
        import ray  # noqa: PLC0415  (the optional extra; only this backend needs it)
    except ImportError as error:
        raise RayUnavailable("--backend ray needs the ray extra: pip install "
                             "'dagpilot[ray]' (or 'ray[default]')") from error
    return ray


class RolloutWorker:
    """What each Ray actor runs: the local backend, one lock-step group per call."""

    def __init__(self, cluster: Cluster, settings: SimSettings, torch_threads: int) -> None:
        set_torch_threads(torch_threads)  # this actor's process: one CPU each
        self.local = LocalRollouts(cluster, settings)

    def run(self, snapshot: PolicySnapshot, group: Sequence[EpisodeTask]) -> list[Episode]:
        return self.local.collect(snapshot, group, lanes=len(group))


class RayRollouts:
    def __init__(self, cluster: Cluster, settings: SimSettings, workers: int, *,
                 address: str | None = None) -> None:
        if workers < 1:
            raise ValueError("the ray backend needs at least one worker")
        self._ray = import_ray()
        self._owns_ray = not self._ray.is_initialized()
        if self._owns_ray:
            if address is None:
                self._ray.init(num_cpus=workers, include_dashboard=False)
            else:
                self._ray.init(address=address)
        actor = self._ray.remote(num_cpus=1)(RolloutWorker)
        self._actors = [actor.remote(cluster, settings, 1) for _ in range(workers)]
        log.info("ray backend: %d rollout actors", workers)

    def collect(self, snapshot: PolicySnapshot, tasks: Sequence[EpisodeTask],
                progress: Progress | None = None, lanes: int = 1) -> list[Episode]:
        if lanes < 1:
            raise ValueError("rollouts need at least one lane")
        ray = self._ray
        shared = ray.put(snapshot)
        work = groups(tasks, lanes)
        results: list[list[Episode] | None] = [None] * len(work)
        queue = list(enumerate(work))[::-1]
        running: dict[Any, tuple[int, Any]] = {}
        for actor in self._actors:
            if queue:
                self._submit(actor, shared, queue.pop(), running)
        finished = 0
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            index, actor = running.pop(ready[0])
            results[index] = ray.get(ready[0])
            for _ in work[index]:
                finished += 1
                if progress is not None:
                    progress(finished, len(tasks))
            if queue:
                self._submit(actor, shared, queue.pop(), running)
        return [episode for group in results if group is not None for episode in group]

    @staticmethod
    def _submit(actor: Any, shared: Any, item: tuple[int, Sequence[EpisodeTask]],
                running: dict[Any, tuple[int, Any]]) -> None:
        index, group = item
        running[actor.run.remote(shared, list(group))] = (index, actor)

    def close(self) -> None:
        """Stop the actors, and Ray itself when this backend started it."""
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
        if self._owns_ray:
            self._ray.shutdown()


def ray_backend(workers: int, address: str | None = None) -> Callable[
        [Cluster, SimSettings], RayRollouts]:
    """A factory for `train(backend=...)`: N Ray actors, here or on the cluster at `address`."""
    def build(cluster: Cluster, settings: SimSettings) -> RayRollouts:
        return RayRollouts(cluster, settings, workers, address=address)
    return build

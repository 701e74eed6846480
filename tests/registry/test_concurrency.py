"""Readers during publishes and rollbacks never see a partial model.

A writer thread publishes versions (and rolls back) while reader threads follow `current`,
a verifier checks the whole registry and a handle reloads. Every file of a version carries
its index, so a load that mixed two versions, or read one half-written, would show: every
load must be complete, verified and consistent. Bounded: the readers stop after the writer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import torch

from dagpilot.registry import ModelHandle, load_current, publish, rollback, verify
from dagpilot.registry.safe_load import LoadedModel
from tests.registry.builders import SCHEMA, model_folder

VERSIONS = 8
# Only a hung writer reaches this. A count of reads would not do: a reload that finds
# `current` unmoved is one readlink, and 20,000 of them beat a slow writer's fsyncs.
DEADLINE_S = 300.0


def consistent(model: LoadedModel) -> None:
    index = int(model.version.removeprefix("v"))
    assert torch.equal(model.state_dict["layer.weight"], torch.full((3, 2), float(index)))
    assert model.config["index"] == index
    assert model.metadata["index"] == index
    assert model.metadata["published"]["version"] == model.version
    assert model.normaliser["mean"][0] == index


def run_until(done: threading.Event, step: Callable[[], None]) -> bool:
    """Call STEP until the writer is done, then once more: the last call sees the end state.
    False when the deadline came first."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        finished = done.is_set()
        step()
        if finished:
            return True
    return False


def test_readers_during_publishes_see_only_complete_versions(tmp_path: Path) -> None:
    root = tmp_path / "models"
    sources = [model_folder(tmp_path / f"src{index}", index) for index in range(VERSIONS + 1)]
    publish(root, "v0", sources[0])
    handle = ModelHandle.open(root, SCHEMA)
    done = threading.Event()
    errors: list[BaseException] = []
    last_seen: dict[str, str] = {}
    ended: list[bool] = []

    def writer() -> None:
        for index in range(1, VERSIONS + 1):
            publish(root, f"v{index}", sources[index])
            if index % 4 == 0:
                rollback(root)
                rollback(root, f"v{index}")

    def reader(name: str) -> Callable[[], None]:
        def step() -> None:
            model = load_current(root, SCHEMA)
            consistent(model)
            last_seen[name] = model.version
        return step

    def verifier() -> None:
        assert verify(root) == []

    def reloader() -> None:
        outcome = handle.reload()
        assert outcome.error is None, outcome.error
        consistent(handle.model)

    def guarded(work: Callable[[], object], *, signals_done: bool = False) -> threading.Thread:
        def body() -> None:
            try:
                work()
            except BaseException as error:
                errors.append(error)
            finally:
                if signals_done:
                    done.set()
        return threading.Thread(target=body)

    steps = [reader("a"), reader("b"), reader("c"), verifier, reloader]
    threads = [guarded(lambda step=step: ended.append(run_until(done, step))) for step in steps]
    threads.append(guarded(writer, signals_done=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    final = f"v{VERSIONS}"
    assert last_seen == {"a": final, "b": final, "c": final}
    assert handle.model.version == final
    assert ended == [True] * len(steps)  # every loop saw the writer finish

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dagpilot.core.types import Gpu, NodeSpec, Resources
from dagpilot.state.gpu_layout import GpuLayout


def spec(name: str, per_complex: tuple[int, ...]) -> NodeSpec:
    complexes = [c for c, count in enumerate(per_complex) for _ in range(count)]
    gpus = tuple(Gpu(i, "A100", c) for i, c in enumerate(complexes))
    return NodeSpec(name, Resources(8, 2**34, len(gpus), "A100" if gpus else None), gpus=gpus)


@dataclass(frozen=True)
class State:
    free_gpus: tuple[int, ...]


def best(specs: list[NodeSpec], free_gpus: list[tuple[int, ...]]) -> list[float]:
    layout = GpuLayout.of(specs)
    free = np.array([len(f) for f in free_gpus], dtype=np.float64)
    return layout.free_on_best_complex(free, [State(f) for f in free_gpus]).tolist()


def test_free_gpus_on_the_best_root_complex() -> None:
    specs = [spec("cpu", ()), spec("one", (4,)), spec("two", (4, 4)), spec("odd", (2, 6))]
    assert best(specs, [(), (0, 1, 2, 3), tuple(range(8)), tuple(range(8))]) == [0, 4, 4, 6]
    # One GPU bound on each side of "two": 3 + 3 free, so a 4-GPU pod cannot stay on one.
    assert best(specs, [(), (1, 3), (1, 2, 3, 5, 6, 7), (0, 1)]) == [0, 2, 3, 2]
    assert best(specs, [(), (), (), (2, 3, 4)]) == [0, 0, 0, 3]


def test_layout_lists_only_nodes_with_several_complexes() -> None:
    layout = GpuLayout.of([spec("cpu", ()), spec("one", (4,)), spec("two", (4, 4))])
    assert layout.split.tolist() == [2]
    assert layout.total.tolist() == [0, 4, 8]
    assert layout.largest_complex.tolist() == [0, 4, 4]


def test_some_rows_get_what_every_node_gets() -> None:
    specs = [spec("cpu", ()), spec("two", (4, 4)), spec("one", (4,)), spec("odd", (2, 6))]
    free_gpus = [(), (1, 2, 3, 5, 6, 7), (0, 1), (2, 3, 4)]
    layout = GpuLayout.of(specs)
    states = [State(f) for f in free_gpus]
    free = np.array([len(f) for f in free_gpus], dtype=np.float64)
    every = layout.free_on_best_complex(free, states)
    rows = np.array([3, 1, 0])
    assert layout.free_on_best_complex(free[rows], states, rows).tolist() == every[rows].tolist()
    assert layout.split_position.tolist() == [-1, 0, -1, 1]

"""Device choice: a multi-GPU pod's GPUs on one PCIe root complex, the fullest that fits."""

from __future__ import annotations

import pytest

from dagpilot.decide.gpu_choice import choose_gpus
from tests.sim.helpers import gpus, node


@pytest.mark.parametrize(("free", "wanted", "model", "expected"), [
    ((0, 4, 5, 6, 7), 2, None, (4, 5)),  # complex 0 has one free GPU: complex 1
    ((0, 1, 4, 5, 6), 2, None, (0, 1)),  # both fit: the fuller complex, keep 4-6 together
    ((0, 1, 4, 5), 3, None, ()),  # no complex has three: the node picks
    ((0, 1, 2, 3), 1, "V100", ()),  # the wrong model
    ((2, 3, 4), 0, None, ()),  # no GPU asked for
])
def test_gpus_are_taken_on_one_pcie_root_complex(free: tuple[int, ...], wanted: int,
                                                 model: str | None,
                                                 expected: tuple[int, ...]) -> None:
    spec = node("g", 32.0, gpus=gpus("A100", (4, 4)))
    assert choose_gpus(spec, free, wanted, model) == expected

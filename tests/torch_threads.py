"""torch on one thread for the tests that run the network: its matrices are small, and
intra-op threads only contend (on a busy 2-core machine, by a factor of tens)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

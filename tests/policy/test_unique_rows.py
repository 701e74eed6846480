"""unique_rows gives what `np.unique` of the rows' bytes as opaque values gives (first rows
and the place of every row), with or without colliding hashes."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from dagpilot.policy import unique_rows as module
from dagpilot.policy.unique_rows import unique_rows


def reference(rows: npt.NDArray[np.generic]) -> tuple[np.ndarray, np.ndarray]:
    raw = np.ascontiguousarray(rows).reshape(len(rows), -1).view(np.uint8)
    keys = np.ascontiguousarray(raw).view(np.dtype((np.void, raw.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def repeated_rows(rows: int, width: int, seed: int) -> npt.NDArray[np.float32]:
    """Rows drawn from a few distinct ones, with values that compare equal but differ in
    bytes (0.0 and -0.0) and a NaN, which are different rows byte for byte."""
    rng = np.random.default_rng(seed)
    distinct = rng.normal(size=(12, width)).astype(np.float32)
    distinct[1] = distinct[0]
    distinct[1, 0], distinct[0, 0] = 0.0, -0.0
    distinct[2, -1] = np.nan
    return distinct[rng.integers(0, len(distinct), size=rows)]


@pytest.mark.parametrize("width", [1, 2, 46])
def test_float_rows_as_np_unique_of_their_bytes(width: int) -> None:
    rows = repeated_rows(500, width, seed=width)
    first, inverse = unique_rows(rows)
    expected_first, expected_inverse = reference(rows)
    assert np.array_equal(first, expected_first)
    assert np.array_equal(inverse, expected_inverse)
    assert np.array_equal(rows[first][inverse].view(np.uint32), rows.view(np.uint32))


def test_rows_of_odd_byte_widths_and_more_axes() -> None:
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 3, size=(300, 5, 3), dtype=np.uint8)  # 15 bytes a row
    first, inverse = unique_rows(rows)
    expected_first, expected_inverse = reference(rows)
    assert np.array_equal(first, expected_first)
    assert np.array_equal(inverse, expected_inverse)


def test_colliding_hashes_fall_back_to_the_same_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With every multiplier 0, all rows hash alike: the check sees different rows under one
    hash and the answer still is `np.unique`'s."""
    monkeypatch.setattr(module, "_MULTIPLIERS", np.zeros(4096, dtype=np.uint64))
    rows = repeated_rows(200, 7, seed=3)
    first, inverse = unique_rows(rows)
    expected_first, expected_inverse = reference(rows)
    assert len(first) > 1
    assert np.array_equal(first, expected_first)
    assert np.array_equal(inverse, expected_inverse)


def test_no_rows() -> None:
    first, inverse = unique_rows(np.zeros((0, 4), dtype=np.float32))
    assert first.shape == inverse.shape == (0,)

"""A settings file that is not one: nested past what tomllib can recurse, a FIFO, too large."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dagpilot.core.config import MAX_SETTINGS_BYTES, load_settings
from dagpilot.core.errors import InvalidInput


def test_an_integer_past_the_digit_limit_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "huge.toml"
    path.write_text("[loaders]\nseed = " + "9" * 5001 + "\n")
    with pytest.raises(InvalidInput, match="too many digits") as caught:
        load_settings(path)
    assert str(path) in str(caught.value)


def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("[sim]\nx = " + "[" * 3000 + "1" + "]" * 3000 + "\n")
    with pytest.raises(InvalidInput, match="nested too deep"):
        load_settings(path)


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    os.mkfifo(path)
    with pytest.raises(InvalidInput, match="FIFO"):
        load_settings(path)


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(b"# " + b"x" * MAX_SETTINGS_BYTES + b"\n")
    with pytest.raises(InvalidInput, match="MiB"):
        load_settings(path)

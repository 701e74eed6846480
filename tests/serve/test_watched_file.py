"""A file read again on change; a change that does not parse keeps what was read before."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput, Unreadable
from dagpilot.serve.keys import parse_keys
from dagpilot.serve.watched_file import WatchedFile
from tests.serve.helpers import key, write_keys


def ids(watched: WatchedFile) -> list[str]:  # type: ignore[type-arg]
    return [k.key_id for k in watched.current().keys]


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = write_keys(tmp_path / "keys.yaml", key("a"))
    watched = WatchedFile(path, parse_keys, 1 << 20)
    assert ids(watched) == ["a"]
    write_keys(path, key("a"), key("b"))
    assert ids(watched) == ["a", "b"]
    assert watched.reloads == 1
    assert ids(watched) == ["a", "b"] and watched.reloads == 1  # unchanged: not read again


def test_a_broken_change_keeps_the_old_keys_and_is_logged_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_keys(tmp_path / "keys.yaml", key("a"))
    watched = WatchedFile(path, parse_keys, 1 << 20)
    path.write_text("keys: [")
    with caplog.at_level(logging.ERROR, "dagpilot.serve.watched_file"):
        assert ids(watched) == ["a"]
        assert ids(watched) == ["a"]
    assert len([r for r in caplog.records if "not valid YAML" in r.getMessage()]) == 1
    path.unlink()
    assert ids(watched) == ["a"]
    write_keys(path, key("c"))
    assert ids(watched) == ["c"]


def test_a_secret_volume_swapping_its_data_link_is_followed(tmp_path: Path) -> None:
    """Kubernetes updates a mounted Secret by pointing `..data` at a new folder."""
    for version, name in (("v1", "a"), ("v2", "b")):
        (tmp_path / version).mkdir()
        write_keys(tmp_path / version / "keys.yaml", key(name))
    (tmp_path / "..data").symlink_to("v1")
    (tmp_path / "keys.yaml").symlink_to("..data/keys.yaml")
    watched = WatchedFile(tmp_path / "keys.yaml", parse_keys, 1 << 20)
    assert ids(watched) == ["a"]
    (tmp_path / "..data_tmp").symlink_to("v2")
    os.replace(tmp_path / "..data_tmp", tmp_path / "..data")
    assert ids(watched) == ["b"]


def test_a_file_that_does_not_load_at_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(Unreadable):
        WatchedFile(tmp_path / "missing.yaml", parse_keys, 1 << 20)
    (tmp_path / "bad.yaml").write_text("keys: []\n")
    with pytest.raises(InvalidInput, match="no keys"):
        WatchedFile(tmp_path / "bad.yaml", parse_keys, 1 << 20)

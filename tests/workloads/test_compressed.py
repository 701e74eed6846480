"""Reading plain or gzipped trace files, and the errors for files that cannot be read."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.workloads.compressed import read_bytes, read_json


def test_gzip_is_recognised_by_its_content_not_its_name(tmp_path: Path) -> None:
    plain, packed = tmp_path / "a.csv.gz", tmp_path / "b.csv"
    plain.write_bytes(b"x,y\n1,2\n")
    packed.write_bytes(gzip.compress(b"x,y\n1,2\n"))
    assert read_bytes(plain) == read_bytes(packed) == b"x,y\n1,2\n"


@pytest.mark.parametrize("cut", [1, 2])
def test_truncated_gzip_names_the_file(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "cut.json.gz"
    packed = gzip.compress(b'{"a": 1}' * 100)
    path.write_bytes(packed[: len(packed) // (cut + 1)])
    with pytest.raises(InvalidInput, match="truncated or corrupt gzip") as caught:
        read_json(path)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), "", "")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file") as caught:
        read_bytes(tmp_path / "absent.csv")
    assert caught.value.file == str(tmp_path / "absent.csv")


@pytest.mark.parametrize(("content", "record", "message"), [
    (b'{"a":\n [1,, 2]}', "line 2 column 5", "not valid JSON"),
    (b'{"a": "\xff"}', "", "not UTF-8"),
])
def test_bad_json(tmp_path: Path, content: bytes, record: str, message: str) -> None:
    path = tmp_path / "bad.json.gz"
    path.write_bytes(gzip.compress(content))
    with pytest.raises(InvalidInput, match=message) as caught:
        read_json(path)
    assert (caught.value.file, caught.value.record) == (str(path), record)

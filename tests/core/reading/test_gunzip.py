"""Gzip content decompressed in chunks up to a cap: a small file cannot expand without bound."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.gunzip import gunzip, read_decompressed

MIB = 2**20


def zeros_bomb(members: int) -> bytes:
    """`members` gzip members of 1 MiB of zeros each: about 1 KiB per MiB it expands to."""
    return gzip.compress(bytes(MIB), compresslevel=9) * members


def test_plain_and_gzipped_files_read_the_same(tmp_path: Path) -> None:
    plain, packed = tmp_path / "a.json.gz", tmp_path / "b.json"  # names say nothing
    plain.write_bytes(b'{"a": 1}')
    packed.write_bytes(gzip.compress(b'{"a": 1}'))
    assert read_decompressed(plain, 100) == read_decompressed(packed, 100) == b'{"a": 1}'


def test_concatenated_members_are_all_read() -> None:
    data = gzip.compress(b"one,") + gzip.compress(b"two")
    assert gunzip(data, "x.csv.gz", 100) == b"one,two"


def test_decompression_stops_at_the_cap() -> None:
    bomb = zeros_bomb(8)  # 8 MiB from about 8 KiB
    assert len(bomb) < 64 * 1024
    with pytest.raises(InvalidInput) as caught:
        gunzip(bomb, "bomb.json.gz", 2 * MIB)
    assert (caught.value.file, caught.value.message) == (
        "bomb.json.gz", "decompresses to more than the limit of 2 MiB for this kind of file")
    assert len(gunzip(bomb, "bomb.json.gz", 8 * MIB)) == 8 * MIB  # exactly the cap is fine


def test_a_bomb_stops_at_the_ratio_limit_before_the_cap() -> None:
    bomb = zeros_bomb(80)  # 80 MiB from about 80 KiB: 50 x 80 KiB is under the 64 MiB floor
    with pytest.raises(InvalidInput) as caught:
        gunzip(bomb, "bomb.csv.gz", 2048 * MIB)
    assert caught.value.message == (
        "decompresses to more than 64 MiB, 50 times its compressed size (a gzip bomb?)")


def test_a_large_file_may_expand_past_the_floor_within_the_ratio() -> None:
    data = random.Random(1).randbytes(33 * MIB).hex().encode()  # 66 MiB, compresses about 2x
    packed = gzip.compress(data, compresslevel=1)
    assert len(gunzip(packed, "big.csv.gz", 2048 * MIB)) == len(data)


@pytest.mark.parametrize("damage", ["truncate", "corrupt"])
def test_a_damaged_stream_names_the_file(damage: str) -> None:
    packed = gzip.compress(b"x,y\n" * 1000)
    data = packed[: len(packed) // 2] if damage == "truncate" else (
        packed[:20] + bytes(b ^ 0xFF for b in packed[20:40]) + packed[40:])
    with pytest.raises(InvalidInput, match="truncated or corrupt gzip") as caught:
        gunzip(data, "cut.csv.gz", MIB)
    assert caught.value.file == "cut.csv.gz"


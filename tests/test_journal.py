"""The decision journal: records come back in order, files rotate at their size bound and the
oldest beyond `keep` is deleted; a torn line is skipped and counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.journal import Journal, read, rotated


def test_records_come_back_in_the_order_written_with_kind_and_time(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    journal.write("decision", {"pod": "ns/a", "node": "n1"})
    journal.write("outcome", {"pod": "ns/a", "result": "bound"})
    journal.close()
    reading = read(tmp_path / "j.jsonl")
    assert [(r["kind"], r["pod"]) for r in reading.records] == [("decision", "ns/a"),
                                                                 ("outcome", "ns/a")]
    assert all(r["t"] > 0 for r in reading.records) and reading.skipped == 0


def test_rotation_bounds_the_files_and_keeps_the_newest_records(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path, max_bytes=2048, keep=2)
    for number in range(200):
        journal.write("decision", {"n": number, "pad": "x" * 40})
    journal.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl", "j.jsonl.1", "j.jsonl.2"]
    assert all(p.stat().st_size <= 2048 for p in tmp_path.iterdir())
    numbers = [r["n"] for r in read(path).records]
    assert numbers == list(range(numbers[0], 200))  # oldest first, nothing in between lost
    assert numbers[0] > 0  # the oldest rotated out


def test_a_torn_line_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.write("decision", {"n": 1})
    journal.close()
    with path.open("ab") as handle:
        handle.write(b'{"kind": "decision", "n": ')
    rotated(path, 1).write_bytes(b'{"kind": "decision", "n": 0}\nnot json\n')
    reading = read(path)
    assert [r["n"] for r in reading.records] == [0, 1] and reading.skipped == 2


def test_no_journal_is_an_error_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no decision journal"):
        read(tmp_path / "missing.jsonl")

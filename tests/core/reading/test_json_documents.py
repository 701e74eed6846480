"""JSON documents: syntax, encoding, nesting depth and long integers, each a located error."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.json_documents import NotJson, nesting_depth, parse_json, read_json
from dagpilot.core.reading.limits import MAX_NESTING_DEPTH


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_gzipped_document_is_read(tmp_path: Path) -> None:
    path = tmp_path / "x.json.gz"
    path.write_bytes(gzip.compress(b'{"a": [1, {"b": null}]}'))
    assert read_json(path) == {"a": [1, {"b": None}]}


@pytest.mark.parametrize(("levels", "depth"), [(0, 0), (1, 1), (MAX_NESTING_DEPTH, 100)])
def test_depth_is_measured(levels: int, depth: int) -> None:
    document = parse_json(nested(levels) or "7", "x.json")
    assert nesting_depth(document) == depth


@pytest.mark.parametrize("levels", [MAX_NESTING_DEPTH + 1, 990, 5_000, 100_000])
def test_nesting_past_the_limit_is_refused(levels: int) -> None:
    # 990 parses (json's own limit is near 1,000) and is refused by the walk; 5,000 and
    # 100,000 make json raise RecursionError
    with pytest.raises(InvalidInput) as caught:
        parse_json(nested(levels), "deep.json")
    assert (caught.value.file, caught.value.message) == (
        "deep.json", "nested deeper than the limit of 100 levels")


def test_deep_objects_are_refused_like_lists() -> None:
    text = '{"a": ' * 500 + "1" + "}" * 500
    with pytest.raises(InvalidInput, match="nested deeper than the limit"):
        parse_json(text, "deep.json")


def test_an_integer_of_more_than_4300_digits_is_refused() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_json('{"readBytes": ' + "9" * 5_000 + "}", "long.json")
    assert caught.value.message == ("a number too long to read (integers are limited to "
                                    "4300 digits)")
    assert parse_json("9" * 4_300, "long.json") == int("9" * 4_300)


@pytest.mark.parametrize(("text", "record", "message"), [
    ('{"a":\n [1,, 2]}', "line 2 column 5", "not valid JSON: Expecting value"),
    (b'{"a": "\xff"}', "", "not UTF-8 text"),
])
def test_text_that_is_not_json_is_its_own_kind(text: str | bytes, record: str,
                                               message: str) -> None:
    with pytest.raises(NotJson) as caught:
        parse_json(text, "bad.json")
    assert caught.value.record == record
    assert caught.value.message.startswith(message)


def test_an_embedded_document_is_located_by_its_record_and_field() -> None:
    with pytest.raises(NotJson) as caught:
        parse_json("[1,", "w.yaml", "document 1, task 'a'", "withParam")
    assert (caught.value.record, caught.value.field) == (
        "document 1, task 'a', line 1 column 4", "withParam")
    with pytest.raises(InvalidInput) as deep:
        parse_json(nested(2_000), "w.yaml", "document 1, task 'a'", "withParam")
    assert not isinstance(deep.value, NotJson)
    assert (deep.value.record, deep.value.field) == ("document 1, task 'a'", "withParam")

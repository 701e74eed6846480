"""YAML documents: aliases bounded before expansion, depth capped, conversions located."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.limits import MAX_ALIAS_NODES
from dagpilot.core.reading.yaml_documents import parse_yaml_documents, read_yaml_documents
from tests.core.reading.laughs import argo_workflow


def refused(text: str | bytes) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        parse_yaml_documents(text.encode() if isinstance(text, str) else text, "x.yaml")
    assert caught.value.file == "x.yaml"
    return caught.value


def test_every_document_of_a_stream_is_read(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("a: 1\n---\n[b, 2]\n")
    assert read_yaml_documents(path) == [{"a": 1}, ["b", 2]]


def test_anchors_for_shared_blocks_are_fine() -> None:
    text = ("defaults: &resources {requests: {cpu: '1', memory: 1Gi}}\n"
            "steps:\n" + "".join(f"  - {{name: s{i}, resources: *resources}}\n"
                                 for i in range(50))
            + "merged: {<<: *resources, limits: {cpu: '2'}}\n")
    [document] = parse_yaml_documents(text, "x.yaml")
    assert document["steps"][49]["resources"] == {"requests": {"cpu": "1", "memory": "1Gi"}}
    assert document["merged"]["limits"] == {"cpu": "2"}


def test_the_billion_laughs_is_refused_before_it_expands() -> None:
    text = argo_workflow()
    assert len(text) < 700
    error = refused(text)
    assert error.message == (f"aliases expand to more than the limit of {MAX_ALIAS_NODES} "
                             "nodes (a YAML bomb?)")
    assert error.record.startswith("line ")


@pytest.mark.parametrize("text", ["a: &x [1, *x]\n", "a: &x {b: {c: *x}}\n"])
def test_an_alias_inside_its_own_anchor_is_refused(text: str) -> None:
    assert refused(text).message == ("an alias inside the node it refers to (a recursive "
                                     "structure)")


@pytest.mark.parametrize("text", [
    "[" * 20_000 + "]" * 20_000,  # flow style
    "".join(" " * level + "a:\n" for level in range(150)) + " " * 150 + "b: 1\n",  # block
])
def test_nesting_past_the_limit_is_refused(text: str) -> None:
    error = refused(text)
    assert error.message == "nested deeper than the limit of 100 levels"
    assert error.record.startswith("line ")


@pytest.mark.parametrize(("text", "message"), [
    ("n: " + "1" * 5_000 + "\n", "a number too long to read (integers are limited to 4300 "
                                 "digits)"),
    ("when: 2024-13-45\n", "a value that cannot be converted: month must be in 1..12"),
])
def test_a_value_yaml_cannot_convert_is_invalid_input(text: str, message: str) -> None:
    assert refused(text).message == message


@pytest.mark.parametrize(("text", "record", "message"), [
    (b"a: [1, 2\n", "line 2 column 1", "not valid YAML: did not find expected ',' or ']'"),
    (b"\xff\x00bad", "", "not valid YAML: invalid leading UTF-8 octet (character 0xff at "
                         "position 0)"),
    (b"a: \x01\n", "", "not valid YAML: control characters are not allowed"),
    (b"a: !!python/object:os.system x\n", "line 1 column 4", "not valid YAML: could not "
                                                             "determine a constructor"),
])
def test_bad_yaml_is_located(text: bytes, record: str, message: str) -> None:
    error = refused(text)
    assert error.record == record
    assert error.message.startswith(message)

"""The extender protocol's JSON: ExtenderArgs read both ways, results written in kind."""

from __future__ import annotations

import json

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.serve.extender_wire import (
    MAX_NODES,
    error_result,
    filter_result,
    parse_args,
    priority_json,
)
from tests.serve.extender_helpers import pod


def test_node_names_are_read_and_answered_as_names() -> None:
    args = parse_args(json.dumps({"Pod": pod(), "Nodes": None,
                                  "NodeNames": ["a", "b"]}).encode(), "filter")
    assert args.cache_capable and args.node_names == ("a", "b")
    result = filter_result(args, ["b"], {"a": "why"}, {})
    assert result == {"Nodes": None, "NodeNames": ["b"], "FailedNodes": {"a": "why"},
                      "FailedAndUnresolvableNodes": {}, "Error": ""}


def test_node_objects_are_read_and_the_passing_ones_sent_back_as_they_came() -> None:
    nodes = [{"metadata": {"name": "a"}, "x": 1}, {"metadata": {"name": "b"}, "x": 2}]
    args = parse_args(json.dumps({"Pod": pod(), "Nodes": {"items": nodes}}).encode(),
                      "filter")
    assert not args.cache_capable and args.node_names == ("a", "b")
    result = filter_result(args, ["b"], {}, {"a": "never"})
    assert result["Nodes"] == {"items": [nodes[1]]} and result["NodeNames"] is None
    assert result["FailedAndUnresolvableNodes"] == {"a": "never"}


def test_an_empty_node_list_is_no_nodes() -> None:
    assert parse_args(json.dumps({"Pod": pod(), "Nodes": {}}).encode(),
                      "filter").node_names == ()


@pytest.mark.parametrize(("body", "field", "says"), [
    (b"{not json", "", "not valid JSON"),
    (b'{"Pod": "\xc3\x28"}', "", "not UTF-8"),
    (b"[1, 2]", "", "not a JSON object"),
    (b'{"NodeNames": []}', "Pod", "no Pod"),
    (b'{"Pod": {"metadata": {}}, "NodeNames": []}', "Pod.metadata.name", "no name"),
    (json.dumps({"Pod": pod()}).encode(), "NodeNames", "neither"),
    (json.dumps({"Pod": pod(), "NodeNames": "a"}).encode(), "NodeNames", "not a list"),
    (json.dumps({"Pod": pod(), "NodeNames": ["a", 3]}).encode(), "NodeNames[1]",
     "not a node name"),
    (json.dumps({"Pod": pod(), "Nodes": {"items": [{"metadata": {}}]}}).encode(),
     "Nodes.items[0].metadata.name", "no name"),
    (json.dumps({"Pod": pod(), "Nodes": {"items": "x"}}).encode(), "Nodes.items",
     "not a list"),
    (json.dumps({"Pod": pod(), "NodeNames": ["n"] * (MAX_NODES + 1)}).encode(), "NodeNames",
     f"at most {MAX_NODES}"),
    (b'{"Pod": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "", "nested deeper"),
])
def test_bad_arguments_name_the_request_and_field(body: bytes, field: str, says: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_args(body, "prioritize")
    assert caught.value.file == "extender prioritize request"
    assert caught.value.field == field
    assert says in caught.value.message


def test_scores_and_errors_have_the_go_field_names() -> None:
    assert json.loads(priority_json({"a": 10, "b": 3})) == [{"Host": "a", "Score": 10},
                                                             {"Host": "b", "Score": 3}]
    odd = 'n"\\\u00e9\n'  # a name JSON must escape (never a valid node name; still safe)
    assert json.loads(priority_json({odd: 0})) == [{"Host": odd, "Score": 0}]
    assert json.loads(priority_json({})) == []
    assert json.loads(priority_json({"a": 11, "b": -1})) == [{"Host": "a", "Score": 11},
                                                             {"Host": "b", "Score": -1}]
    assert error_result("bad")["Error"] == "bad"

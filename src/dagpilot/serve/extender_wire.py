"""The kube-scheduler extender protocol's JSON (`k8s.io/kube-scheduler/extender/v1`), both ways.

    ExtenderArgs          {"Pod": Pod, "Nodes": NodeList | null, "NodeNames": [name] | null}
    ExtenderFilterResult  {"Nodes": NodeList | null, "NodeNames": [name] | null,
                           "FailedNodes": {name: reason}, "FailedAndUnresolvableNodes":
                           {name: reason}, "Error": ""}
    HostPriorityList      [{"Host": name, "Score": 0..10}]

The Go types have no json tags, so the field names are the Go names. A scheduler with
`nodeCacheCapable: true` sends NodeNames and reads NodeNames back; without it, it sends the
Node objects and reads the passing Node objects back (as it sent them). Anything malformed is
an InvalidInput naming the request, the record and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.json_documents import parse_json

MAX_EXTENDER_PRIORITY = 10  # extender/v1 MaxExtenderPriority
MAX_NODES = 100_000  # far above any cluster kube-scheduler supports (5,000 nodes)


@dataclass(frozen=True, slots=True)
class ExtenderArgs:
    pod: dict[str, Any]
    node_names: tuple[str, ...]
    node_objects: tuple[dict[str, Any], ...] | None  # None: the scheduler sent NodeNames

    @property
    def cache_capable(self) -> bool:
        """The scheduler sent names and reads names back (nodeCacheCapable)."""
        return self.node_objects is None


def parse_args(body: bytes, verb: str) -> ExtenderArgs:
    """The ExtenderArgs of a `verb` call's body."""
    where = f"extender {verb} request"
    document = parse_json(body, where)
    if not isinstance(document, dict):
        raise InvalidInput(where, "ExtenderArgs", "", "the body is not a JSON object")
    pod = document.get("Pod")
    if not isinstance(pod, dict):
        raise InvalidInput(where, "ExtenderArgs", "Pod", "no Pod object")
    metadata = pod.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) \
            or not metadata["name"]:
        raise InvalidInput(where, "ExtenderArgs", "Pod.metadata.name", "the pod has no name")
    record = f"pod {metadata.get('namespace', '')}/{metadata['name']}"
    names, nodes = document.get("NodeNames"), document.get("Nodes")
    if names is not None:
        return ExtenderArgs(pod, _names(names, where, record), None)
    if nodes is None:
        raise InvalidInput(where, record, "NodeNames", "neither NodeNames nor Nodes is given")
    objects = _node_objects(nodes, where, record)
    return ExtenderArgs(pod, tuple(_node_name(node, where, record, index)
                                   for index, node in enumerate(objects)), objects)


def _names(value: Any, where: str, record: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InvalidInput(where, record, "NodeNames", "not a list of node names")
    _check_count(len(value), where, record, "NodeNames")
    for index, name in enumerate(value):
        if not isinstance(name, str) or not name:
            raise InvalidInput(where, record, f"NodeNames[{index}]",
                               f"not a node name: {shown(repr(name))}")
    return tuple(value)


def _node_objects(value: Any, where: str, record: str) -> tuple[dict[str, Any], ...]:
    items = value.get("items") if isinstance(value, dict) else None
    if items is None and isinstance(value, dict):
        items = []  # a NodeList without items (or with null) is empty, as Go decodes it
    if not isinstance(items, list):
        raise InvalidInput(where, record, "Nodes.items", "not a list of Node objects")
    _check_count(len(items), where, record, "Nodes.items")
    for index, node in enumerate(items):
        if not isinstance(node, dict):
            raise InvalidInput(where, record, f"Nodes.items[{index}]", "not a Node object")
    return tuple(items)


def _node_name(node: Mapping[str, Any], where: str, record: str, index: int) -> str:
    metadata = node.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name:
        raise InvalidInput(where, record, f"Nodes.items[{index}].metadata.name",
                           "the node has no name")
    return name


def _check_count(count: int, where: str, record: str, field: str) -> None:
    if count > MAX_NODES:
        raise InvalidInput(where, record, field, f"{count} nodes: at most {MAX_NODES}")


def filter_result(args: ExtenderArgs, passing: Sequence[str], failed: Mapping[str, str],
                  unresolvable: Mapping[str, str]) -> dict[str, Any]:
    """ExtenderFilterResult in the form the scheduler sent: names, or its Node objects."""
    if args.cache_capable:
        nodes, names = None, list(passing)
    else:
        assert args.node_objects is not None
        keep = set(passing)
        nodes = {"items": [node for name, node in zip(args.node_names, args.node_objects,
                                                       strict=True) if name in keep]}
        names = None
    return {"Nodes": nodes, "NodeNames": names, "FailedNodes": dict(failed),
            "FailedAndUnresolvableNodes": dict(unresolvable), "Error": ""}


def error_result(message: str) -> dict[str, Any]:
    """An ExtenderFilterResult that carries only an error (sent with a non-200 status too)."""
    return {"Nodes": None, "NodeNames": None, "FailedNodes": {},
            "FailedAndUnresolvableNodes": {}, "Error": message}


def priority_json(scores: Mapping[str, int]) -> bytes:
    """The HostPriorityList of {Host: Score}, [{"Host": name, "Score": n}, ...], written
    directly: at 1,000 nodes building 1,000 dicts and encoding them cost five times as much.
    Each node's eleven possible entries are kept (names repeat at every call)."""
    return f"[{','.join([_entry(host, score) for host, score in scores.items()])}]".encode()


_entries: dict[str, tuple[str, ...]] = {}
_ENTRIES_KEPT = 100_000  # node names; a cluster has at most a few thousand


def _entry(host: str, score: int) -> str:
    known = _entries.get(host)
    if known is None:
        if len(_entries) >= _ENTRIES_KEPT:
            _entries.clear()
        name = json.dumps(host)
        known = _entries[host] = tuple(f'{{"Host":{name},"Score":{value}}}'
                                       for value in range(MAX_EXTENDER_PRIORITY + 1))
    if 0 <= score <= MAX_EXTENDER_PRIORITY:
        return known[score]
    return f'{{"Host":{json.dumps(host)},"Score":{int(score)}}}'

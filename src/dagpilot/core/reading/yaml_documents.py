"""YAML documents through PyYAML's safe loader (libyaml's), bounded before anything is built.

Aliases are allowed (Kubernetes and Argo authors use anchors for shared blocks) but counted on
the event stream first: the nodes they stand for, once expanded, may add at most
MAX_ALIAS_NODES to a file, and an alias may not point into the node that contains it. Nesting
is capped at MAX_NESTING_DEPTH, and a value PyYAML cannot convert (an integer of more than
4,300 digits, a timestamp with month 13) is an InvalidInput like bad syntax. This is the one
module of `core` that uses a third-party package: the workload and cluster readers, which may
not import each other, share it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import yaml

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.files import read_file
from dagpilot.core.reading.json_documents import too_deep
from dagpilot.core.reading.limits import MAX_ALIAS_NODES, MAX_NESTING_DEPTH, MAX_YAML_BYTES


def read_yaml_documents(path: Path | str, max_bytes: int = MAX_YAML_BYTES) -> list[Any]:
    """Every document of the YAML file `path`, in order."""
    name = os.fspath(path)
    return parse_yaml_documents(read_file(name, max_bytes), name)


def parse_yaml_documents(data: bytes | str, file: str) -> list[Any]:
    """Every document of a YAML stream read from `file`: measured first (depth, aliases) on
    libyaml's event stream, then built by the safe constructor; both passes run in C."""
    try:
        _measure(yaml.parse(data, Loader=_LOADER), file)
        return list(yaml.load_all(data, Loader=_LOADER))
    except yaml.YAMLError as error:
        if "maximum nesting depth" in str(error):  # libyaml's own limit, met while scanning ahead
            raise InvalidInput(file, _line_of(error), "", f"nested deeper than the limit of "
                               f"{MAX_NESTING_DEPTH} levels") from None
        raise InvalidInput(file, _line_of(error), "", f"not valid YAML: {_problem(error)}") \
            from error
    except RecursionError as error:  # MAX_NESTING_DEPTH keeps this from happening; in case
        raise too_deep(file, "", "") from error
    except ValueError as error:  # a value the constructor cannot convert
        raise InvalidInput(file, "", "", _conversion_problem(error)) from error


# libyaml where PyYAML was built with it (the wheels are): its parser is ~30x faster than the
# pure-Python one, which took minutes on a few MiB of crafted YAML.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPENS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSES = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class _Position(Protocol):
    line: int
    column: int


def _measure(events: Iterator[yaml.Event], file: str) -> None:
    """Refuses, before anything is built, nesting past MAX_NESTING_DEPTH, aliases whose nodes,
    once expanded, add more than MAX_ALIAS_NODES to the file (nine levels of ten aliases, the
    "billion laughs", would add 10^9), and an alias inside the node it names (a structure that
    never ends). Each node's expanded size is counted as its events go by."""
    open_nodes: list[list[Any]] = []  # [anchor, nodes so far] of each collection not yet closed
    sizes: dict[str, int] = {}  # anchor -> nodes it stands for, aliases expanded
    alias_nodes = 0
    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            sizes = {}  # anchors belong to their document
        elif isinstance(event, _OPENS):
            if len(open_nodes) >= MAX_NESTING_DEPTH:
                raise InvalidInput(file, _line(event.start_mark), "",
                                   f"nested deeper than the limit of {MAX_NESTING_DEPTH} levels")
            open_nodes.append([getattr(event, "anchor", None), 1])
        elif isinstance(event, _CLOSES):
            anchor, size = open_nodes.pop()
            _close(open_nodes, sizes, anchor, size)
        elif isinstance(event, yaml.ScalarEvent):
            _close(open_nodes, sizes, event.anchor, 1)
        elif isinstance(event, yaml.AliasEvent):
            size = _alias_size(event, sizes, open_nodes, file)
            alias_nodes += size
            if alias_nodes > MAX_ALIAS_NODES:
                raise InvalidInput(file, _line(event.start_mark), "",
                                   f"aliases expand to more than the limit of {MAX_ALIAS_NODES} "
                                   "nodes (a YAML bomb?)")
            _close(open_nodes, sizes, None, size)


def _close(open_nodes: list[list[Any]], sizes: dict[str, int], anchor: str | None,
           size: int) -> None:
    """A node of `size` nodes is complete: named by its anchor, counted in its parent."""
    if anchor:
        sizes[anchor] = size
    if open_nodes:
        open_nodes[-1][1] += size


def _alias_size(event: yaml.AliasEvent, sizes: dict[str, int], open_nodes: list[list[Any]],
                file: str) -> int:
    anchor = event.anchor
    if anchor in sizes:
        return sizes[anchor]
    if any(frame[0] == anchor for frame in open_nodes):
        raise InvalidInput(file, _line(event.start_mark), "",
                           "an alias inside the node it refers to (a recursive structure)")
    return 1  # an undefined alias: the constructor reports it as bad YAML


def _line(mark: _Position | None) -> str:
    return f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""


def _line_of(error: yaml.YAMLError) -> str:
    return _line(getattr(error, "problem_mark", None))


def _problem(error: yaml.YAMLError) -> str:
    """PyYAML's problem, with its context's line, without the quoted source it prints."""
    if isinstance(error, yaml.reader.ReaderError):  # bad encoding or a control character
        return f"{error.reason} (character {error.character:#x} at position {error.position})"
    problem = getattr(error, "problem", None) or str(error)
    context = getattr(error, "context", None)
    context_mark = getattr(error, "context_mark", None)
    if context and context_mark is not None:
        problem = f"{problem} ({context} at line {context_mark.line + 1})"
    return str(problem)


def _conversion_problem(error: ValueError) -> str:
    if "integer string conversion" in str(error):
        return (f"a number too long to read (integers are limited to "
                f"{sys.get_int_max_str_digits()} digits)")
    return f"a value that cannot be converted: {str(error)[:200]}"

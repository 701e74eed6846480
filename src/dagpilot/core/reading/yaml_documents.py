"""YAML documents through PyYAML's safe loader, bounded before anything is expanded.

Aliases are allowed (Kubernetes and Argo authors use anchors for shared blocks) but counted as
they are composed: the nodes they stand for, once expanded, may add at most MAX_ALIAS_NODES to a
file (nine levels of ten aliases, the "billion laughs", would add 10^9), and an alias may not
point into the node that contains it (a structure that never ends). Nesting is capped at
MAX_NESTING_DEPTH, and a value PyYAML cannot convert (an integer of more than 4,300 digits, a
timestamp with month 13) is an InvalidInput like bad syntax. This is the one module of `core`
that uses a third-party package: the workload and cluster readers, which may not import each
other, share it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Protocol, cast

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
    """Every document of a YAML stream read from `file`."""
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(data, file)  # reads the start: an encoding error is raised here
        documents = []
        while loader.check_node():  # what check_data does, typed
            documents.append(loader.get_data())
        return documents
    except yaml.YAMLError as error:
        raise InvalidInput(file, _line_of(error), "", f"not valid YAML: {_problem(error)}") \
            from error
    except RecursionError as error:  # MAX_NESTING_DEPTH keeps this from happening; in case
        raise too_deep(file, "", "") from error
    except ValueError as error:  # a value the constructor cannot convert
        raise InvalidInput(file, "", "", _conversion_problem(error)) from error
    finally:
        if loader is not None:
            loader.dispose()


class _Position(Protocol):
    line: int
    column: int


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that measures, while composing, the depth and the aliases' expanded size."""

    def __init__(self, stream: bytes | str, file: str) -> None:
        super().__init__(stream)
        self.file = file
        self.depth = 0
        self.alias_nodes = 0
        self.sizes: dict[int, int] = {}  # id(node) -> nodes it stands for, aliases expanded

    def compose_document(self) -> yaml.Node | None:
        self.sizes = {}  # nodes of an earlier document may be gone, their ids reused
        node: yaml.Node | None = super().compose_document()
        return node

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            mark = self._next_mark()
            alias = cast(yaml.Node, super().compose_node(parent, index))  # an alias is a node
            self._count_alias(alias, mark)
            return alias
        self.depth += 1
        if self.depth > MAX_NESTING_DEPTH:
            raise InvalidInput(self.file, _line(self._next_mark()), "",
                               f"nested deeper than the limit of {MAX_NESTING_DEPTH} levels")
        try:
            node = cast(yaml.Node, super().compose_node(parent, index))  # a node event's node
        finally:
            self.depth -= 1
        self.sizes[id(node)] = 1 + sum(self.sizes[id(child)] for child in _children(node))
        return node

    def _next_mark(self) -> _Position | None:
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]
        return event.start_mark

    def _count_alias(self, node: yaml.Node, mark: _Position | None) -> None:
        size = self.sizes.get(id(node))
        if size is None:  # its node is still being composed: the alias is inside it
            raise InvalidInput(self.file, _line(mark), "",
                               "an alias inside the node it refers to (a recursive structure)")
        self.alias_nodes += size
        if self.alias_nodes > MAX_ALIAS_NODES:
            raise InvalidInput(self.file, _line(mark), "",
                               f"aliases expand to more than the limit of {MAX_ALIAS_NODES} "
                               "nodes (a YAML bomb?)")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


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

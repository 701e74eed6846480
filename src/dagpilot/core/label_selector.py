"""Kubernetes label selectors, as `kubectl get nodes -l` reads them: parse, print, match.

    topology.kubernetes.io/zone=zone-a,topology.dagpilot.io/rack in (rack-0,rack-1)

Requirements are joined by commas and all must hold: `key=value` (or `==`), `key!=value`,
`key in (a,b)`, `key notin (a,b)`, `key` (the label exists), `!key` (it does not). The empty
selector matches every node, as in Kubernetes. `aliases` lets a caller accept short keys
(`zone`, `rack`); the parsed form, and its text, always carry the full label keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dagpilot.core.errors import SpecError

_KEY = re.compile(r"([A-Za-z0-9.-]{1,253}/)?[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?")
_VALUE = re.compile(r"([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?")
_SET = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_COMPARE = re.compile(r"^\s*([^=!\s]+)\s*(==|=|!=)\s*(\S*)\s*$")
OPERATORS = ("in", "notin", "exists", "absent")


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # one of OPERATORS
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.operator == "exists":
            return value is not None
        if self.operator == "absent":
            return value is None
        inside = value is not None and value in self.values
        return inside if self.operator == "in" else not inside

    def text(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "absent":
            return f"!{self.key}"
        if len(self.values) == 1:
            return f"{self.key}{'=' if self.operator == 'in' else '!='}{self.values[0]}"
        return f"{self.key} {self.operator} ({','.join(self.values)})"


@dataclass(frozen=True)
class Selector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)

    def text(self) -> str:
        return ",".join(requirement.text() for requirement in self.requirements)


def parse(text: str, aliases: Mapping[str, str] | None = None) -> Selector:
    """The selector TEXT means; SpecError naming the requirement that does not parse."""
    return Selector(tuple(_requirement(part, text, aliases or {})
                          for part in _split(text) if part.strip()))


def _split(text: str) -> list[str]:
    """Commas outside parentheses separate requirements."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0 or depth > 1:
            raise SpecError(text, "unbalanced parentheses in the label selector")
        if char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    if depth:
        raise SpecError(text, "unbalanced parentheses in the label selector")
    parts.append(text[start:])
    if len(parts) > 1 and any(not part.strip() for part in parts):
        raise SpecError(text, "an empty requirement between commas")
    return parts


def _requirement(part: str, text: str, aliases: Mapping[str, str]) -> Requirement:
    if found := _SET.match(part):
        key, operator, listed = found.groups()
        values = tuple(sorted({value.strip() for value in listed.split(",")}))
        if not values or not all(values):
            raise SpecError(text, f"{part.strip()!r}: {operator} takes a list of values")
        return Requirement(_key(key, text, aliases), operator, _values(values, text))
    if found := _COMPARE.match(part):
        key, operator, value = found.groups()
        return Requirement(_key(key, text, aliases), "notin" if operator == "!=" else "in",
                           _values((value,), text))
    word = part.strip()
    if word.startswith("!"):
        return Requirement(_key(word[1:].strip(), text, aliases), "absent")
    if " " not in word:
        return Requirement(_key(word, text, aliases), "exists")
    raise SpecError(text, f"{word!r}: expected key=value, key!=value, key in (a,b), "
                          "key notin (a,b), key or !key")


def _key(key: str, text: str, aliases: Mapping[str, str]) -> str:
    full = aliases.get(key, key)
    if not _KEY.fullmatch(full):
        raise SpecError(text, f"{key!r} is not a label key")
    return full


def _values(values: tuple[str, ...], text: str) -> tuple[str, ...]:
    for value in values:
        if not _VALUE.fullmatch(value):
            raise SpecError(text, f"{value!r} is not a label value")
    return values

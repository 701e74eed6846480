"""Argo's `depends` expressions: `A && (B.Succeeded || C.Failed)` -> the tasks it waits for.

Grammar (Argo's enhanced depends logic):

    expression := conjunction ("||" conjunction)*
    conjunction := unary ("&&" unary)*
    unary := "!" unary | "(" expression ")" | TASK ["." RESULT]

RESULT is one of Succeeded, Failed, Errored, Skipped, Omitted, Daemoned, AnySucceeded,
AllFailed. Whatever the logic, a task waits until every task its expression names has finished,
so the names are all a DAG needs; they come back in order of first appearance.

Parentheses may nest MAX_NESTING deep (real expressions nest two or three); a run of `!` is read
in a loop, however long, so no input can exhaust the parser's recursion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from dagpilot.core.echo import shown

RESULTS = frozenset({"Succeeded", "Failed", "Errored", "Skipped", "Omitted", "Daemoned",
                     "AnySucceeded", "AllFailed"})
MAX_NESTING = 100
_TOKEN = re.compile(r"\s*(?:(&&|\|\||!|\(|\))|([A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z]+)?))")


class DependsError(ValueError):
    """A `depends` expression that does not parse; the message says where."""


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    position: int
    is_name: bool


def referenced_tasks(expression: str) -> tuple[str, ...]:
    """The task names in a depends expression, in order of first appearance (empty: none)."""
    tokens = _tokenize(expression)
    if not tokens:
        return ()
    parser = _Parser(expression, tokens)
    parser.expression()
    if parser.index < len(tokens):
        parser.fail(f"unexpected {shown(tokens[parser.index].text)}")
    return tuple(dict.fromkeys(parser.names))


def _tokenize(expression: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(expression):
        if expression[position:].isspace():
            break
        match = _TOKEN.match(expression, position)
        if match is None:
            offset = len(expression) - len(expression[position:].lstrip())
            raise DependsError(f"unexpected character {expression[offset]!r} at position "
                               f"{offset} in {shown(expression)}")
        operator, name = match.group(1), match.group(2)
        start = match.start(1) if operator else match.start(2)
        tokens.append(_Token(operator or name, start, operator is None))
        position = match.end()
    return tokens


class _Parser:
    """Recursive descent over the tokens; collects the task names it meets."""

    def __init__(self, expression: str, tokens: list[_Token]) -> None:
        self.source = expression
        self.tokens = tokens
        self.index = 0
        self.depth = 0  # parentheses open around the current token
        self.names: list[str] = []

    def fail(self, message: str) -> NoReturn:
        position = self.tokens[self.index].position if self.index < len(self.tokens) else len(
            self.source)
        raise DependsError(f"{message} at position {position} in {shown(self.source)}")

    def peek(self) -> str | None:
        return self.tokens[self.index].text if self.index < len(self.tokens) else None

    def expression(self) -> None:
        self.conjunction()
        while self.peek() == "||":
            self.index += 1
            self.conjunction()

    def conjunction(self) -> None:
        self.unary()
        while self.peek() == "&&":
            self.index += 1
            self.unary()

    def unary(self) -> None:
        while self.peek() == "!":  # a loop, not a recursion: `!!!!A` may be any length
            self.index += 1
        if self.index >= len(self.tokens):
            self.fail("expected a task name")
        token = self.tokens[self.index]
        self.index += 1
        if token.text == "(":
            if self.depth >= MAX_NESTING:
                self.index -= 1
                self.fail(f"parentheses nested deeper than {MAX_NESTING}")
            self.depth += 1
            self.expression()
            if self.peek() != ")":
                self.fail("expected ')'")
            self.index += 1
            self.depth -= 1
        elif token.is_name:
            self.names.append(self._task(token))
        else:
            self.index -= 1
            self.fail(f"expected a task name, got {shown(token.text)}")

    def _task(self, token: _Token) -> str:
        task, _, result = token.text.partition(".")
        if result and result not in RESULTS:
            raise DependsError(f"unknown task result {shown(result)} at position "
                               f"{token.position} in {shown(self.source)}; known: "
                               f"{', '.join(sorted(RESULTS))}")
        return task

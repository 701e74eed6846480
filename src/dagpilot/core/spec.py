"""`KIND:ARGUMENT` specs for workloads and clusters (DESIGN.md section 7)."""

from __future__ import annotations

from collections.abc import Iterable

from dagpilot.core.errors import SpecError


def split_spec(spec: str, kinds: Iterable[str]) -> tuple[str, str]:
    """(kind, argument) of a spec, or a SpecError naming the kinds that exist."""
    known = sorted(kinds)
    kind, sep, argument = spec.partition(":")
    if not sep or not argument:
        raise SpecError(spec, f"expected KIND:ARGUMENT with KIND one of {', '.join(known)}")
    if kind not in known:
        raise SpecError(spec, f"unknown kind {kind!r}; known: {', '.join(known)}")
    return kind, argument

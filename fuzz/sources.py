"""Where seed inputs come from, named by a source string, so a saved fixture can say which real
file it sat beside without copying it.

    fixtures:REL        tests/fixtures/REL
    traces:REL          ../shared/traces/REL (read at run time, never copied into the repository)
    models:REL          models/REL, the shipped model versions
    repo:REL            any other file of the repository (configs/*.toml)
    generated:NAME      built here (GENERATED), e.g. every setting at its default as TOML

A source may end in derivations that cut a large real file down to a seed of a few kB:
`|head=N` keeps the first N lines, `|json-window=S+K` keeps the first K entries of the top-level
container and entries S..S+K-1 of each container below it (deeper levels whole). A gzipped file
is read decompressed: wrapping in gzip is a mutation of its own.
"""

from __future__ import annotations

import gzip
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
TRACES = REPO.parent / "shared" / "traces"
MODELS = REPO / "models"
FUZZ_FIXTURES = FIXTURES / "fuzz"
ROOTS = {"fixtures": FIXTURES, "traces": TRACES, "models": MODELS, "repo": REPO}


def resolve(source: str) -> bytes:
    """The bytes a source string names, derivations applied."""
    base, *derivations = source.split("|")
    data = _base(base)
    for derivation in derivations:
        name, _, argument = derivation.partition("=")
        data = DERIVATIONS[name](data, argument)
    return data


def path_of(source: str) -> Path | None:
    """The file a source reads, or None for a generated one."""
    root, _, relative = source.split("|", maxsplit=1)[0].partition(":")
    return ROOTS[root] / relative if root in ROOTS else None


def _base(base: str) -> bytes:
    root, _, relative = base.partition(":")
    if root == "generated":
        return GENERATED[relative]()
    data = (ROOTS[root] / relative).read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _head(data: bytes, argument: str) -> bytes:
    return b"".join(data.splitlines(keepends=True)[:int(argument)])


def _json_window(data: bytes, argument: str) -> bytes:
    start, _, count = argument.partition("+")
    return json.dumps(_window(json.loads(data), int(start), int(count), 0), indent=1).encode()


def _window(value: Any, start: int, count: int, depth: int) -> Any:
    if depth > 1 or not isinstance(value, dict | list):
        return value
    first = 0 if depth == 0 else start
    if isinstance(value, dict):
        items = list(value.items())[first:first + count]
        return {key: _window(item, start, count, depth + 1) for key, item in items}
    return [_window(item, start, count, depth + 1) for item in value[first:first + count]]


def _default_settings() -> bytes:
    """Every setting at its default, as a TOML file: the settings seed that covers every field."""
    import dataclasses  # noqa: PLC0415

    from dagpilot.core.config import Settings  # noqa: PLC0415  (dagpilot only where needed)

    lines: list[str] = []

    def table(value: Any, prefix: str) -> None:
        scalars = [f for f in dataclasses.fields(value)
                   if not dataclasses.is_dataclass(getattr(value, f.name))]
        if prefix and scalars:
            lines.append(f"[{prefix}]")
        lines.extend(f"{f.name} = {_toml_scalar(getattr(value, f.name))}" for f in scalars)
        for f in dataclasses.fields(value):
            if dataclasses.is_dataclass(getattr(value, f.name)):
                table(getattr(value, f.name), f"{prefix}.{f.name}".lstrip("."))

    table(Settings(), "")
    return ("\n".join(lines) + "\n").encode()


def _toml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and abs(value) == float("inf"):
        return "inf" if value > 0 else "-inf"
    return json.dumps(value)


def _normaliser_npz() -> bytes:
    """A small normaliser archive (the registry serves normaliser.npz as well as .json)."""
    import numpy as np  # noqa: PLC0415

    buffer = io.BytesIO()
    np.savez_compressed(buffer, node_mean=np.zeros(4), node_std=np.ones(4),
                        task_mean=np.arange(3.0), task_std=np.full(3, 2.0))
    return buffer.getvalue()


DERIVATIONS: dict[str, Callable[[bytes, str], bytes]] = {
    "head": _head,
    "json-window": _json_window,
}
GENERATED: dict[str, Callable[[], bytes]] = {
    "settings-defaults": _default_settings,
    "normaliser-npz": _normaliser_npz,
}

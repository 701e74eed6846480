"""Seeds, the cases made from them, and how a case is laid out as files for a target to read."""

from __future__ import annotations

import functools
import gzip
import shutil
from dataclasses import dataclass
from pathlib import Path

from fuzz import sources

Companions = tuple[tuple[str, str], ...]  # (path relative to the case folder, source string)

BOMB_MEMBER_BYTES = 16 << 20  # each member of a gzip bomb expands to this many spaces


@dataclass(frozen=True)
class Seed:
    """One seed input of a target: its bytes (a source string), the file name it is read under,
    its syntax (which structure-aware mutations apply) and the files it needs beside it."""

    source: str
    name: str
    syntax: str  # json | yaml | csv | toml | zip | text
    companions: Companions = ()

    def data(self) -> bytes:
        return _resolved(self.source)


@dataclass(frozen=True)
class Case:
    """One input to run: the (mutated) payload, wrapped as `wrap` says, placed at `name`.

    wrap: "" (as is), "gzip", "gzip-truncated" (the gzip stream cut short) or "bomb:N" (the
    payload followed by N gzip members of 16 MiB of spaces each: kB on disk, N x 16 MiB read).
    """

    payload: bytes
    name: str
    wrap: str = ""
    companions: Companions = ()

    @property
    def file_name(self) -> str:
        return self.name + ".gz" if self.wrap else self.name

    def with_payload(self, payload: bytes) -> Case:
        return Case(payload, self.name, self.wrap, self.companions)


def materialise(case: Case, folder: Path) -> Path:
    """Write the case (and its companions) into an emptied `folder`; the path of its file."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for relative, source in case.companions:
        companion = folder / relative
        companion.parent.mkdir(parents=True, exist_ok=True)
        companion.write_bytes(_resolved(source))
    path = folder / case.file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(wrapped(case.payload, case.wrap))
    return path


def wrapped(payload: bytes, wrap: str) -> bytes:
    if not wrap:
        return payload
    compressed = gzip.compress(payload, compresslevel=6, mtime=0)
    if wrap == "gzip":
        return compressed
    if wrap == "gzip-truncated":
        return compressed[:max(2, len(compressed) * 2 // 3)]
    kind, _, members = wrap.partition(":")
    if kind != "bomb":
        raise ValueError(f"unknown wrap {wrap!r}")
    return compressed + _bomb_member() * int(members)


@functools.cache
def _bomb_member() -> bytes:
    return gzip.compress(b" " * BOMB_MEMBER_BYTES, compresslevel=9, mtime=0)


@functools.lru_cache(maxsize=64)
def _resolved(source: str) -> bytes:
    return sources.resolve(source)

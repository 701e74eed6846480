"""One mutation of a seed: a few stacked operations, structure-aware or on bytes, and a wrap.

Every choice is drawn from the `random.Random` passed in; `case_rng(run_seed, target, index)`
seeds one per case, so case N of a run is reproducible on its own.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from fuzz import hostile, structured
from fuzz.inputs import Case, Seed

MAX_PAYLOAD = 8 << 20
INTERESTING = (b"\x00", b"\xff", b"\x7f", b"\x80", b'"', b"\\", b"\n", b"\r\n", b",", b":",
               b"{", b"[", b"-", b"\xef\xbb\xbf", b"\xc3\x28", b"\\u0000", b"\t", b"#", b"&", b"*")
_NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
TEXT_SYNTAX = {"json": "json", "yaml": "yaml", "csv": "csv", "toml": "toml"}


def case_rng(run_seed: int, target: str, index: int) -> random.Random:
    return random.Random(f"{run_seed}/{target}/{index}")


def mutate(seed: Seed, seeds: Sequence[Seed], accepts_gzip: bool,
           rng: random.Random) -> tuple[Case, list[str]]:
    """A case made from `seed` (others of the target may be spliced in) and what was done."""
    data, done = seed.data(), []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        data, name = _one(data, seed, seeds, rng)
        done.append(name)
    if len(data) > MAX_PAYLOAD:
        data, done = data[:MAX_PAYLOAD], [*done, "cut to the size cap"]
    wrap = _wrap(rng) if accepts_gzip else ""
    if wrap:
        done.append(wrap)
    return Case(data, seed.name, wrap, seed.companions), done


def _one(data: bytes, seed: Seed, seeds: Sequence[Seed],
         rng: random.Random) -> tuple[bytes, str]:
    if rng.random() < 0.65:
        result = structured.mutate(data, seed.syntax, rng)
        if result is not None:
            return result
    if rng.random() < 0.1:
        return _splice(data, rng.choice(seeds).data(), rng), "splice"
    operation = rng.choice(BYTE_OPERATIONS)
    return operation(data, rng), operation.__name__.lstrip("_").replace("_", "-")


def _wrap(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        return "gzip"
    if roll < 0.18:
        return "gzip-truncated"
    if roll < 0.20:
        return f"bomb:{rng.choice((4, 64, 320))}"
    return ""


def _flip_bit(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\x00"
    out = bytearray(data)
    out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _set_bytes(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(INTERESTING) + data[at + 1:]


def _insert_bytes(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    chunk = rng.choice(INTERESTING) * rng.choice((1, 2, 16, 1000))
    return data[:at] + chunk + data[at:]


def _delete_chunk(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 2:
        return b""
    start = rng.randrange(len(data))
    return data[:start] + data[start + rng.randrange(1, min(len(data) - start, 256) + 1):]


def _duplicate_chunk(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    start = rng.randrange(len(data))
    chunk = data[start:start + rng.randrange(1, 512)]
    return data[:start] + chunk * rng.choice((2, 3, 100)) + data[start:]


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def _splice(data: bytes, other: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]


def _delete_line(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if lines:
        del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def _duplicate_line(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if lines:
        at = rng.randrange(len(lines))
        lines[at:at] = [lines[at]] * rng.choice((1, 2, 1000))
    return b"".join(lines)


def _swap_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if len(lines) > 1:
        a, b = rng.sample(range(len(lines)), 2)
        lines[a], lines[b] = lines[b], lines[a]
    return b"".join(lines)


def _number_token(data: bytes, rng: random.Random) -> bytes:
    """A number found in the raw text replaced by a hostile one (JSON spelling)."""
    found = list(_NUMBER.finditer(data))
    if not found:
        return _insert_bytes(data, rng)
    match = rng.choice(found)
    token = rng.choice(hostile.NUMBERS["json"] + hostile.NUMBERS["yaml"]).encode()
    return data[:match.start()] + token + data[match.end():]


BYTE_OPERATIONS: tuple[Callable[[bytes, random.Random], bytes], ...] = (
    _flip_bit, _set_bytes, _insert_bytes, _delete_chunk, _duplicate_chunk, _truncate,
    _delete_line, _duplicate_line, _swap_lines, _number_token, _number_token)

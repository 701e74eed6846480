"""Structure-aware mutations: parse the seed, change one place in it, write it back.

JSON, YAML and TOML documents become a tree; one node is replaced by a placeholder string,
the tree is written back, and the placeholder's text is replaced by a raw token (NaN, a
5,000-digit integer, 100,000 nested brackets, a YAML alias bomb), which no serialiser would
write itself. CSV works on rows and columns; zip (npz) on its headers. Each function returns
None when the seed does not parse in its syntax, and the caller falls back to byte mutations.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import struct
import tomllib
from collections.abc import Callable
from typing import Any

import yaml

from fuzz import hostile

PLACEHOLDER = "zzfuzzplaceholderzz"
MAX_LIST = 100_000
MAX_NODES = 200_000
MAX_PARSED = {"json": 4 << 20, "yaml": 256 << 10, "toml": 256 << 10}  # larger: bytes only


def mutate(data: bytes, syntax: str, rng: random.Random) -> tuple[bytes, str] | None:
    """One structure-aware mutation of `data`, with its name; None when it does not parse."""
    if syntax == "csv":
        return _csv(data, rng)
    if syntax == "zip":
        return _zip(data, rng)
    if syntax not in _READERS or len(data) > MAX_PARSED[syntax]:
        return None
    try:
        tree = _READERS[syntax](data)
        nodes = list(_walk(tree, ()))
        result = rng.choice(_tree_operations(syntax))(tree, nodes, syntax, rng)
        if result is None:
            return None
        tree, raw, name = result
        text = _WRITERS[syntax](tree)
    except Exception:  # it does not parse (or is too deep to write back): byte mutations only
        return None
    if raw:
        quoted = json.dumps(PLACEHOLDER) if syntax in ("json", "toml") else PLACEHOLDER
        text = text.replace(quoted, raw, 1)
    return text.encode("utf-8", "surrogatepass"), name


# --- trees (JSON, YAML, TOML) -------------------------------------------------------------

Path = tuple[Any, ...]
Nodes = list[tuple[Path, Any]]
TreeOperation = Callable[[Any, Nodes, str, random.Random], tuple[Any, str, str] | None]


def _walk(tree: Any, path: Path) -> Any:
    """Every node with its path, depth first; each container once (YAML aliases can make a
    document refer to itself), at most MAX_NODES of them."""
    stack, seen, count = [(path, tree)], set(), 0
    while stack and count < MAX_NODES:
        path, value = stack.pop()
        count += 1
        yield path, value
        if isinstance(value, dict | list) and id(value) not in seen:
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(((*path, key), item) for key, item in reversed(list(items)))


def _replaced(tree: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    parent = tree
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return tree


def _hostile_token(value: Any, syntax: str, rng: random.Random) -> tuple[str, str]:
    """A raw token for a node: numbers where numbers were, else any hostile kind."""
    kinds = ["number", "string", "wrong-type", "deep"]
    if syntax == "yaml":
        kinds.append("alias")
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    kind = "number" if is_number and rng.random() < 0.6 else rng.choice(kinds)
    if kind == "number":
        return rng.choice(hostile.NUMBERS[syntax]), kind
    if kind == "string":
        return hostile.string_token(syntax, rng.choice(hostile.STRINGS)), kind
    if kind == "wrong-type":
        return rng.choice(hostile.WRONG_TYPES[syntax]), kind
    if kind == "alias":
        return rng.choice(hostile.YAML_ALIASES), kind
    object_kind = "object" if syntax == "json" and rng.random() < 0.5 else "list"
    return hostile.deep_token(rng.choice(hostile.DEPTHS), object_kind), kind


def _replace_node(tree: Any, nodes: Nodes, syntax: str,
                  rng: random.Random) -> tuple[Any, str, str] | None:
    leaves = [node for node in nodes if node[0] and not isinstance(node[1], dict | list)]
    path, value = rng.choice(leaves or nodes)
    if not path:
        return None
    raw, kind = _hostile_token(value, syntax, rng)
    return _replaced(tree, path, PLACEHOLDER), raw, f"{kind} at {_shown(path)}"


def _drop_key(tree: Any, nodes: Nodes, syntax: str,
              rng: random.Random) -> tuple[Any, str, str] | None:
    keyed = [path for path, _ in nodes if path and isinstance(path[-1], str)]
    if not keyed:
        return None
    path = rng.choice(keyed)
    parent = tree
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return tree, "", f"drop {_shown(path)}"  # no placeholder: nothing to substitute


def _duplicate_key(tree: Any, nodes: Nodes, syntax: str,
                   rng: random.Random) -> tuple[Any, str, str] | None:
    """A mapping written as flow text with one key twice, the second value hostile."""
    mappings = [(path, value) for path, value in nodes if path and isinstance(value, dict)
                and value]
    if syntax == "toml" or not mappings:
        return None
    path, mapping = rng.choice(mappings)
    key = rng.choice(list(mapping))
    raw, _ = _hostile_token(mapping[key], syntax, rng)
    items = [f"{json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in mapping.items()]
    text = "{" + ", ".join([*items, f"{json.dumps(key)}: {raw}"]) + "}"
    return _replaced(tree, path, PLACEHOLDER), text, f"duplicate key {key!r} at {_shown(path)}"


def _huge_list(tree: Any, nodes: Nodes, syntax: str,
               rng: random.Random) -> tuple[Any, str, str] | None:
    lists = [(path, value) for path, value in nodes if isinstance(value, list) and value]
    if not lists:
        return None
    path, value = rng.choice(lists)
    count = rng.choice((1_000, 10_000, MAX_LIST))
    item = json.dumps(rng.choice(value), default=str)
    if len(item) * count > 4 << 20:
        count = max(2, (4 << 20) // max(1, len(item)))
    raw = "[" + ", ".join([item] * count) + "]"
    return _replaced(tree, path, PLACEHOLDER), raw, f"{count} copies in {_shown(path)}"


def _copy_subtree(tree: Any, nodes: Nodes, syntax: str,
                  rng: random.Random) -> tuple[Any, str, str] | None:
    """Another node's value in this node's place: realistic structure, wrong place."""
    if syntax == "toml" or len(nodes) < 2:
        return None
    (path, _), (source, value) = rng.sample(nodes, 2)
    if not path:
        return None
    raw = json.dumps(value, default=str)
    return _replaced(tree, path, PLACEHOLDER), raw, f"copy {_shown(source)} to {_shown(path)}"


def _scale_number(tree: Any, nodes: Nodes, syntax: str,
                  rng: random.Random) -> tuple[Any, str, str] | None:
    numbers = [(path, value) for path, value in nodes if path and isinstance(value, int | float)
               and not isinstance(value, bool)]
    if not numbers:
        return None
    path, value = rng.choice(numbers)
    factor = rng.choice((-1, 1_000_000, 1e-9, 10**12))
    scaled = value * factor
    raw = repr(float(scaled)) if isinstance(scaled, float) else str(scaled)
    if syntax == "toml" and raw in ("inf", "-inf", "nan"):
        return None
    return _replaced(tree, path, PLACEHOLDER), raw, f"x{factor} at {_shown(path)}"


def _tree_operations(syntax: str) -> list[TreeOperation]:
    del syntax  # every operation declines (None) what its syntax cannot express
    return [_replace_node] * 6 + [_drop_key, _duplicate_key, _huge_list, _copy_subtree,
                                  _scale_number, _scale_number]


def _shown(path: Path) -> str:
    return "$" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)


def _toml_text(tree: dict[str, Any]) -> str:
    """A TOML writer for what settings files hold: tables of scalars and arrays."""
    lines: list[str] = []

    def table(value: dict[str, Any], prefix: str) -> None:
        scalars = {k: v for k, v in value.items() if not isinstance(v, dict)}
        if prefix and (scalars or not value):
            lines.append(f"[{prefix}]")
        lines.extend(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in scalars.items())
        for key, item in value.items():
            if isinstance(item, dict):
                table(item, f"{prefix}.{json.dumps(key)}" if prefix else json.dumps(key))

    table(tree, "")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    return json.dumps(str(value))


# libyaml's safe loader and dumper where PyYAML has them: the same documents, much faster
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_READERS: dict[str, Callable[[bytes], Any]] = {
    "json": json.loads,
    "yaml": lambda data: yaml.load(data.decode("utf-8"), Loader=_YAML_LOADER),
    "toml": lambda data: tomllib.loads(data.decode("utf-8")),
}
_WRITERS: dict[str, Callable[[Any], str]] = {
    "json": lambda tree: json.dumps(tree, indent=1, default=str),
    "yaml": lambda tree: yaml.dump(tree, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True,
                                   width=4096),
    "toml": _toml_text,
}


# --- CSV ----------------------------------------------------------------------------------

def _csv(data: bytes, rng: random.Random) -> tuple[bytes, str] | None:
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    except (UnicodeDecodeError, csv.Error):
        return None
    if len(rows) < 2 or not rows[0]:
        return None
    name = rng.choice(list(_CSV_OPERATIONS))
    rows = _CSV_OPERATIONS[name](rows, rng)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode("utf-8", "surrogatepass"), f"csv {name}"


def _csv_cell(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    row = rng.randrange(1, len(rows))
    if rows[row]:
        pool = hostile.NUMBERS["csv"] if rng.random() < 0.7 else hostile.STRINGS
        rows[row][rng.randrange(len(rows[row]))] = rng.choice(pool)
    return rows


def _csv_column(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    """One column's every value hostile (a whole column of NaN, -1, or 1e400)."""
    column = rng.randrange(len(rows[0]))
    value = rng.choice(hostile.NUMBERS["csv"])
    for row in rows[1:]:
        if column < len(row):
            row[column] = value
    return rows


def _csv_drop_column(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    column = rng.randrange(len(rows[0]))
    return [row[:column] + row[column + 1:] for row in rows]


def _csv_duplicate_column(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    column = rng.randrange(len(rows[0]))
    return [[*row, row[column]] if column < len(row) else row for row in rows]


def _csv_short_row(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    row = rng.randrange(1, len(rows))
    rows[row] = rows[row][:rng.randrange(len(rows[row]) + 1)]
    return rows


def _csv_long_row(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    row = rng.randrange(len(rows))
    rows[row] = rows[row] + ["x"] * rng.choice((1, 3, 1000))
    return rows


def _csv_repeat_rows(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    row = rows[rng.randrange(1, len(rows))]
    width = sum(len(cell) + 1 for cell in row) + 1
    count = min(rng.choice((1_000, 20_000, 200_000)), (2 << 20) // width)
    return [*rows, *([row] * count)]


def _csv_rename_header(rows: list[list[str]], rng: random.Random) -> list[list[str]]:
    column = rng.randrange(len(rows[0]))
    rows[0][column] = rng.choice(["", " ", rows[0][rng.randrange(len(rows[0]))],
                                  rows[0][column].upper(), "\ufeff" + rows[0][column]])
    return rows


_CSV_OPERATIONS: dict[str, Callable[[list[list[str]], random.Random], list[list[str]]]] = {
    "cell": _csv_cell,
    "cell ": _csv_cell,  # twice as likely as the others
    "column": _csv_column,
    "drop-column": _csv_drop_column,
    "duplicate-column": _csv_duplicate_column,
    "short-row": _csv_short_row,
    "long-row": _csv_long_row,
    "repeat-rows": _csv_repeat_rows,
    "rename-header": _csv_rename_header,
}


# --- zip (npz) ----------------------------------------------------------------------------

_LOCAL = b"PK\x03\x04"
_CENTRAL = b"PK\x01\x02"


def _zip(data: bytes, rng: random.Random) -> tuple[bytes, str] | None:
    """A header field of one member changed: compression method, sizes, or its data."""
    headers = [(i, 8) for i in _offsets(data, _LOCAL)] + [(i, 10) for i in _offsets(data, _CENTRAL)]
    if not headers:
        return None
    start, method_at = rng.choice(headers)
    out = bytearray(data)
    choice = rng.randrange(3)
    if choice == 0:
        method = rng.choice((99, 12, 14, 0, 8, 1, 0xFFFF))
        out[start + method_at:start + method_at + 2] = struct.pack("<H", method)
        return bytes(out), f"zip method {method}"
    if choice == 1:
        size_at = start + (18 if method_at == 8 else 20) + rng.choice((0, 4))
        out[size_at:size_at + 4] = struct.pack("<I", rng.choice((0, 1, 0xFFFFFFFF, 1 << 30)))
        return bytes(out), "zip size"
    body = start + 30 + rng.randrange(64)
    if body < len(out):
        out[body] ^= 1 << rng.randrange(8)
    return bytes(out), "zip data bit"


def _offsets(data: bytes, marker: bytes) -> list[int]:
    found, at = [], data.find(marker)
    while at >= 0:
        found.append(at)
        at = data.find(marker, at + 1)
    return found

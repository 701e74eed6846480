"""The regression corpus: each failure found, minimised, saved under
tests/fixtures/fuzz/<target>/ as the input file plus a note (JSON) of what it triggered and how
to rebuild the case (file name, gzip wrap, companion files by source, never copied)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fuzz.inputs import Case
from fuzz.pool import Result

NOTE_SUFFIX = ".note"
MAX_FIXTURE_BYTES = 32 << 10  # larger after minimisation: reported, not saved


@dataclass(frozen=True)
class Saved:
    target: str
    case: Case
    note: dict[str, Any]
    path: Path


def save(folder: Path, target: str, case: Case, result: Result,
         found: dict[str, Any]) -> Path | None:
    """Write the case's payload and its note; None when it is too large to be a fixture."""
    if len(case.payload) > MAX_FIXTURE_BYTES:
        return None
    key = "|".join(result.signature).encode()
    stem = "-".join(part for part in (result.kind, "-".join(result.error_type.split()),
                                      hashlib.sha256(key).hexdigest()[:8]) if part)
    suffix = "".join(Path(case.name).suffixes) or ".input"
    folder = folder / target
    folder.mkdir(parents=True, exist_ok=True)
    payload = folder / f"{stem}{suffix}"
    payload.write_bytes(case.payload)
    note = {"target": target, "payload": payload.name, "name": case.name, "wrap": case.wrap,
            "companions": [list(pair) for pair in case.companions],
            "triggered": result.as_json(), "found": found}
    (folder / f"{stem}{NOTE_SUFFIX}").write_text(json.dumps(note, indent=1, ensure_ascii=True)
                                                 + "\n")
    return payload


def load(folder: Path) -> list[Saved]:
    saved = []
    for note_path in sorted(folder.glob(f"*/*{NOTE_SUFFIX}")):
        note = json.loads(note_path.read_text())
        payload = (note_path.parent / note["payload"]).read_bytes()
        companions = tuple((str(a), str(b)) for a, b in note["companions"])
        saved.append(Saved(note["target"], Case(payload, note["name"], note["wrap"], companions),
                           note, note_path))
    return saved

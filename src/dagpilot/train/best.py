"""The best checkpoint by the learning curve's evaluation, kept as `best/`.

The last iteration is not always the best: PPO can drift after a good checkpoint. Every
evaluated checkpoint (behaviour cloning's included, as iteration 0) is offered to `BestCheckpoint`,
which keeps the lowest evaluation ratio (the earlier on a tie; a ratio that is not a number
never beats a number). `write` copies that folder: the weights, normaliser and config byte for
byte, and metadata.json with `"selected": {"by": "eval_ratio", "iteration", "ratio"}`, into a
scratch folder renamed into place, so a crash never leaves half a `best/`.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

from dagpilot.train.export import METADATA


@dataclass(frozen=True)
class Selection:
    """The checkpoint `best/` is a copy of, and why."""

    folder: Path
    iteration: int
    ratio: float

    def to_json(self) -> dict[str, object]:
        return {"by": "eval_ratio", "iteration": self.iteration,
                "ratio": self.ratio if math.isfinite(self.ratio) else None}


class BestCheckpoint:
    def __init__(self) -> None:
        self.selected: Selection | None = None

    def offer(self, folder: Path, iteration: int, ratio: float) -> None:
        """Keep `folder` when its ratio is lower than the best so far."""
        if self.selected is None or _rank(ratio) < _rank(self.selected.ratio):
            self.selected = Selection(folder, iteration, ratio)

    def write(self, folder: Path) -> Path | None:
        """Copy the selected checkpoint to `folder` (replacing it); None when none was offered."""
        if self.selected is None:
            return None
        scratch = folder.with_name(f".{folder.name}.partial")
        if scratch.exists():
            shutil.rmtree(scratch)  # left by a crashed run
        scratch.mkdir(parents=True)
        for source in sorted(self.selected.folder.iterdir()):
            if source.name != METADATA:
                shutil.copyfile(source, scratch / source.name)
        metadata = json.loads((self.selected.folder / METADATA).read_text())
        metadata["selected"] = self.selected.to_json()
        # as export_model writes it
        (scratch / METADATA).write_text(json.dumps(metadata, indent=1, allow_nan=False))
        if folder.exists():
            shutil.rmtree(folder)
        scratch.rename(folder)
        return folder


def _rank(ratio: float) -> float:
    return ratio if math.isfinite(ratio) else math.inf

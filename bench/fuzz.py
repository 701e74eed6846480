"""The long-running fuzzer (issue 14): every target (or some), N mutations each.

    .venv/bin/python bench/fuzz.py --target all --mutations 2000 --seed 0 --out bench/out/fuzz
        [--save-fixtures] [--timeout 10] [--memory-mib 1024] [--replay]

Writes DIR/fuzz.json: per target the mutations, accepted inputs, clean errors, failures by kind
(exception, memory, hang, signal) and each distinct failure with an example. With
--save-fixtures each distinct failure is minimised and saved under tests/fixtures/fuzz/<target>/
(the regression corpus that tests/fuzz replays). The harness is the top-level package `fuzz/`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's fuzz/ package

from fuzz.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

"""A command's `--json` output: the document as indented JSON, written as it is.

Not rich's `print_json`, which lays the text out for a terminal: 23 s of CPU for the 1.8 MB
report of a validator run with many findings, against milliseconds for the writing itself.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")

"""TOML documents (settings, job pools), with every way `tomllib` can fail an `InvalidInput`
that names the file: bad encoding or syntax, nesting that recurses too deep, and integers
longer than Python converts (4,300 digits: a ValueError)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.files import read_file


def read_toml(path: Path | str, max_bytes: int, what: str) -> dict[str, Any]:
    """The TOML table in the regular file `path` (at most `max_bytes`); `what` names the kind of
    file in the messages ("settings", "a job pool")."""
    name = os.fspath(path)
    data = read_file(name, max_bytes)
    try:
        return tomllib.loads(data.decode())
    except UnicodeDecodeError as error:
        raise InvalidInput(name, "", "", f"cannot read {what}: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise InvalidInput(name, "", "", f"not valid TOML: {error}") from error
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise InvalidInput(name, "", "", f"nested too deep to be {what}") from None
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        raise InvalidInput(name, "", "", f"a number has too many digits to be {what}") from None

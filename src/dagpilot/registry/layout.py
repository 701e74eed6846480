"""Names and path rules of a model registry folder.

    ROOT/<version>/weights.pt         torch zip archive (torch.save), loaded with weights_only
    ROOT/<version>/normaliser.json    or normaliser.npz: the feature statistics
    ROOT/<version>/config.json        must carry feature_schema_version
    ROOT/<version>/metadata.json      training command, seed, data, commit, figures, publication
    ROOT/SHA256SUMS                   `sha256sum` lines for every file of every version
    ROOT/current -> <version>         relative symlink: the version in service
    ROOT/canary.json                  a topology canary's state (registry/canary.py), optional

Entries whose name starts with a dot are the registry's own scratch space (an interrupted
publish leaves `.publish-*`) and are never served, listed or checked.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from dagpilot.registry.errors import CannotCheck, RegistryError

SUMS = "SHA256SUMS"
CURRENT = "current"
CANARY = "canary.json"  # the canary's state (registry/canary.py): not a version, not summed
WEIGHTS = "weights.pt"
CONFIG = "config.json"
METADATA = "metadata.json"
NORMALISERS = ("normaliser.json", "normaliser.npz")
SCHEMA_KEY = "feature_schema_version"

# Below these sizes a file cannot be what its name says: torch.save of an empty dict is
# about 1.2 kB, "{}" is 2 bytes, an empty zip (npz) 22 bytes.
MIN_BYTES = {WEIGHTS: 512, CONFIG: 2, METADATA: 2, "normaliser.json": 2, "normaliser.npz": 22}

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")
_RESERVED = frozenset({SUMS, CURRENT, CANARY})


def is_valid_name(name: str) -> bool:
    """A version or file name: no separators, no leading dot, nothing `sha256sum` escapes."""
    return bool(_NAME.fullmatch(name)) and name not in _RESERVED


def check_version_name(version: str) -> str:
    if not is_valid_name(version):
        raise RegistryError(
            f"bad version name {version[:101]!r}: use letters, digits and . _ + - (at most 100, "
            f"not starting with a dot, not {' or '.join(sorted(_RESERVED))})")
    return version


def missing_required(names: set[str]) -> list[str]:
    """The required files a version with these file names lacks."""
    missing = [name for name in (WEIGHTS, CONFIG, METADATA) if name not in names]
    normalisers = [name for name in NORMALISERS if name in names]
    if not normalisers:
        missing.append(" or ".join(NORMALISERS))
    return missing


def extra_normalisers(names: set[str]) -> bool:
    """Both normaliser forms at once: which one would be served is ambiguous."""
    return all(name in names for name in NORMALISERS)


def version_dirs(root: Path) -> list[str]:
    """Names of the version folders under ROOT, sorted; scratch entries, files and symlinks
    (which would lead out of the registry) excluded."""
    try:
        if not root.is_dir():
            return []
        with os.scandir(root) as entries:
            return sorted(entry.name for entry in entries
                          if not entry.name.startswith(".") and entry.name not in _RESERVED
                          and entry.is_dir(follow_symlinks=False))
    except OSError as error:
        raise CannotCheck(str(root), f"cannot be read: {error.strerror or error}") from None


def is_version_folder(root: Path, version: str) -> bool:
    """ROOT/VERSION is a folder of the registry itself (a symlink to one is not)."""
    try:
        return stat.S_ISDIR(os.lstat(root / version).st_mode)
    except FileNotFoundError:
        return False
    except OSError as error:
        message = f"cannot be read: {error.strerror or error}"
        raise CannotCheck(str(root / version), message) from None


def sums_path(version: str, name: str) -> str:
    """The path of a file as SHA256SUMS writes it: relative to ROOT, forward slashes."""
    return f"{version}/{name}"

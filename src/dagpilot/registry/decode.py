"""What serving makes of each stored file's bytes: the one decoder that publish (before it
writes), `verify` and every load call, so that none of them can pass what another refuses.

    weights.pt        torch zip archive -> state dict, by torch.load(weights_only=True) only
    normaliser.npz    -> arrays (npz.py)
    *.json            -> a JSON object within the size and nesting limits; config.json with
                         an integer feature_schema_version
    anything else     the policy's business: its bytes, covered by their checksum
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.errors import CannotCheck
from dagpilot.registry.formats import check_size, check_torch_archive, json_object, schema_version
from dagpilot.registry.layout import CONFIG, WEIGHTS
from dagpilot.registry.npz import npz_arrays


def decode_file(file: str, name: str, data: bytes) -> Any:
    """The value serving loads from the file NAME (at FILE) holding DATA, or a refusal."""
    check_size(file, name, len(data))
    if name == WEIGHTS:
        return state_dict(file, data)
    if name == "normaliser.npz":
        return npz_arrays(file, data)
    if name.endswith(".json"):
        value = json_object(file, data)
        if name == CONFIG:
            schema_version(file, value)
        return value
    return data


def state_dict(file: str, data: bytes) -> Mapping[str, Any]:
    check_torch_archive(file, data)  # a legacy pickle never reaches torch
    try:
        # torch is the optional extra `torch` and slow to import: loaded only for weights
        import torch  # noqa: PLC0415
    except ImportError:
        raise CannotCheck(file, "cannot be loaded as serving loads it: torch is not installed "
                                "(the `torch` extra)") from None
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    # torch reports a bad archive through many exception types; every one is a refusal here
    except Exception as error:
        raise IntegrityError(file, "torch.load(weights_only=True) refused it: "
                                   f"{str(error)[:300]}") from None
    if not isinstance(state, dict) or not all(isinstance(key, str) for key in state):
        raise IntegrityError(file, "must hold a state dict: a dict keyed by parameter name")
    return MappingProxyType(state)

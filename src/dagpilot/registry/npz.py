"""normaliser.npz decoded as numpy writes it, or refused: stored or deflated `.npy` members of
plain dtypes, every size bounded before anything is decompressed or allocated.

`np.load` would raise whatever zipfile, zlib or the npy reader meet (NotImplementedError for an
unknown compression method, zlib.error for a corrupt deflate stream, MemoryError for a header
that claims a huge shape), so the archive is taken apart here, check by check.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
import zlib
from typing import Any

import numpy as np
from numpy.lib import format as npy

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.formats import CENTRAL_ENTRY, check_zip
from dagpilot.registry.limits import MAX_NPZ_ARRAY_BYTES, MAX_NPZ_MEMBERS

METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}  # what numpy writes
HEADER_READERS = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}


def npz_arrays(file: str, data: bytes) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays of an npz archive by name (without `.npy`), read-only."""
    check_zip(file, io.BytesIO(data), "an npz archive")
    if data.count(CENTRAL_ENTRY) > MAX_NPZ_MEMBERS:  # bounds what ZipFile would index first
        raise IntegrityError(file, f"more than {MAX_NPZ_MEMBERS} members: not a normaliser")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = _checked_members(file, archive.infolist())
            return {name: _array(file, name, archive.read(info))
                    for name, info in members.items()}
    # a damaged archive surfaces as any of these, whatever its checksum line says
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, struct.error,
            NotImplementedError, RuntimeError) as error:
        raise IntegrityError(file, f"not a readable npz archive: {error}") from None


def _checked_members(file: str, infos: list[zipfile.ZipInfo]) -> dict[str, zipfile.ZipInfo]:
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename.removesuffix(".npy")
        where = f"member {info.filename[:60]!r}"
        if not info.filename.endswith(".npy") or not name or name in members:
            raise IntegrityError(file, f"{where}: an npz holds distinct NAME.npy arrays only")
        if info.compress_type not in METHODS:
            raise IntegrityError(file, f"{where}: compression method {info.compress_type}; numpy "
                                       f"writes only {' or '.join(METHODS.values())}")
        if info.flag_bits & 0x1:
            raise IntegrityError(file, f"{where}: encrypted")
        members[name] = info
    total = sum(info.file_size for info in infos)  # zipfile never inflates past these sizes
    if total > MAX_NPZ_ARRAY_BYTES:
        raise IntegrityError(file, f"{total} bytes of arrays once decompressed, the limit is "
                                   f"{MAX_NPZ_ARRAY_BYTES}")
    return members


def _array(file: str, name: str, member: bytes) -> np.ndarray[Any, Any]:
    """One .npy member: its header must describe exactly the bytes that follow it."""
    where = f"array {name[:60]!r}"
    stream = io.BytesIO(member)
    version = npy.read_magic(stream)
    read_header = HEADER_READERS.get(version)
    if read_header is None:
        raise IntegrityError(file, f"{where}: npy format version {version}; only 1.0 and 2.0 "
                                   "are read")
    shape, fortran_order, dtype = read_header(stream)
    if dtype.hasobject:
        raise IntegrityError(file, f"{where}: dtype {dtype}: objects would need pickle, "
                                   "never allowed")
    count = math.prod(shape)
    body = len(member) - stream.tell()
    if any(size < 0 for size in shape) or count * dtype.itemsize != body or not dtype.itemsize:
        raise IntegrityError(file, f"{where}: the header says {shape} of {dtype}, but {body} "
                                   "bytes follow")
    array = np.frombuffer(member, dtype=dtype, count=count, offset=stream.tell())
    array = array.reshape(shape[::-1]).transpose() if fortran_order else array.reshape(shape)
    array.flags.writeable = False  # frombuffer of bytes is read-only already; say so anyway
    return array

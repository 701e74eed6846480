"""Just enough of the protobuf wire format to read the kubelet's PodResources replies.

A message is a run of (field number, wire type, value): varints (type 0), 64-bit (1),
length-delimited bytes (2: strings, nested messages, packed repeats) and 32-bit (5). Unknown
fields are skipped, as protobuf readers do, so newer kubelets' additions do no harm.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """Bytes that are not a protobuf message."""


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """The varint at offset, and the offset after it."""
    value, shift = 0, 0
    while offset < len(data) and shift < 64:
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, offset
        shift += 7
    raise WireError("truncated or overlong varint")


def fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each field: an int for numeric wire types, bytes otherwise."""
    offset = 0
    while offset < len(data):
        key, offset = read_varint(data, offset)
        number, wire_type = key >> 3, key & 7
        if wire_type == VARINT:
            value, offset = read_varint(data, offset)
            yield number, value
        elif wire_type == LENGTH_DELIMITED:
            length, offset = read_varint(data, offset)
            if offset + length > len(data):
                raise WireError(f"field {number}: {length} bytes announced, "
                                f"{len(data) - offset} left")
            yield number, data[offset:offset + length]
            offset += length
        elif wire_type in (FIXED64, FIXED32):
            width = 8 if wire_type == FIXED64 else 4
            if offset + width > len(data):
                raise WireError(f"field {number}: truncated fixed-width value")
            yield number, int.from_bytes(data[offset:offset + width], "little")
            offset += width
        else:
            raise WireError(f"field {number}: unsupported wire type {wire_type}")


def strings(data: bytes, number: int) -> list[str]:
    """Every value of a (repeated) string field."""
    return [value.decode() for n, value in fields(data) if n == number and isinstance(value, bytes)]


def messages(data: bytes, number: int) -> list[bytes]:
    """Every value of a (repeated) message field, still encoded."""
    return [value for n, value in fields(data) if n == number and isinstance(value, bytes)]

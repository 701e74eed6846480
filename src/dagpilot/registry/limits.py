"""The ceilings the registry enforces on what it reads, so that no stored file, however its
SHA256SUMS line was made, can exhaust memory, time or the stack of a serving process.

Each is far above what a dagpilot model holds (the shipped versions: weights 0.5 MB, JSON
files under 8 kB, nesting 4 levels) and is checked before the bytes are parsed.
"""

from __future__ import annotations

MAX_FILE_BYTES = 1 << 30  # any one file: it is read into memory whole, hashed, then parsed
MAX_SUMS_BYTES = 16 << 20  # SHA256SUMS: some 150,000 lines
MAX_JSON_BYTES = 4 << 20  # config.json, metadata.json, normaliser.json and any other *.json
MAX_JSON_DEPTH = 32  # nested arrays and objects; JSON parsers recurse once per level
MAX_WEIGHTS_MEMBERS = 100_000  # weights.pt's zip members: one per tensor storage, and 5 more
MAX_NPZ_MEMBERS = 256  # arrays in normaliser.npz
MAX_NPZ_ARRAY_BYTES = 256 << 20  # all of normaliser.npz's arrays together, once decompressed
MAX_SCHEMA_VERSION = 2**31 - 1  # feature_schema_version: a small count in practice

"""The ceilings on what a file may hold, checked before or while it is read (docs/DATA.md).

Each admits every shared trace with a wide margin and the largest upstream files we know of:
WfInstances and Argo manifests live in git repositories (GitHub refuses files over 100 MB);
the full Alibaba v2018 `batch_task` table is 125 MB as a tar.gz, about 1 GB as text (CSV
compresses about 10x). The largest shared JSON document is 6.6 MB (TPC-H, decompressed), the
largest CSV 28 MB (a CWS trace), the deepest nesting 13 levels (the WfFormat schema).
"""

from __future__ import annotations

MIB = 2**20

MAX_DOCUMENT_BYTES = 256 * MIB  # a JSON document, after decompression
# YAML costs 1-2 s of CPU per MiB to build (libyaml parses, Python resolves and constructs):
# a larger cap would let one file hold a reader for long. Argo manifests and cluster files are
# KiB; the API server refuses an object over etcd's 1.5 MiB, and 10,000 nodes listed one by one
# take about 1 MiB.
MAX_YAML_BYTES = 2 * MIB
MAX_TABLE_BYTES = 2048 * MIB  # a CSV table, after decompression; also any file the validator reads
# Gzip expands a file at most this many times, or to MAX_GZIP_FLOOR_BYTES for a small one: the
# shared traces expand at most 35x (a WfInstances Montage), CSV and JSON about 5-15x, while
# deflate reaches 1,032x on a bomb. Without it, a 1 MB file would fill memory with 1 GiB.
MAX_GZIP_RATIO = 50
MAX_GZIP_FLOOR_BYTES = 64 * MIB
MAX_NESTING_DEPTH = 100  # objects/lists (mappings/sequences) inside each other
MAX_ALIAS_NODES = 100_000  # the nodes YAML aliases may add to one file, once expanded


def size_text(count: int) -> str:
    """A byte count as people read ceilings: `256 MiB`, or the bytes when under 1 MiB."""
    return f"{count / MIB:.4g} MiB" if count >= MIB else f"{count} bytes"

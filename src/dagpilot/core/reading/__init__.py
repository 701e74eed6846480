"""Reading files from outside: bytes, gzip, JSON, YAML and folder listings, each bounded.

Every reader of trace, cluster and manifest files goes through here, so that one set of limits
(`limits`) holds everywhere: regular files only, opened once, size, decompressed size and nesting
depth capped, YAML aliases bounded, and every OS error an `InvalidInput` naming the path.
"""

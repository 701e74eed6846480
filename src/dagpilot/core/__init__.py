"""The leaf layer: value types, statuses, errors and settings (stdlib and numpy only)."""

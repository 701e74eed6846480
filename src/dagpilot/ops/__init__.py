"""Operator tools: `dagpilot ops ...` (docs/OPERATION_GUIDE.md, docs/LIVE.md)."""

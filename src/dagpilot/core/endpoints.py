"""What an HTTP endpoint of a dagpilot server promises, for docs/API_REFERENCE.md.

The servers use the standard library's HTTP server (the webhook and the extender need the
verified client certificate), so there is no framework to derive an OpenAPI document from:
each server module keeps a small table of Endpoints beside its handlers, a test checks the
table against the routes the server really answers, and `dagpilot docs api-reference`
renders the tables (and docs/openapi.json) from them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Endpoint:
    method: str  # upper case: GET, POST
    path: str
    summary: str
    request: str  # the body it takes ("" for none), in words
    responses: tuple[tuple[int, str], ...]  # (status, when and what)

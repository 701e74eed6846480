"""What a failed binding POST means (serve/binder.classify), from the API server's answer:
a refusal (4xx, 429 aside) is not asked again, anything that may pass is retried; the Event
recorder reads the same rule (KubeApiError.refused)."""

from __future__ import annotations

import pytest

from dagpilot.live.errors import KubeApiError
from dagpilot.serve.binder import CONFLICT, GONE, REFUSED, RETRY, classify


@pytest.mark.parametrize(("status", "result"), [
    (404, GONE), (409, CONFLICT), (403, REFUSED), (422, REFUSED), (400, REFUSED),
    (429, RETRY), (500, RETRY), (503, RETRY), (None, RETRY)])
def test_a_failed_bind_is_classified_by_its_status(status: int | None, result: str) -> None:
    error = KubeApiError("test", f"HTTP {status}", status)
    assert classify(error) == result
    assert error.refused == (result in (GONE, CONFLICT, REFUSED))

"""The X-Workflow-Signature header: strict parsing, the MAC over `t.body`, constant time."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from dagpilot.serve import signature
from dagpilot.serve.signature import BadSignature

SECRET = b"k" * 32
BODY = b"kind: Workflow\n"


def test_the_mac_is_hmac_sha256_over_t_dot_body() -> None:
    header = signature.header(SECRET, "k1", BODY, 1_700_000_000)
    expected = hmac.new(SECRET, b"1700000000." + BODY, hashlib.sha256).hexdigest()
    assert header == f"t=1700000000,kid=k1,v1={expected}"
    parsed = signature.parse(header)
    assert (parsed.timestamp, parsed.key_id, parsed.digest) == (1_700_000_000, "k1", expected)
    assert signature.matches(SECRET, parsed, BODY)


@pytest.mark.parametrize("body", [BODY[:-1], BODY + b" ", b"", BODY.replace(b"W", b"w")])
def test_any_other_body_does_not_match(body: bytes) -> None:
    parsed = signature.parse(signature.header(SECRET, "k1", BODY, 17))
    assert not signature.matches(SECRET, parsed, body)


def test_the_timestamp_is_signed_as_sent() -> None:
    digest = signature.digest(SECRET, "17", BODY)
    assert signature.matches(SECRET, signature.parse(f"t=17,kid=a,v1={digest}"), BODY)
    assert not signature.matches(SECRET, signature.parse(f"t=017,kid=a,v1={digest}"), BODY)


def test_the_digest_comparison_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []

    def compare(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return a == b
    monkeypatch.setattr(signature.hmac, "compare_digest", compare)
    parsed = signature.parse(signature.header(SECRET, "k1", BODY, 17))
    assert signature.matches(SECRET, parsed, BODY)
    assert calls == [(parsed.digest.encode(), parsed.digest.encode())]


def test_upper_case_hex_is_read_as_lower_case() -> None:
    digest = signature.digest(SECRET, "5", BODY)
    assert signature.parse(f"t=5, kid=a, v1={digest.upper()}").digest == digest


GOOD = "a" * 64


@pytest.mark.parametrize(("header", "words"), [
    (None, "no X-Workflow-Signature"),
    ("", "no X-Workflow-Signature"),
    ("t=1,kid=a", "lacks v1"),
    (f"t=1,kid=a,v1={GOOD},v0={GOOD}", "nothing else"),
    (f"t=1,kid=a,v1={GOOD},v1={GOOD}", "names v1 twice"),
    (f"t=1,kid=a,v1={GOOD},t=2", "names t twice"),
    (f"t=-1,kid=a,v1={GOOD}", "unix seconds"),
    (f"t=1e9,kid=a,v1={GOOD}", "unix seconds"),
    (f"t=1234567890123,kid=a,v1={GOOD}", "unix seconds"),
    (f"t=١٢,kid=a,v1={GOOD}", "unix seconds"),
    (f"t=1,kid=,v1={GOOD}", "kid"),
    (f"t=1,kid=a b,v1={GOOD}", "kid"),
    (f"t=1,kid={'a' * 65},v1={GOOD}", "kid"),
    ("t=1,kid=a,v1=abc", "64 hex"),
    (f"t=1,kid=a,v1={'g' * 64}", "64 hex"),
    (f"t=1,kid=a,v1={GOOD}{'0' * 200}", "longer than"),
    ("garbage", "nothing else"),
])
def test_malformed_headers_are_refused(header: str | None, words: str) -> None:
    with pytest.raises(BadSignature, match=words):
        signature.parse(header)

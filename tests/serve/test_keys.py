"""The key file: each key at most 24 h, overlapping keys during a rotation, a Secret as well,
every mistake named by key and field."""

from __future__ import annotations

import base64
import datetime

import pytest
import yaml

from dagpilot.core.errors import InvalidInput
from dagpilot.serve.keys import parse_keys
from tests.serve.helpers import HOUR, NOW, key

SECRET = base64.b64encode(b"s" * 32).decode()


def keys_yaml(*entries: dict[str, object]) -> bytes:
    return yaml.safe_dump({"keys": list(entries)}).encode()


def entry(**fields: object) -> dict[str, object]:
    return {"id": "k1", "secret": SECRET, "notBefore": "2026-12-01T00:00:00Z",
            "notAfter": "2026-12-01T23:00:00Z", **fields}


def test_a_rotation_overlaps_and_the_newest_valid_key_signs() -> None:
    old, new = key("old", NOW - 20 * HOUR, 24), key("new", NOW - HOUR, 24)
    ring = parse_keys(keys_yaml(old.entry(), new.entry()), "keys.yaml")
    assert [k.key_id for k in ring.keys] == ["old", "new"]
    now = NOW.timestamp()
    assert ring.find("old").valid_at(now) and ring.find("new").valid_at(now)
    assert ring.newest_valid(now).key_id == "new"
    assert ring.newest_valid((NOW - 2 * HOUR).timestamp()).key_id == "old"
    assert ring.newest_valid((NOW + 30 * HOUR).timestamp()) is None
    assert ring.find("nope") is None
    assert ring.find("new").secret == new.secret


def test_unquoted_yaml_timestamps_and_offsets_are_read() -> None:
    text = (f"keys:\n- id: k1\n  secret: {SECRET}\n  notBefore: 2026-12-01T00:00:00Z\n"
            "  notAfter: 2026-12-01T20:00:00+02:00\n").encode()
    [signing] = parse_keys(text, "keys.yaml").keys
    assert signing.not_after - signing.not_before == datetime.timedelta(hours=18)


def test_the_secret_never_shows_in_a_repr() -> None:
    [signing] = parse_keys(keys_yaml(entry()), "keys.yaml").keys
    assert SECRET not in repr(signing) and "sss" not in repr(signing)


def test_a_kubernetes_secret_holding_keys_yaml_is_read() -> None:
    inner = keys_yaml(entry()).decode()
    string_data = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "k"},
                   "stringData": {"keys.yaml": inner}}
    data = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "k"},
            "data": {"keys.yaml": base64.b64encode(inner.encode()).decode()}}
    for secret in (string_data, data):
        ring = parse_keys(yaml.safe_dump(secret).encode(), "secret.yaml")
        assert [k.key_id for k in ring.keys] == ["k1"]


@pytest.mark.parametrize(("fields", "record", "field", "words"), [
    ({"notAfter": "2026-12-02T00:00:01Z"}, "keys[0] (k1)", "notAfter", "at most 24 h"),
    ({"notAfter": "2026-12-01T00:00:00Z"}, "keys[0] (k1)", "notAfter", "later than notBefore"),
    ({"notBefore": "2026-12-01T00:00:00"}, "keys[0] (k1)", "notBefore", "time zone"),
    ({"notBefore": "yesterday"}, "keys[0] (k1)", "notBefore", "RFC 3339"),
    ({"notBefore": 1700000000}, "keys[0] (k1)", "notBefore", "RFC 3339"),
    ({"secret": base64.b64encode(b"short").decode()}, "keys[0] (k1)", "secret", "at least 32"),
    ({"secret": "not base64!"}, "keys[0] (k1)", "secret", "not base64"),
    ({"secret": 12}, "keys[0] (k1)", "secret", "base64 text"),
    ({"id": "a b"}, "keys[0]", "id", "letters, digits"),
    ({"id": 7}, "keys[0]", "id", "letters, digits"),
    ({"notafter": "x"}, "keys[0]", "notafter", "unknown field"),
])
def test_a_bad_key_is_named_with_its_field(fields: dict[str, object], record: str, field: str,
                                           words: str) -> None:
    with pytest.raises(InvalidInput, match=words) as caught:
        parse_keys(keys_yaml(entry(**fields)), "keys.yaml")
    assert (caught.value.file, caught.value.record, caught.value.field) == (
        "keys.yaml", record, field)


def test_a_missing_field_is_named() -> None:
    bad = entry()
    del bad["notAfter"]
    with pytest.raises(InvalidInput, match="missing") as caught:
        parse_keys(keys_yaml(bad), "keys.yaml")
    assert caught.value.field == "notAfter"


@pytest.mark.parametrize(("text", "words"), [
    (b"keys: []\n", "no keys"),
    (b"keys: {}\n", "a list `keys`"),
    (b"- a\n", "a list `keys`"),
    (b"keys: [1]\n", "expected a mapping"),
    (b"a: 1\n---\nb: 2\n", "one YAML document"),
    (b"kind: Secret\nstringData: {other: x}\n", "no `keys.yaml`"),
    (b"kind: Secret\ndata: {keys.yaml: '%%%'}\n", "not base64"),
    (b"keys: [\n", "not valid YAML"),
])
def test_a_bad_file_is_refused(text: bytes, words: str) -> None:
    with pytest.raises(InvalidInput, match=words):
        parse_keys(text, "keys.yaml")


def test_a_key_id_used_twice_is_refused() -> None:
    with pytest.raises(InvalidInput, match="used twice") as caught:
        parse_keys(keys_yaml(entry(), entry()), "keys.yaml")
    assert caught.value.record == "keys[1]"

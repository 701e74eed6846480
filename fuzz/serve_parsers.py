"""The serving targets' parsers (fuzz.targets: admission-review, signed-submission): what the
webhook does with a request body, in process, with the contracts it promises checked.

admission-review: the response is an AdmissionReview v1 for the request's uid that always
allows, and any patch is a JSONPatch of add/replace operations under /spec. signed-submission:
the body is sent twice: with a header taken from its first line (refused: 401, 403 or 413,
nothing created), then correctly signed (201, 400, 413 or 422, created exactly when 201), and
that signature once more (refused as a replay unless the body was too large).
"""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path
from typing import Any

from fuzz.parsers import ContractBroken, Parser


def admission_review(state: Path) -> Parser:
    from dagpilot.serve import admission  # noqa: PLC0415  (imported in the worker only)
    from dagpilot.serve.run_history import RunHistory  # noqa: PLC0415

    history = RunHistory({"work": (90.0,), "echo": (12.5,), "etl/work": (30.0,)})

    def parse(path: Path) -> bool:
        body = path.read_bytes()
        answer = json.loads(admission.review(body, history))
        response = answer.get("response") or {}
        uid = json.loads(body)["request"]["uid"]  # review() read it: a valid request
        if (answer.get("apiVersion"), answer.get("kind")) != (admission.API_VERSION,
                                                               "AdmissionReview") \
                or response.get("uid") != uid or response.get("allowed") is not True:
            raise ContractBroken(f"not an allowing AdmissionReview for {uid!r}: {answer}")
        if "patch" in response:
            _check_patch(response)
        return True
    return parse


def _check_patch(response: dict[str, Any]) -> None:
    if response.get("patchType") != "JSONPatch":
        raise ContractBroken(f"patch without patchType JSONPatch: {response}")
    operations = json.loads(base64.b64decode(response["patch"], validate=True))
    if not isinstance(operations, list) or not operations:
        raise ContractBroken(f"an empty or odd patch: {operations!r}")
    for operation in operations:
        if operation.get("op") not in ("add", "replace") \
                or not str(operation.get("path", "")).startswith("/spec/"):
            raise ContractBroken(f"a patch operation outside the contract: {operation}")


OK = frozenset({201, 400, 413, 422})
REFUSED = frozenset({401, 403, 413})


def signed_submission(state: Path) -> Parser:
    from dagpilot.serve import signature  # noqa: PLC0415
    from dagpilot.serve.keys import KeyRing, SigningKey  # noqa: PLC0415
    from dagpilot.serve.replay import NonceCache  # noqa: PLC0415
    from dagpilot.serve.submission import Submissions  # noqa: PLC0415

    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    key = SigningKey("fuzz", b"f" * 32, start, start + datetime.timedelta(hours=24))
    ring = KeyRing((key,))
    now = start.timestamp() + 3600

    def parse(path: Path) -> bool:
        body = path.read_bytes()
        created: list[dict[str, Any]] = []

        def create(namespace: str, workflow: dict[str, Any]) -> dict[str, Any]:
            created.append(workflow)
            return {"metadata": {"namespace": namespace, "name": "fuzzed"}}
        submissions = Submissions(lambda: ring, NonceCache(), create, "fuzz", clock=lambda: now)
        kind = "application/json" if path.suffix == ".json" else "application/yaml"
        first_line = body.split(b"\n", 1)[0][:300].decode("latin-1")
        unsigned = submissions.handle(body, first_line, kind)
        if unsigned.status not in REFUSED or created:
            raise ContractBroken(f"a header from the body got {unsigned.status}")
        header = signature.header(key.secret, key.key_id, body, int(now))
        signed = submissions.handle(body, header, kind)
        if signed.status not in OK or (signed.status == 201) != (len(created) == 1):
            raise ContractBroken(f"signed: {signed.status} with {len(created)} created: "
                                 f"{signed.document}")
        if signed.status != 413:
            again = submissions.handle(body, header, kind)
            if again.reason != "replayed" or len(created) > 1:
                raise ContractBroken(f"a replay got {again.status} {again.reason}")
        return signed.status == 201
    return parse

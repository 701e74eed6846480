"""The routes of `dagpilot serve webhook`: the admission webhook, the signed endpoint, health.

`POST /mutate` takes the API server's AdmissionReview (only the admission clients' subjects);
`POST /v1/workflows` a signed Workflow (only the submitters' subjects); `GET /healthz` any
client the CA signed (the counts of submission outcomes).
"""

from __future__ import annotations

from collections.abc import Callable

from dagpilot.core.endpoints import Endpoint
from dagpilot.core.errors import InvalidInput
from dagpilot.serve import admission, signature
from dagpilot.serve.https_server import Reply, Request, Route
from dagpilot.serve.run_history import RunHistory
from dagpilot.serve.submission import Submissions
from dagpilot.serve.tls import AllowList

MUTATE_PATH = "/mutate"
SUBMIT_PATH = "/v1/workflows"
HEALTH_PATH = "/healthz"
MAX_REVIEW_BYTES = 8 << 20  # the API server's own limit on an object is 3 MiB

_TRANSPORT = ((403, "client certificate subject not allowed on this route"),
              (411, "no Content-Length (chunked bodies are refused)"))
# docs/API_REFERENCE.md; tests/test_api_reference.py checks it against routes().
ENDPOINTS = (
    Endpoint("POST", MUTATE_PATH, "Mutating admission webhook for argoproj.io/v1alpha1 "
             "Workflows: sets spec.schedulerName and each template's expected duration",
             "AdmissionReview v1 (JSON), from the admission clients' subjects only",
             ((200, "AdmissionReview v1 response: allowed, with a JSONPatch when it mutates"),
              (400, '{"error"}: not an AdmissionReview'), *_TRANSPORT,
              (413, f"body over {MAX_REVIEW_BYTES} bytes"))),
    Endpoint("POST", SUBMIT_PATH, "Signed Workflow submission: verified, validated by the "
             "Argo loader, created through the API server",
             f"a Workflow (YAML or JSON) with header {signature.HEADER}: "
             "t=<unix s>,kid=<key id>,v1=<hex HMAC-SHA256 of t + '.' + body>; submitters' "
             "subjects only",
             ((201, '{"namespace", "name"} of the created Workflow'),
              (400, '{"error"}: not one JSON/YAML document'),
              (401, '{"error"}: malformed signature header, unknown kid, or forged or '
                    "truncated body"),
              (403, '{"error"}: key outside notBefore/notAfter, t more than 5 min away, '
                    "replayed signature; or subject not allowed"),
              (409, '{"error"}: a Workflow of that name exists'),
              (411, "no Content-Length"), (413, '{"error"}: body over 1 MiB'),
              (422, '{"error"}: not a DAG the Argo loader reads (names the task and field), '
                    "or the API server refused it"),
              (502, '{"error"}: the API server forbids the webhook\'s ServiceAccount'),
              (503, '{"error"}: replay cache full or API server unavailable'))),
    Endpoint("GET", HEALTH_PATH, "Liveness and the counts of submission outcomes",
             "", ((200, '{"ok": true, "submissions": {outcome: count}}'),)),
)


def routes(submissions: Submissions, history: Callable[[], RunHistory],
           admission_clients: AllowList, submit_clients: AllowList,
           scheduler_name: str = admission.SCHEDULER_NAME) -> list[Route]:
    def mutate(request: Request) -> Reply:
        try:
            return Reply(200, admission.review(request.body, history(), scheduler_name))
        except InvalidInput as error:
            return Reply.json(400, {"error": str(error)})

    def submit(request: Request) -> Reply:
        outcome = submissions.handle(request.body, request.headers.get(signature.HEADER.lower()),
                                     request.headers.get("content-type"))
        return Reply.json(outcome.status, outcome.document)

    def too_large(length: int) -> Reply:
        outcome = submissions.too_large(length)
        return Reply.json(outcome.status, outcome.document)

    def health(request: Request) -> Reply:
        return Reply.json(200, {"ok": True, "submissions": dict(submissions.outcomes)})

    return [Route("POST", MUTATE_PATH, mutate, admission_clients, MAX_REVIEW_BYTES),
            Route("POST", SUBMIT_PATH, submit, submit_clients, submissions.max_body_bytes,
                  too_large),
            Route("GET", HEALTH_PATH, health, None)]

"""The routes of `dagpilot serve webhook`: the admission webhook, the signed endpoint, health.

`POST /mutate` takes the API server's AdmissionReview (only the admission clients' subjects);
`POST /v1/workflows` a signed Workflow (only the submitters' subjects); `GET /healthz` any
client the CA signed (the counts of submission outcomes).
"""

from __future__ import annotations

from collections.abc import Callable

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

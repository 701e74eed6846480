"""The API server, through the official `kubernetes` client: the only module that imports it.

- A connection honours a kubeconfig (server, CA, client certificate and key, token) and puts a
  deadline on every request: `Timeouts.connect_s` to connect, `read_s` for a list or a bind, and
  `watch_s` as a watch request's server-side `timeoutSeconds` (the socket waits a little longer).
  The client's own retries are off: the watchers (live/watcher.py) reconnect with backoff.
- Objects are read as plain JSON dicts (`_preload_content=False`), the form the parsers
  (live/inventory.py, pods.py, workflows.py) and the Argo loader take; the client's model
  classes would cost more than the parsing and add nothing.
- `list_all` pages through a collection (`limit` / `continue`; label and field selectors pick
  part of it) and returns its resourceVersion;
  `watch` streams the events after one, raises `Gone` when the server no longer has it (HTTP
  410, or an ERROR event with code 410: the caller lists again) and ends at the server's
  timeout. `stop_watches` unblocks a watch waiting in another thread.
- Every failure is a KubeApiError naming the server and the reason in words: refused, no
  answer in time, a certificate the kubeconfig's CA does not sign or one that expired, a client
  the server does not accept (401), RBAC (403). `retryable` says whether trying again can help.
- `bind` and `create_event`, a scheduler's two writes per pod, are POSTed with the kubeconfig's
  credentials past the client's generated methods, which validate their arguments (pydantic)
  and rebuild the body: on http.client connections of their own (live/https_writes.py), or
  on the client's urllib3 pool when the kubeconfig names a proxy. Against the sandbox a bind
  cost 1.85 ms of CPU through the generated method, 1.24 on urllib3, 0.6-0.8 on http.client.
- `bind` (a pods/binding POST, the decision annotation on the Binding) and `patch_workflow`
  (JSON merge) are what a scheduler and the Argo webhook need; `create_workflow` is the signed
  endpoint's; `patch_pod_status` (PodScheduled=False), `create_event` and the Lease calls
  (`read_lease`, `create_lease`, `replace_lease`: leader election) are the custom scheduler's.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import quote

import urllib3
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from dagpilot.live.errors import KubeApiError
from dagpilot.live.https_writes import HttpsWrites

HTTP_GONE = 410
HTTP_NOT_FOUND = 404
HTTP_CONFLICT = 409
NOT_RETRYABLE = frozenset({400, 401, 403, 404, 422})
PAGE = 500  # objects per list request: bounded responses, as client-go's pager
CONNECTIONS = 64  # the connection pool's size: every watch and every bind thread at once
Raw = dict[str, Any]


class Resource(Enum):
    """The collections the live view watches."""

    NODES = "nodes"
    PODS = "pods"
    WORKFLOWS = "workflows"  # argoproj.io/v1alpha1


ARGO_GROUP, ARGO_VERSION = "argoproj.io", "v1alpha1"


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect_s: float = 5.0
    read_s: float = 30.0
    watch_s: int = 240  # one watch request, then another from the last resourceVersion


@dataclass(frozen=True, slots=True)
class Listing:
    items: list[Raw]
    resource_version: str


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED or BOOKMARK
    object: Raw

    @property
    def resource_version(self) -> str:
        return str(self.object.get("metadata", {}).get("resourceVersion", ""))


@dataclass(frozen=True, slots=True)
class Selectors:
    """Which objects of a collection to list and watch: `labelSelector`, `fieldSelector`."""

    labels: str = ""  # e.g. "pool=gpu"
    fields: str = ""  # e.g. "metadata.namespace=team-a"


class Gone(Exception):
    """The resourceVersion asked for is older than the server keeps: list again."""


class KubeApi:
    """One connection to the API server of a kubeconfig (its current context, or `context`)."""

    def __init__(self, kubeconfig: Path, context: str | None = None,
                 timeouts: Timeouts = Timeouts()) -> None:
        self.timeouts = timeouts
        configuration = client.Configuration()
        try:
            config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=str(kubeconfig), context=context,
                client_configuration=configuration, persist_config=False)
        except (ConfigException, OSError, yaml.YAMLError, ValueError, TypeError,
                KeyError) as error:
            raise KubeApiError(str(kubeconfig), f"not a usable kubeconfig: {error}") from None
        configuration.retries = 0  # the watchers retry, with backoff; a call fails fast
        # one keep-alive connection per thread that may hold one: the client's default
        # (5 per CPU) is below a 2-CPU scheduler's watches plus bind threads, and each
        # connection past it is opened, used once and dropped (a TLS handshake per bind)
        configuration.connection_pool_maxsize = CONNECTIONS
        self.server = str(configuration.host)
        self._client = client.ApiClient(configuration)
        self._core = client.CoreV1Api(self._client)
        self._custom = client.CustomObjectsApi(self._client)
        self._version = client.VersionApi(self._client)
        self._coordination = client.CoordinationV1Api(self._client)
        self._open: set[urllib3.HTTPResponse] = set()  # watch responses, for stop_watches
        self._pool: urllib3.HTTPConnectionPool | None = None  # the writes' (_server_pool)
        # a server URL's own path (a cluster behind a proxy) goes before each request's
        self._path_prefix = urllib3.util.parse_url(self.server).path or ""
        self._write_timeout = urllib3.Timeout(connect=timeouts.connect_s, read=timeouts.read_s)
        self._writes = _https_writes(configuration, timeouts, self._write_headers)
        self._lock = threading.Lock()

    def close(self) -> None:
        self.stop_watches()
        if self._writes is not None:
            self._writes.close()
        self._client.close()  # type: ignore[no-untyped-call]

    # --- reads -----------------------------------------------------------------------------

    def version(self) -> Raw:
        """GET /version: whether the server answers and trusts us (and it is trusted)."""
        return self._json(self._call(self._version.get_code, _preload_content=False))

    def list_all(self, resource: Resource, selectors: Selectors | None = None) -> Listing:
        """Every object of the collection (those `selectors` pick), page by page; Gone when a
        page's token expired."""
        items: list[Raw] = []
        token: str | None = None
        while True:
            page = self._json(self._call(self._lister(resource), limit=PAGE,
                                         _continue=token, _preload_content=False,
                                         **_options(selectors)))
            items += page.get("items") or []
            metadata = page.get("metadata") or {}
            token = metadata.get("continue") or None
            if token is None:
                return Listing(items, str(metadata.get("resourceVersion", "")))

    def watch(self, resource: Resource, resource_version: str,
              stop: threading.Event | None = None,
              selectors: Selectors | None = None) -> Iterator[WatchEvent]:
        """The events after `resource_version` (of the objects `selectors` pick), until the
        server ends the watch or `stop` is set (and stop_watches called)."""
        response = self._call(
            self._lister(resource), watch=True, resource_version=resource_version,
            allow_watch_bookmarks=True, timeout_seconds=self.timeouts.watch_s,
            _preload_content=False,
            _request_timeout=(self.timeouts.connect_s, self.timeouts.watch_s + 30),
            **_options(selectors))
        with self._lock:
            self._open.add(response)
        try:
            if stop is not None and stop.is_set():  # stopped while connecting
                return
            yield from self._events(response)
        except (ProtocolError, ReadTimeoutError, SSLError, OSError) as error:
            if response.closed or getattr(response, "_fp", None) is None:
                return  # stop_watches closed it: the caller is stopping
            raise KubeApiError(self.server, f"watch of {resource.value} broken: {error}") \
                from None
        finally:
            with self._lock:
                self._open.discard(response)
            response.release_conn()

    def stop_watches(self) -> None:
        """Ends every watch in progress (from any thread); their iterators return."""
        with self._lock:
            responses = list(self._open)
        for response in responses:
            response.shutdown()

    # --- writes ----------------------------------------------------------------------------

    def bind(self, namespace: str, pod: str, node: str, uid: str | None = None,
             annotations: Mapping[str, str] | None = None) -> None:
        """POST pods/binding: the pod is placed on `node` (what kube-scheduler does); the
        API server copies `annotations` onto the pod in the same write."""
        metadata: Raw = {"name": pod, "namespace": namespace}
        if uid is not None:
            metadata["uid"] = uid  # refuses to bind a newer pod of the same name
        if annotations:
            metadata["annotations"] = dict(annotations)
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": metadata,
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        # read, so the keep-alive connection goes back to the pool (unread, each bind
        # paid a new TLS connection)
        self._post(f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/binding", body)

    def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> Raw:
        """A strategic-merge patch of a pod's status (conditions merge by type), as
        kube-scheduler writes PodScheduled=False."""
        return self._json(self._call(self._core.patch_namespaced_pod_status, name, namespace,
                                     dict(patch), _preload_content=False))

    def create_event(self, namespace: str, event: Mapping[str, Any]) -> Raw:
        """POST a core/v1 Event (a scheduler's Scheduled and FailedScheduling)."""
        return self._post(f"/api/v1/namespaces/{quote(namespace)}/events", dict(event))

    def read_lease(self, namespace: str, name: str) -> Raw | None:
        """A coordination.k8s.io/v1 Lease; None when there is none."""
        try:
            return self._json(self._call(self._coordination.read_namespaced_lease, name,
                                         namespace, _preload_content=False))
        except KubeApiError as error:
            if error.status == HTTP_NOT_FOUND:
                return None
            raise

    def create_lease(self, namespace: str, lease: Mapping[str, Any]) -> Raw:
        """POST a Lease; KubeApiError 409 when another replica created it first."""
        return self._json(self._call(self._coordination.create_namespaced_lease, namespace,
                                     dict(lease), _preload_content=False))

    def replace_lease(self, namespace: str, lease: Mapping[str, Any]) -> Raw:
        """PUT a Lease with the resourceVersion it was read at; KubeApiError 409 when another
        replica wrote it since (optimistic concurrency: the leader election's one rule)."""
        name = str(lease["metadata"]["name"])
        return self._json(self._call(self._coordination.replace_namespaced_lease, name,
                                     namespace, dict(lease), _preload_content=False))

    def patch_workflow(self, namespace: str, name: str, patch: Mapping[str, Any]) -> Raw:
        """A JSON merge patch of an Argo Workflow."""
        return self._json(self._call(self._custom.patch_namespaced_custom_object, ARGO_GROUP,
                                     ARGO_VERSION, namespace, "workflows", name, dict(patch),
                                     _preload_content=False))

    def create_workflow(self, namespace: str, workflow: Mapping[str, Any]) -> Raw:
        """POST an Argo Workflow (the signed endpoint's one write); the object as created."""
        return self._json(self._call(self._custom.create_namespaced_custom_object, ARGO_GROUP,
                                     ARGO_VERSION, namespace, "workflows", dict(workflow),
                                     _preload_content=False))

    # --- plumbing --------------------------------------------------------------------------

    def _lister(self, resource: Resource) -> Any:
        if resource is Resource.NODES:
            return self._core.list_node
        if resource is Resource.PODS:
            return self._core.list_pod_for_all_namespaces

        def workflows(**options: Any) -> Any:
            return self._custom.list_cluster_custom_object(ARGO_GROUP, ARGO_VERSION,
                                                           "workflows", **options)
        return workflows

    def _call(self, function: Any, *args: Any, **options: Any) -> urllib3.HTTPResponse:
        options.setdefault("_request_timeout", (self.timeouts.connect_s, self.timeouts.read_s))
        options = {key: value for key, value in options.items() if value is not None}
        try:
            response: urllib3.HTTPResponse = function(*args, **options)
        except ApiException as error:
            raise self._refusal(int(error.status or 0),
                                _message(error.body) or str(error.reason)) from None
        except (HTTPError, ssl.SSLError, OSError) as error:
            raise KubeApiError(self.server, _transport_words(error, self.timeouts)) from None
        return response

    def _post(self, path: str, body: Mapping[str, Any]) -> Raw:
        """POST a JSON body as `_call` would through a generated method (the same
        credentials, timeouts, the same errors), without its argument validation and
        serialisation; the reply's JSON object."""
        payload = json.dumps(body).encode()
        try:
            if self._writes is not None:
                reply = self._writes.post(path, payload)
                status, reason, data = reply.status, reply.reason, reply.data
            else:
                response = self._server_pool().urlopen(
                    "POST", self._path_prefix + path, body=payload,
                    headers={**self._write_headers(), "Content-Type": "application/json",
                             "Accept": "application/json"},
                    timeout=self._write_timeout, assert_same_host=False, redirect=False)
                status, reason, data = response.status, str(response.reason), response.data
        except (HTTPError, ssl.SSLError, OSError, http.client.HTTPException) as error:
            raise KubeApiError(self.server, _transport_words(error, self.timeouts)) from None
        if not 200 <= status <= 299:
            raise self._refusal(status, _message(data) or reason)
        return _object(data)

    def _write_headers(self) -> dict[str, str]:
        """The client's User-Agent and credentials (a bearer token, read afresh: it may be
        refreshed); client certificates are the connections' own."""
        headers = {"User-Agent": self._client.user_agent}
        for setting in self._client.configuration.auth_settings().values():
            if setting["in"] == "header" and setting["value"]:
                headers[setting["key"]] = setting["value"]
        return headers

    def _server_pool(self) -> urllib3.HTTPConnectionPool:
        """The client's connection pool for the server (the pool manager's own, looked up
        once: its per-request URL parsing and pool lookup cost as much as the write)."""
        pool = self._pool
        if pool is None:
            pool = self._pool = self._client.rest_client.pool_manager.connection_from_url(
                self.server)
        return pool

    def _events(self, response: urllib3.HTTPResponse) -> Iterator[WatchEvent]:
        rest = b""
        for chunk in response.stream(amt=1 << 16, decode_content=True):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                if line.strip():
                    yield self._event(json.loads(line))

    def _event(self, document: Raw) -> WatchEvent:
        kind, body = str(document.get("type", "")), document.get("object") or {}
        if kind == "ERROR":
            raise self._refusal(int(body.get("code") or 0), str(body.get("message", "")))
        return WatchEvent(kind, body)

    def _refusal(self, status: int, message: str) -> Exception:
        """What a request the server answered with an error status raises: Gone for 410
        (list again), else a KubeApiError with the status and the server's message."""
        if status == HTTP_GONE:
            return Gone(message or "resourceVersion too old")
        return KubeApiError(self.server, _status_words(status, message), status)

    @staticmethod
    def _json(response: urllib3.HTTPResponse) -> Raw:
        try:
            data = response.data
        finally:
            response.release_conn()
        return _object(data)


def _https_writes(configuration: Any, timeouts: Timeouts,
                  headers: Callable[[], Mapping[str, str]]) -> HttpsWrites | None:
    """http.client connections with the kubeconfig's TLS settings (its CA, client
    certificate); None for a proxy, a TLS server name of its own or a plain-HTTP server
    (the client's urllib3 pool writes then)."""
    url = urllib3.util.parse_url(str(configuration.host))
    if configuration.proxy or configuration.tls_server_name or url.scheme != "https" \
            or not url.host:
        return None
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if configuration.ca_cert_data:
        context.load_verify_locations(cadata=configuration.ca_cert_data)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif configuration.assert_hostname is False:
        context.check_hostname = False
    host = url.host.strip("[]")
    return HttpsWrites(host, url.port or 443, context, base_path=url.path or "",
                       connect_s=timeouts.connect_s, read_s=timeouts.read_s, headers=headers)


def _object(data: bytes) -> Raw:
    """A reply's JSON object ({} for an empty reply or one that is not an object)."""
    document = json.loads(data) if data else {}
    return document if isinstance(document, dict) else {}


def _options(selectors: Selectors | None) -> dict[str, str]:
    if selectors is None:
        return {}
    return {key: value for key, value in (("label_selector", selectors.labels),
                                          ("field_selector", selectors.fields)) if value}


def retryable(error: KubeApiError) -> bool:
    """Whether trying again can help: not for a certificate or a refusal of who we are."""
    return error.status not in NOT_RETRYABLE and not error.message.startswith("TLS")


def _message(body: object) -> str:
    if isinstance(body, bytes | str):
        try:
            document = json.loads(body)
        except ValueError:
            return str(body)[:200]
        if isinstance(document, dict):
            return str(document.get("message", ""))[:300]
    return ""


def _status_words(status: int, message: str) -> str:
    if status == 401:
        return ("401 Unauthorized: the server does not accept the kubeconfig's credentials "
                f"(an expired client certificate or token, or another cluster's): {message}")
    if status == 403:
        return f"403 Forbidden (RBAC): {message}"
    return f"HTTP {status}: {message}"


def _transport_words(error: BaseException, timeouts: Timeouts) -> str:
    reason = error.reason if isinstance(error, MaxRetryError) and error.reason else error
    if isinstance(reason, SSLError | ssl.SSLError):
        text = str(reason)
        hint = ("the server's certificate has expired" if "expired" in text else
                "the kubeconfig's certificate-authority does not sign the server's "
                "certificate" if "verify failed" in text else "the TLS handshake failed")
        return f"TLS: {hint} ({text[:200]})"
    if isinstance(reason, NewConnectionError):  # a subclass of ConnectTimeoutError
        return f"unreachable: {str(reason).split(': ', 1)[-1][:200]}"
    if isinstance(reason, ConnectTimeoutError):
        return f"unreachable: no connection within {timeouts.connect_s:g} s"
    if isinstance(reason, ReadTimeoutError | TimeoutError):  # urllib3's, http.client's
        return f"no answer within {timeouts.read_s:g} s"
    return f"unreachable: {reason}"[:300]

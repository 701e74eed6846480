"""An HTTPS server on 127.0.0.1 for the API connection's tests, serving in a thread."""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve_tls(context: ssl.SSLContext,
              handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Started; the caller shuts it down (`shutdown`, `server_close`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server

"""mTLS: the server's context (a client certificate from the client CA is required) and the
allow-list of client subjects each route accepts; the client's context for `dagpilot submit`.

A handshake without a certificate, or with one another CA signed, fails before any HTTP is
read. A certificate from the right CA is then matched on its subject: a subject is written
`CN=name,O=org` (RFC 4514's short names; attributes in any order, all of them matched, so
`CN=a` does not admit `CN=a,O=system:masters`). Values containing ',' or '=' are not
supported.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.core.echo import shown
from dagpilot.core.errors import SpecError
from dagpilot.serve.errors import ServeError

# Python's names for subject attributes (ssl.SSLSocket.getpeercert) -> RFC 4514's.
_SHORT = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
          "countryName": "C", "stateOrProvinceName": "ST", "localityName": "L",
          "domainComponent": "DC", "userId": "UID", "emailAddress": "emailAddress"}


@dataclass(frozen=True, slots=True)
class Subject:
    attributes: frozenset[tuple[str, str]]

    @classmethod
    def parse(cls, text: str) -> Subject:
        pairs = []
        for part in text.split(","):
            name, equals, value = part.strip().partition("=")
            if not equals or not name or not value:
                raise SpecError(text, "a subject is NAME=VALUE,... (e.g. CN=dagpilot-submit)")
            pairs.append((name, value))
        return cls(frozenset(pairs))

    def __str__(self) -> str:
        return ",".join(f"{name}={value}" for name, value in sorted(self.attributes))


def subject_of(certificate: Mapping[str, Any]) -> Subject:
    """The subject of a verified peer certificate, as getpeercert() gives it."""
    pairs = [(_SHORT.get(name, name), value)
             for rdn in certificate.get("subject", ()) for name, value in rdn]
    return Subject(frozenset(pairs))


@dataclass(frozen=True, slots=True)
class AllowList:
    subjects: frozenset[Subject]

    @classmethod
    def of(cls, texts: Iterable[str]) -> AllowList:
        return cls(frozenset(Subject.parse(text) for text in texts))

    def allows(self, subject: Subject) -> bool:
        return subject in self.subjects

    def __str__(self) -> str:
        return "; ".join(sorted(str(subject) for subject in self.subjects)) or "nobody"


def server_context(cert: Path, key: Path, client_ca: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_REQUIRED
    # no TLS 1.2 renegotiation: a connection's client certificate is the one of its handshake
    # (the server reads the subject once per connection)
    context.options |= ssl.OP_NO_RENEGOTIATION
    _load(context, cert, key, client_ca)
    return context


def client_context(ca: Path, cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # checks the host name and the chain
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load(context, cert, key, ca)
    return context


def _load(context: ssl.SSLContext, cert: Path, key: Path, ca: Path) -> None:
    try:
        context.load_verify_locations(cafile=str(ca))
    except (OSError, ssl.SSLError) as error:
        raise ServeError(str(ca), f"not a usable CA certificate file: {error}") from None
    try:
        context.load_cert_chain(str(cert), str(key))
    except (OSError, ssl.SSLError) as error:
        raise ServeError(f"{cert}, {key}", "not a usable certificate and private key: "
                         f"{shown(str(error))}") from None

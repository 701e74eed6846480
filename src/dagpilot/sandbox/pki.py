"""The sandbox's PKI: one CA and a certificate per identity, generated at `up`, never committed.

Identities (file stem: subject):
  apiserver                  serving cert of kube-apiserver, IP SAN 127.0.0.1
  admin                      CN=dagpilot-admin, O=system:masters: the sandbox's own clients
  kube-scheduler             CN=system:kube-scheduler: RBAC's built-in binding gives its rights
  scheduler-to-extender      the client cert kube-scheduler presents to an HTTPS extender
  apiserver-to-webhook       the client cert kube-apiserver presents to admission webhooks
  serving                    serving cert for dagpilot's extender and webhook on 127.0.0.1
  service-account            the key pair that signs and checks ServiceAccount tokens
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_DAYS = 365
LOOPBACK_SANS = (x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost"))


@dataclass(frozen=True, slots=True)
class Identity:
    stem: str
    common_name: str
    organisation: str | None = None
    server: bool = False  # a serving cert (loopback SANs) rather than a client cert


IDENTITIES = (
    Identity("apiserver", "kube-apiserver", server=True),
    Identity("admin", "dagpilot-admin", "system:masters"),
    Identity("kube-scheduler", "system:kube-scheduler"),
    Identity("scheduler-to-extender", "dagpilot-extender-client"),
    Identity("apiserver-to-webhook", "dagpilot-webhook-client"),
    Identity("serving", "dagpilot-serving", server=True),
)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str, organisation: str | None = None) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organisation:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organisation))
    return x509.Name(parts)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _builder(subject: x509.Name, issuer: x509.Name,
             key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS)))


def _ca(directory: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    name = _name("dagpilot-sandbox-ca")
    cert = (_builder(name, name, key)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    _write_key(directory / "ca.key", key)
    _write_cert(directory / "ca.crt", cert)
    return cert, key


def _issue(directory: Path, identity: Identity, ca: x509.Certificate,
           ca_key: ec.EllipticCurvePrivateKey) -> None:
    key = _key()
    usage = ExtendedKeyUsageOID.SERVER_AUTH if identity.server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (_builder(_name(identity.common_name, identity.organisation), ca.subject, key)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
    if identity.server:
        names = [*LOOPBACK_SANS, x509.DNSName("kubernetes"),
                 x509.DNSName("kubernetes.default.svc")]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    _write_key(directory / f"{identity.stem}.key", key)
    _write_cert(directory / f"{identity.stem}.crt", builder.sign(ca_key, hashes.SHA256()))


def generate(directory: Path) -> None:
    """A fresh CA and every identity's key and certificate under `directory` (mode 0700)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    ca, ca_key = _ca(directory)
    for identity in IDENTITIES:
        _issue(directory, identity, ca, ca_key)
    account = _key()
    _write_key(directory / "service-account.key", account)
    (directory / "service-account.pub").write_bytes(account.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


def complete(directory: Path) -> bool:
    """Whether `directory` holds the whole PKI (a second `up` reuses it)."""
    stems = ["ca", *(identity.stem for identity in IDENTITIES)]
    files = [f"{stem}.{ext}" for stem in stems for ext in ("crt", "key")]
    return all((directory / name).is_file() for name in
               [*files, "service-account.key", "service-account.pub"])

"""The sandbox's PKI: every certificate chains to the CA, servers carry loopback SANs."""

from __future__ import annotations

import ipaddress
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from dagpilot.sandbox import pki


def test_every_identity_is_issued_by_the_ca_with_its_subject_and_usage(tmp_path: Path) -> None:
    pki.generate(tmp_path)
    assert pki.complete(tmp_path)
    ca = x509.load_pem_x509_certificate((tmp_path / "ca.crt").read_bytes())
    for identity in pki.IDENTITIES:
        cert = x509.load_pem_x509_certificate((tmp_path / f"{identity.stem}.crt").read_bytes())
        cert.verify_directly_issued_by(ca)
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == \
            identity.common_name
        usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        wanted = (ExtendedKeyUsageOID.SERVER_AUTH if identity.server
                  else ExtendedKeyUsageOID.CLIENT_AUTH)
        assert list(usage) == [wanted]
        if identity.server:
            sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    assert (tmp_path / "admin.key").stat().st_mode & 0o077 == 0


def test_admin_is_in_system_masters_and_a_missing_file_makes_the_pki_incomplete(
        tmp_path: Path) -> None:
    pki.generate(tmp_path)
    admin = x509.load_pem_x509_certificate((tmp_path / "admin.crt").read_bytes())
    assert admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == \
        "system:masters"
    context = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    context.load_cert_chain(str(tmp_path / "admin.crt"), str(tmp_path / "admin.key"))
    (tmp_path / "serving.key").unlink()
    assert not pki.complete(tmp_path)

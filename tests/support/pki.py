"""A TAK server's PKI for a test, made fresh in a temp dir (keys are never committed): a CA, the server's certificate
for 127.0.0.1 and localhost, and a client certificate exported as a password-protected .p12, as a TAK server's
enrolment hands a unit. With `cryptography` (pytak's with-crypto extra). `server_context` is what a TAK server's
streaming port does: TLS that requires a client certificate from its CA.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Issued:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "tcccd test unit"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _issue(cn: str, issuer: Issued | None, *, ca: bool = False, server: tuple[str, ...] = (),
           not_after: datetime.datetime | None = None) -> Issued:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    not_after = not_after or now + 30 * DAY
    builder = (x509.CertificateBuilder().subject_name(_name(cn))
               .issuer_name(issuer.cert.subject if issuer else _name(cn)).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(min(now, not_after) - 30 * DAY)
               .not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False),
                                        critical=True)
    else:
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if issuer is not None:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key()), critical=False)
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName([_general_name(n) for n in server]),
                                        critical=False)
    return Issued(builder.sign((issuer or Issued(None, key)).key, hashes.SHA256()), key)  # type: ignore[arg-type]


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _pem(issued: Issued) -> bytes:
    return issued.cert.public_bytes(serialization.Encoding.PEM)


class Pki:
    """A CA with a server certificate (for `server_names`) and a client certificate, written under `folder`:
    ca.pem, server.pem/server.key, client.p12 (password in client.p12.pass)."""

    def __init__(self, folder: Path, name: str = "tak", client_cn: str = "DOC-7-kit",
                 password: str = "atakatak", client_not_after: datetime.datetime | None = None,
                 server_names: tuple[str, ...] = ("localhost", "127.0.0.1")) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.client_cn, self.password = folder, client_cn, password
        self.ca = _issue(f"{name} test CA", None, ca=True)
        self.server = _issue(f"{name} server", self.ca, server=server_names)
        self.client_p12, self.password_file = folder / "client.p12", folder / "client.p12.pass"
        self.renew_client(client_not_after)
        self.ca_file = folder / "ca.pem"
        self.ca_file.write_bytes(_pem(self.ca))
        self.server_cert, self.server_key = folder / "server.pem", folder / "server.key"
        self.server_cert.write_bytes(_pem(self.server) + _pem(self.ca))
        self.server_key.write_bytes(self.server.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self.password_file.write_text(password + "\n")

    def renew_client(self, not_after: datetime.datetime | None = None) -> None:
        """Enrol the unit (again): a new client certificate from this CA in client.p12 (valid 30 days, or until
        `not_after`)."""
        self.client = _issue(self.client_cn, self.ca, not_after=not_after)
        self.client_p12.write_bytes(pkcs12.serialize_key_and_certificates(
            self.client_cn.encode(), self.client.key, self.client.cert, [self.ca.cert],
            serialization.BestAvailableEncryption(self.password.encode())))

    def server_context(self, client_ca: Pki | None = None) -> ssl.SSLContext:
        """A TAK server's streaming port: its own certificate, and a client certificate from `client_ca` (by
        default this CA) required."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.server_cert, self.server_key)
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=(client_ca or self).ca_file)
        return context

    def tls_settings(self, password_file: Path | None = None) -> dict[str, str]:
        """tak.tls in a tcccd config: the unit's .p12, its password file, the server's CA."""
        return {"client_cert": str(self.client_p12), "password_file": str(password_file or self.password_file),
                "ca_file": str(self.ca_file)}

"""The unit's TLS identity for the TAK link, and the words for what goes wrong with TLS.

`identity_pem` opens the unit's client certificate read-only, at every
connection attempt (a fixed password file or a new .p12 is taken at the next
retry, no restart): a PKCS#12 file (the `.p12` or `.pfx` of a TAK server's
enrolment, whatever its name ends with) with the password in
`tak.tls.password_file`, or PEM (certificate and key in `client_cert`, or the
key in `client_key`). pytak's own .p12 loader opens the file for writing, which
fails on a file tcccd may only read and on the read-only /etc of the shipped
unit (ProtectSystem=strict), and then writes the decrypted key to the temporary
directory; here the key is decrypted in memory and handed to pytak as PEM in
an anonymous memory file (`memory_file`, Linux's memfd: never on a disk).

`verification_failure` and `refusal` turn pytak's and OpenSSL's exceptions into
a status line that says what is wrong and what to check, never a hint to turn
verification off (tcccd has no such option).
"""

from __future__ import annotations

import contextlib
import os
import ssl
from collections.abc import Iterator
from pathlib import Path

from tcccd.tak_settings import TlsSettings

HOSTNAME_MISMATCH = (62, 64)  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH


class TlsProblem(Exception):
    """The unit's certificate cannot be used; the message names the file and what to check."""


def _read(what: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TlsProblem(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _password(tls: TlsSettings) -> bytes | None:
    if tls.password_file is None:
        return None
    return _read("tak.tls.password_file", tls.password_file).strip()


def identity_pem(tls: TlsSettings) -> bytes:
    """The unit's private key (unencrypted), certificate and chain as PEM, from `tak.tls`; TlsProblem when a file
    cannot be read or opened."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509 import load_pem_x509_certificates

    assert tls.client_cert is not None
    data, password = _read("tak.tls.client_cert", tls.client_cert), _password(tls)
    with_password = f"the password in tak.tls.password_file {tls.password_file}" if password is not None else \
        "no password (tak.tls.password_file is not set)"
    if tls.client_key is None and not data.lstrip().startswith(b"-----BEGIN"):
        try:
            key, cert, chain = pkcs12.load_key_and_certificates(data, password)
        except ValueError:
            raise TlsProblem(f"cannot open tak.tls.client_cert {tls.client_cert} with {with_password}: "
                             f"wrong password, or not a PKCS#12 file") from None
        if key is None or cert is None:
            raise TlsProblem(f"tak.tls.client_cert {tls.client_cert} holds no private key and certificate: "
                             f"use the unit's .p12 from the TAK server's enrolment")
        certs = [cert, *chain]
    else:
        key_file = tls.client_key or tls.client_cert
        key_data = _read("tak.tls.client_key", key_file) if tls.client_key is not None else data
        try:
            certs = load_pem_x509_certificates(data)
            key = serialization.load_pem_private_key(key_data, password)
        except (ValueError, TypeError):
            raise TlsProblem(f"cannot open the PEM certificate tak.tls.client_cert {tls.client_cert} and its key "
                             f"{key_file} with {with_password}: wrong password, no key, or not PEM") from None
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return key_pem + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


@contextlib.contextmanager
def memory_file(data: bytes) -> Iterator[str]:
    """`data` in an anonymous memory file, as a path that OpenSSL can open while the context lasts."""
    fd = os.memfd_create("tcccd-tak-identity", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)


def verification_failure(exc: BaseException, tls: TlsSettings, host: str) -> str | None:
    """The words for a server certificate that failed verification (pytak re-raises it as a SyntaxError that
    suggests turning verification off), or None when `exc` is something else."""
    cause = exc if isinstance(exc, ssl.SSLCertVerificationError) else exc.__cause__
    if not isinstance(cause, ssl.SSLCertVerificationError):
        return None
    detail = cause.verify_message or str(cause)
    if cause.verify_code in HOSTNAME_MISMATCH:
        name = tls.server_hostname or host
        return (f"the server's certificate is not for {name} (certificate verify failed: {detail}); set "
                f"tak.tls.server_hostname to the name in it")
    return (f"the server's certificate is not trusted (certificate verify failed: {detail}), checked against "
            f"tak.tls.ca_file {tls.ca_file}")


def refusal(error: str | None, tls: TlsSettings) -> str:
    """The words for a server that ended the connection right after the handshake (with `error`, or a plain
    close), before it showed it accepted the unit."""
    how = f" ({error})" if error else ""
    return (f"the server ended the connection right after the TLS handshake{how}: it did not accept the unit's "
            f"certificate tak.tls.client_cert {tls.client_cert} (expired, revoked, or not from its CA?)")

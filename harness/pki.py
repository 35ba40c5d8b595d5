"""Throwaway certificates for one e2e control plane, made with the `openssl` CLI.

One CA signs everything: the apiserver's serving certificate, the admin client certificate the harness
and the scheduler use, and any extra client or serving certificate a test asks for (the scheduler's
client certificate for an mTLS extender, a user for an RBAC test). EC P-256 keys keep generation instant.
"""

from __future__ import annotations

import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError

VALID_DAYS = 3


class PkiError(HarnessError, RuntimeError):
    """openssl refused to make a key or certificate."""


@dataclass(frozen=True)
class CertPair:
    cert: Path
    key: Path


def _openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise PkiError(f"openssl {' '.join(args)} failed: {done.stderr.strip()}")


class Pki:
    """A CA in `directory` plus the certificates issued from it."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca = CertPair(self.dir / "ca.crt", self.dir / "ca.key")
        _openssl(
            "req", "-x509", "-new", "-nodes",
            "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-keyout", self.ca.key.name, "-out", self.ca.cert.name,
            "-days", str(VALID_DAYS), "-subj", "/CN=drsched-e2e-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=self.dir,
        )  # fmt: skip

    def issue(
        self,
        name: str,
        *,
        common_name: str,
        organizations: tuple[str, ...] = (),
        dns_names: tuple[str, ...] = (),
        ips: tuple[str, ...] = (),
        server: bool = False,
        client: bool = False,
        days: int = VALID_DAYS,
    ) -> CertPair:
        """Issue `<name>.crt`/`<name>.key`. Kubernetes reads CN as the user name and O as its groups.

        `days=-1` issues a certificate that expired when it was made (notAfter a day before notBefore)."""
        if not (server or client):
            raise ValueError("a certificate must be for server or client use, or both")
        pair = CertPair(self.dir / f"{name}.crt", self.dir / f"{name}.key")
        subject = "".join(f"/O={org}" for org in organizations) + f"/CN={common_name}"
        usages = ",".join(u for u, on in (("serverAuth", server), ("clientAuth", client)) if on)
        extensions = [
            "basicConstraints=critical,CA:FALSE",
            "keyUsage=critical,digitalSignature,keyEncipherment",
            f"extendedKeyUsage={usages}",
        ]
        sans = [f"DNS:{d}" for d in dns_names] + [f"IP:{ip}" for ip in ips]
        if sans:
            extensions.append("subjectAltName=" + ",".join(sans))
        ext_file = self.dir / f"{name}.ext"
        ext_file.write_text("\n".join(extensions) + "\n")
        csr = self.dir / f"{name}.csr"
        _openssl(
            "req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-keyout", pair.key.name, "-out", csr.name, "-subj", subject,
            cwd=self.dir,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", csr.name, "-CA", self.ca.cert.name, "-CAkey", self.ca.key.name,
            "-set_serial", str(secrets.randbits(62) + 1),
            "-days", str(days), "-extfile", ext_file.name, "-out", pair.cert.name,
            cwd=self.dir,
        )  # fmt: skip
        return pair

    def service_account_keys(self) -> CertPair:
        """The key pair the apiserver signs and verifies service-account tokens with (cert = public key)."""
        pair = CertPair(self.dir / "sa.pub", self.dir / "sa.key")
        _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", pair.key.name, cwd=self.dir)
        _openssl("ec", "-in", pair.key.name, "-pubout", "-out", pair.cert.name, cwd=self.dir)
        return pair

"""Self-signed certificate sets for TLS tests, made with the same openssl commands the README shows."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3", "localhost")


@dataclass(frozen=True)
class CertificateSet:
    ca: Path      # the CA certificate clients trust (security.ssl.*.trust-cert)
    cert: Path    # a certificate signed by it, for every host in HOSTS (security.ssl.*.cert)
    key: Path     # its private key (security.ssl.*.key)

    def config(self, internal: bool = True) -> dict[str, str]:
        """The keys that turn TLS on with this set (REST, and internal unless told otherwise)."""
        scopes = ("rest", "internal") if internal else ("rest",)
        out = {}
        for scope in scopes:
            out |= {f"security.ssl.{scope}.enabled": "true", f"security.ssl.{scope}.cert": str(self.cert),
                    f"security.ssl.{scope}.key": str(self.key), f"security.ssl.{scope}.trust-cert": str(self.ca)}
        return out


def _openssl(*args: str, cwd: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("these tests make certificates with the openssl command: install it (apt-get install openssl)")
    subprocess.run([openssl, *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(directory: Path, name: str = "flinkbench", hosts: tuple[str, ...] = HOSTS) -> CertificateSet:
    """A CA and one certificate it signed for ``hosts`` (server and client use), under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30",
             "-subj", f"/CN={name} CA", "-keyout", "ca.key", "-out", "ca.pem", cwd=directory)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-subj", f"/CN={name}", "-keyout", "node.key", "-out", "node.csr", cwd=directory)
    names = ",".join(f"IP:{h}" if h[0].isdigit() else f"DNS:{h}" for h in hosts)
    (directory / "node.ext").write_text(f"subjectAltName={names}\nextendedKeyUsage=serverAuth,clientAuth\n")
    _openssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "30",
             "-extfile", "node.ext", "-out", "node.pem", cwd=directory)
    return CertificateSet(directory / "ca.pem", directory / "node.pem", directory / "node.key")

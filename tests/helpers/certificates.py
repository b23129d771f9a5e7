"""Self-signed certificate sets for TLS tests, made by the openssl commands the README shows (read from it)."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.readme import commands

HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3", "localhost")
README_LINES = commands("TLS on every port")


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


def make_certificates(directory: Path, name: str = "flinkbench", hosts: tuple[str, ...] = HOSTS) -> CertificateSet:
    """A CA and one certificate it signed for ``hosts`` (server and client use), under ``directory``: the README's
    commands as shown, run by bash, with only the names filled in (the CA's and the certificate's, and the hosts
    in subjectAltName)."""
    if shutil.which("openssl") is None:
        raise RuntimeError("these tests make certificates with the openssl command: install it (apt-get install openssl)")
    directory.mkdir(parents=True, exist_ok=True)
    names = ",".join(f"IP:{h}" if h[0].isdigit() else f"DNS:{h}" for h in hosts)
    for line in README_LINES:
        command = (line.replace("IP:127.0.0.1,DNS:localhost", names).replace("/CN=flinkbench CA", f"/CN={name} CA")
                   .replace('/CN=flinkbench"', f'/CN={name}"'))
        done = subprocess.run(["bash", "-c", command], cwd=directory, capture_output=True, text=True)
        assert done.returncode == 0, f"the README's {line!r} failed: {done.stderr}"
    return CertificateSet(directory / "ca.pem", directory / "node.pem", directory / "node.key")

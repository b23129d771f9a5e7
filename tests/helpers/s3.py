"""An S3 store for tests: moto's S3 server on a free loopback port, with one bucket."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys

from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port

BUCKET = "checkpoints"


@contextlib.contextmanager
def s3_server(monkeypatch, bucket: str = BUCKET):
    """moto's S3 server with ``bucket``, its address in the environment (FLINKBENCH_S3_ENDPOINT and test
    credentials) for this process and the cluster processes it starts; yields a boto3 client."""
    port = free_port()
    server = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "moto_server"), "-H", "127.0.0.1",
                               "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for key, value in {"FLINKBENCH_S3_ENDPOINT": endpoint, "AWS_ACCESS_KEY_ID": "test",
                       "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    import boto3
    client = boto3.client("s3", endpoint_url=endpoint)

    def bucket_ready():
        try:
            client.create_bucket(Bucket=bucket)
            return True
        except Exception:  # noqa: BLE001 - the server is still starting
            return False
    try:
        wait_until(bucket_ready, 30, "S3 emulator")
        yield client
    finally:
        server.kill()
        server.wait()

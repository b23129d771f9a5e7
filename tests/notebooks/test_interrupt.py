"""Interrupting a waiting %%flink cell (the notebook's stop button: SIGINT to the kernel) cancels its job."""
from __future__ import annotations

import os

import pytest

from tests.helpers.clusters import wait_until
from tests.helpers.notebooks import ANSI, REPO, started_kernel

pytestmark = pytest.mark.slow


def run(kc, code: str, timeout: float = 60) -> dict:
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=lambda msg: None)
    assert reply["content"]["status"] == "ok", reply["content"]
    return reply


def test_interrupting_a_waiting_cell_cancels_its_job(cluster):
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(REPO))
    with started_kernel(env) as (km, kc):
        run(kc, f"%load_ext kernel_magics\n%flink connect {cluster.url} --token-file {cluster.token_file}")
        msg_id = kc.execute("%%flink --wait --name interrupt-me\n"
                            "env.datagen('seq BIGINT', rows_per_second=100, fields={'seq': {'kind': 'sequence'}}).blackhole()")
        job = wait_until(lambda: next((j for j in cluster.client.jobs()
                                       if j["name"] == "interrupt-me" and j["state"] == "RUNNING"), None),
                         120, "the job running")
        km.interrupt_kernel()
        errors = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "error":
                errors.append(msg["content"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert [e["ename"] for e in errors] == ["KeyboardInterrupt"]
        shown = ANSI.sub("", "\n".join(errors[0]["traceback"]))
        assert shown == f"KeyboardInterrupt: job {job['jid']} cancelled (CANCELED)"
        assert cluster.client.get(f"/jobs/{job['jid']}")["state"] == "CANCELED"

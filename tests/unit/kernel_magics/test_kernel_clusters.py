"""Which cluster the panel shows for a notebook's kernel: the kernel's record (kernel_magics.kernel_registration)
read by the server extension (kernel_magics.server.kernels), decided without processes or sockets."""
from __future__ import annotations

import json
import os

import pytest

from kernel_magics import kernel_registration
from kernel_magics.kernel_registration import KernelRecord, kernel_id, server_dashboard_link
from kernel_magics.server.kernels import KernelClusters, kernel_cluster

URL = "http://127.0.0.1:8081"
LIVE, GONE = 100, 200


def alive(pid: int) -> bool:
    return pid == LIVE


def record(**fields) -> dict:
    return {"state": "running", "url": URL, "token_file": "/run/token", "owned": True, "pid": LIVE, **fields}


def test_a_live_kernel_following_a_cluster_shows_it():
    shown = kernel_cluster(record(trust_cert="/ca.pem"), alive)
    assert (shown.state, shown.url, shown.target.token_file, shown.target.trust_cert) == ("running", URL, "/run/token",
                                                                                         "/ca.pem")
    assert shown.describe()["configured"] and shown.describe()["source"] == "notebook kernel"


@pytest.mark.parametrize("fields, state, why", [
    ({"state": "stopped", "reason": "'%flink stop' stopped it"}, "stopped", "%flink stop"),
    ({"pid": GONE}, "stopped", "stopped with the kernel"),  # restarted: its own cluster died with it
    ({"pid": GONE, "owned": False}, "none", "follows no cluster"),  # a cluster it only connected to lives on
    ({"token_file": None}, "none", "--token-file"),
    ({"url": "ftp://nowhere"}, "none", "http://host:port"),
])
def test_what_the_panel_shows_instead(fields, state, why):
    shown = kernel_cluster(record(**fields), alive)
    assert shown.state == state and why in shown.reason and shown.target is None
    assert not shown.describe()["configured"]


def test_no_record_or_a_broken_one_means_no_cluster():
    for broken in (None, [], {}, {"state": "running"}):
        assert kernel_cluster(broken, alive).state == "none"


def test_records_written_by_a_kernel_are_read_by_the_server(tmp_path, monkeypatch):
    clusters = KernelClusters(str(tmp_path), alive=lambda pid: pid == os.getpid())
    connection_file = str(tmp_path / "runtime" / "kernel-0a1b-2c.json")
    monkeypatch.setenv(kernel_registration.RECORDS_ENV, clusters.folder)
    monkeypatch.setattr(kernel_registration, "connection_file", lambda: connection_file)
    kernel = KernelRecord.for_this_kernel()
    assert clusters.cluster_of(connection_file).state == "none"
    kernel.connected(URL, "/run/token", None, owned=True)
    assert clusters.cluster_of(connection_file).state == "running"
    first = clusters.connection("0a1b-2c", clusters.cluster_of(connection_file))
    assert first is clusters.connection("0a1b-2c", clusters.cluster_of(connection_file)), "one per kernel and cluster"
    kernel.connected("http://127.0.0.1:9000", "/other/token", None, owned=True)
    assert clusters.connection("0a1b-2c", clusters.cluster_of(connection_file)).current().url == "http://127.0.0.1:9000"
    kernel.stopped("http://127.0.0.1:9000", "'%flink stop' stopped it")
    assert clusters.cluster_of(connection_file).state == "stopped"
    kernel.clear()
    kernel.clear()
    assert clusters.cluster_of(connection_file).state == "none" and os.listdir(clusters.folder) == []
    clusters.close()
    assert not os.path.exists(clusters.folder)
    kernel.connected(URL, "/run/token", None, owned=True)  # the server has gone: the kernel carries on


def test_outside_a_jupyter_server_a_kernel_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.delenv(kernel_registration.RECORDS_ENV, raising=False)
    monkeypatch.delenv(kernel_registration.JUPYTER_URL_ENV, raising=False)
    record_ = KernelRecord.for_this_kernel()
    assert record_.path is None
    record_.connected(URL, "/run/token", None, owned=False)
    assert server_dashboard_link() is None


def test_the_dashboard_link_goes_through_the_jupyter_server_that_started_the_kernel(monkeypatch):
    monkeypatch.setattr(kernel_registration, "connection_file", lambda: "/run/jupyter/kernel-5f0e-77.json")
    monkeypatch.setenv(kernel_registration.JUPYTER_URL_ENV, "http://127.0.0.1:8888/lab-base/")
    assert kernel_id() == "5f0e-77"
    assert server_dashboard_link() == "http://127.0.0.1:8888/lab-base/flinkbench/kernel/5f0e-77/dashboard"
    assert kernel_id("/run/jupyter/something-else.json") is None


def test_the_record_holds_no_token(tmp_path, monkeypatch):
    path = tmp_path / "kernel-1.json"
    KernelRecord(str(path)).connected(URL, "/run/token", None, owned=False)
    written = json.loads(path.read_text())
    assert written == {"state": "running", "url": URL, "token_file": "/run/token", "trust_cert": None, "owned": False,
                       "pid": os.getpid()}

"""TLS on every port (security.ssl.rest.* and security.ssl.internal.*) on a real cluster.

The TaskManagers' control connections, the CLI and the test's own REST and event-stream clients reach
the JobManager through a TCP proxy that records every byte, so the test can show that the cluster
token never crossed in the clear (a notebook connects there too, then follows the address the leader
advertises). The data exchange between TaskManagers is recorded the same way, in-process, with
internal TLS off (the token is there: the recording works) and on (it is not).
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from runtime import tls
from runtime.client import ClusterError, RestClient
from runtime.cluster import LocalCluster
from runtime.config import Configuration
from runtime.ids import ExecutionAttemptId, TaskManagerId
from runtime.data_messages import EndOfPartition
from runtime.messages import ProducerLocation
from runtime.security import new_token
from runtime.taskmanager.input_gate import InputGate
from runtime.taskmanager.network import DataServer, ResultPartition
from runtime.views.model import ClusterModel
from runtime.views.stream import EventStream
from tests.helpers.certificates import make_certificates
from tests.helpers.clusters import wait_until
from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of
from tests.helpers.proxy import TcpProxy

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ROWS = 20_000
CLICKS_JOB = f"""
from runtime.api.environment import StreamExecutionEnvironment
from runtime.examples import clicks

env = StreamExecutionEnvironment()
env.set_parallelism(2)
clicks.build(env, rows={ROWS})
env.execute("clicks over tls")
"""


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory, certs):
    """A JobManager with REST and internal TLS, and two one-slot TaskManagers that reach it through a
    recording proxy (so a parallelism-2 job exchanges data between them)."""
    cluster = LocalCluster(0, 1, certs.config(internal=True), working_dir=str(tmp_path_factory.mktemp("tls-cluster")))
    with cluster:
        port = int(cluster.url.rsplit(":", 1)[1])
        assert cluster.url.startswith("https://")
        proxy = TcpProxy(("127.0.0.1", port), record=True)
        cluster.url = f"https://{proxy.address}"  # TaskManagers added from now on register at the proxy
        for _ in range(2):
            cluster.add_taskmanager()
        cluster.proxy = proxy
        yield cluster
        proxy.close()


def results(client: RestClient, job_id: str) -> list[tuple]:
    table = client.job(job_id).results(timeout=60)
    return sorted(zip(*(table.column(c).to_pylist() for c in ("user", "window_start", "clicks"))))


def test_clicks_runs_from_the_cli_and_from_a_notebook_over_tls(tls_cluster, certs, tmp_path):
    through_proxy = tls_cluster.url
    (tmp_path / "clicks_job.py").write_text(CLICKS_JOB)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLINKBENCH_")}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path), FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT=str(certs.ca),
               FLINKBENCH_SECURITY_SSL_REST_ENABLED="true")
    run = subprocess.run([sys.executable, "-m", "runtime.cli", "run", "-m", through_proxy.removeprefix("https://"),
                          "--token-file", tls_cluster.token_file, str(tmp_path / "clicks_job.py")],
                         env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "(clicks over tls) FINISHED" in run.stdout, run.stdout
    cli_job = run.stdout.split("JobID ")[1].split()[0]

    nb = execute(code_notebook(
        f"%load_ext kernel_magics\n%flink connect {through_proxy} --token-file {tls_cluster.token_file} "
        f"--trust-cert {certs.ca}",
        "%%flink --name clicks-notebook --parallelism 2 --wait -o clicks_out\n"
        f"from runtime.examples import clicks\nclicks.build(env, rows={ROWS})",
        "from kernel_magics import current_session\nfrom tests.helpers.live_checks import report\n"
        "report(job=last_job.job_id, rows=len(clicks_out), stream=current_session().model.connection['state'])",
    ), timeout=300, allow_errors=True, save_to=tmp_path / "tls.ipynb")
    assert all(error_of(c) is None for c in nb.cells), [text_of(c) for c in nb.cells]
    seen = json_lines(nb.cells[2])
    assert seen["stream"] == "connected", "the notebook's event stream verified the JobManager over wss://"

    client = RestClient(through_proxy, token_file=tls_cluster.token_file, trust_cert=str(certs.ca))
    from_cli, from_notebook = results(client, cli_job), results(client, seen["job"])
    assert from_cli == from_notebook and len(from_cli) == seen["rows"] > 0
    assert 0.85 * ROWS < sum(n for _, _, n in from_cli) < 0.95 * ROWS, "about 90% of clicks have amount > 0.1"
    vertices = client.get(f"/jobs/{cli_job}")["vertices"]
    hosts = {s["taskmanager-id"] for v in vertices for s in v["subtasks"]}
    assert len(hosts) == 2, "the job's subtasks ran on both TaskManagers, exchanging data over internal TLS"


def test_a_client_trusting_another_ca_is_refused(tls_cluster, certs, tmp_path):
    direct = tls_cluster.urls[0]  # not through the recording proxy: the plain client below sends its token
    outsider = make_certificates(tmp_path / "other", name="outsider")
    wrong = RestClient(direct, token_file=tls_cluster.token_file, trust_cert=str(outsider.ca))
    with pytest.raises(ClusterError, match="presented a certificate that does not verify against"):
        wrong.overview()
    system_only = RestClient(direct, token_file=tls_cluster.token_file)
    with pytest.raises(ClusterError, match="does not verify against the system CAs"):
        system_only.overview()
    model = ClusterModel()
    stream = EventStream(model, direct, wrong.token, ssl_context=tls.client_context(str(outsider.ca))).start()
    try:
        wait_until(lambda: model.connection["state"] == "refused", 30, "the event stream to refuse the certificate")
        assert "does not verify" in model.connection["message"]
    finally:
        stream.close()
    plain = RestClient(direct.replace("https://", "http://"), token_file=tls_cluster.token_file)
    with pytest.raises(ClusterError, match=r"serves HTTPS only \(security.ssl.rest.enabled\)") as refused:
        plain.overview()
    assert refused.value.status == 400 and plain.token not in str(refused.value)


def test_the_token_never_crosses_the_wire_in_the_clear(tls_cluster, certs):
    proxy = tls_cluster.proxy
    client = RestClient(tls_cluster.url, token_file=tls_cluster.token_file, trust_cert=str(certs.ca))
    assert client.overview()["taskmanagers"] == 2
    model = ClusterModel()
    stream = EventStream(model, tls_cluster.url, client.token, ssl_context=client.ssl_context).start()
    try:
        assert stream.wait_connected(30), model.connection
    finally:
        stream.close()
    token = client.token.encode()
    streams, clients = proxy.streams(), proxy.streams("client")
    assert proxy.connections >= 4, "both TaskManagers' control connections and the test's REST and event stream"
    assert sum(map(len, streams)) > 20_000, "the recording holds the traffic"
    assert all(c[:2] == b"\x16\x03" for c in clients if c), "every connection opened with a TLS handshake"
    assert not any(token in s for s in streams), "the cluster token crossed the proxy in the clear"
    assert not any(b"Bearer" in s or b"clicks over tls" in s for s in streams)


@pytest.mark.parametrize("internal", [False, True], ids=["plain", "internal-tls"])
def test_data_exchange_hides_the_token_and_rows_only_with_internal_tls(certs, internal):
    conf = Configuration(certs.config(internal=True) if internal else {})
    token, marker = new_token(), "row-marker-7f3a"
    proxy_holder: list[TcpProxy] = []

    async def exchange() -> list:
        server = DataServer("127.0.0.1", 0, token, tls.server_context(conf, tls.INTERNAL))
        await server.start()
        proxy = TcpProxy(("127.0.0.1", server.port), record=True)
        proxy_holder.append(proxy)
        producer = ExecutionAttemptId.new()
        partition = ResultPartition(producer, 1)
        server.register(partition)
        where = ProducerLocation(producer, 0, TaskManagerId.new(), "127.0.0.1", proxy.port)
        gate = InputGate([where], 0, ExecutionAttemptId.new(), token, 4, tls.internal_client_context(conf))
        await gate.connect()
        await partition.emit(0, pa.table({"v": [marker] * 3}))
        await partition.broadcast_event(EndOfPartition())
        got = []
        while (item := await gate.next()) is not None:
            got.append(item[1])
        await gate.close()
        await server.stop()
        return got

    got = asyncio.run(asyncio.wait_for(exchange(), 30))
    proxy = proxy_holder[0]
    proxy.close()
    assert got[0].column("v").to_pylist() == [marker] * 3 and isinstance(got[-1], EndOfPartition)
    wire = proxy.streams()
    clear = [any(token.encode() in s for s in wire), any(marker.encode() in s for s in wire)]
    assert clear == ([False, False] if internal else [True, True])

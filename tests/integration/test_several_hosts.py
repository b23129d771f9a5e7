"""A cluster over three "hosts": the JobManager on 127.0.0.1 and TaskManagers on 127.0.0.2 and 127.0.0.3,
each process binding and advertising its own address; the clicks job's exchange crosses between them."""
from __future__ import annotations

import psutil

from runtime.cluster import LocalCluster
from runtime.examples import clicks
from tests.helpers.spark_reference import assert_clicks_exact

ROWS = 60_000
HOSTS = ("127.0.0.2", "127.0.0.3")


def _listening(pid: int) -> set[tuple[str, int]]:
    """Every address:port the process and its children (the Spark JVM) listen on; IPv4 as IPv4 (Java's
    sockets show as IPv4-mapped IPv6)."""
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return {(c.laddr.ip.removeprefix("::ffff:"), c.laddr.port) for p in procs for c in p.net_connections("inet")
            if c.status == psutil.CONN_LISTEN}


def test_clicks_is_exact_with_each_process_on_its_own_address(tmp_path, spark):
    conf = {"rest.address": "127.0.0.1", "spark.driver.memory": "1g", "cluster.fault-injection.enabled": "true"}
    with LocalCluster(taskmanagers=0, slots=1, config=conf, working_dir=str(tmp_path)) as cluster:
        children = {host: cluster.add_taskmanager(host=host) for host in HOSTS}
        env = cluster.environment()
        env.set_parallelism(2)
        clicks.build(env, ROWS)
        job = env.execute_async("clicks")
        assert_clicks_exact(spark, job.results(timeout=300), ROWS)

        tms = {tm["id"]: tm for tm in cluster.client.get("/taskmanagers")["taskmanagers"]}
        assert sorted(tm["host"] for tm in tms.values()) == list(HOSTS)
        source, window = job.details()["vertices"]
        consumer_host = {s["subtask"]: tms[s["taskmanager-id"]]["host"] for s in window["subtasks"]}
        for sub in source["subtasks"]:
            own = tms[sub["taskmanager-id"]]["host"]
            remote = [int(ch) for ch, n in sub["metrics"]["sent_to"].items() if n and consumer_host[int(ch)] != own]
            assert remote, f"the producer on {own} sent records to a consumer on the other address"

        jm_sockets = _listening(cluster.jobmanager.pid)
        assert jm_sockets == {("127.0.0.1", int(cluster.url.rsplit(":", 1)[1]))}, jm_sockets
        for tm in tms.values():
            child = children[tm["host"]]
            sockets = _listening(child.pid)
            assert ("0.0.0.0", tm["dataPort"]) not in sockets and (tm["host"], tm["dataPort"]) in sockets
            assert not any(ip in ("0.0.0.0", "::") for ip, _ in sockets), sockets
            spark_driver = {ip for ip, _ in sockets} - {"127.0.0.1"}  # py4j and PySpark's daemon stay on loopback
            assert spark_driver == {tm["host"]}, f"the Spark driver binds taskmanager.host: {sockets}"

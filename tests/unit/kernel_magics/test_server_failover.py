"""The server extension follows the leading JobManager: what the event stream names is remembered, and the
connection moves to the leader with the same token file and source."""
from __future__ import annotations

import json

from kernel_magics.server.failover import note_jobmanagers
from kernel_magics.server.target import Connection, JobManagerTarget


def test_the_stream_names_the_jobmanagers_and_the_connection_follows_the_leader():
    connection = Connection(JobManagerTarget.make("http://127.0.0.1:8081", "/run/token", "environment"))
    snapshot = {"type": "ClusterSnapshot", "leader": {"url": "http://127.0.0.1:8081"},
                "jobmanagers": [{"url": "http://127.0.0.1:8081"}, {"url": "http://127.0.0.1:8082/"}]}
    assert note_jobmanagers(connection, json.dumps(snapshot)) == "http://127.0.0.1:8081"
    assert connection.known == ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]
    assert note_jobmanagers(connection, json.dumps({"type": "TaskMetricsReported"})) is None
    moved = connection.follow("http://127.0.0.1:8082")
    assert (moved.url, moved.token_file, moved.source) == ("http://127.0.0.1:8082", "/run/token", "environment")
    assert connection.current() == moved and connection.known, "the cluster's JobManagers stay known"
    connection.choose(None)
    assert connection.known == [] and connection.current().url == "http://127.0.0.1:8081"


def test_a_stopped_local_cluster_gives_the_panel_back_the_leader_it_followed():
    connection = Connection(JobManagerTarget.make("http://127.0.0.1:8081", "/run/token", "environment"))
    connection.remember(["http://127.0.0.1:8081", "http://127.0.0.1:8082"])
    connection.follow("http://127.0.0.1:8082")  # the configured JobManager was killed; its standby leads
    connection.choose(JobManagerTarget.make("http://127.0.0.1:9000", "/local/token", "local cluster"))
    assert connection.current().url == "http://127.0.0.1:9000" and connection.known == []
    connection.forget("local cluster")
    assert connection.current().url == "http://127.0.0.1:8082"
    assert connection.known == ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]
    connection.forget("local cluster")  # nothing chosen from there any more: no change
    assert connection.current().url == "http://127.0.0.1:8082"

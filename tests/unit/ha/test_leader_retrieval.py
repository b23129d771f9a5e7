"""Clients finding the leader through the HA services: the settings they take, a file HA lease read
from outside the cluster, and the REST client's choice of whom to try next."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from runtime.client import FAILOVER_TIMEOUT_S, RestClient
from runtime.config import ConfigError
from runtime.ha.file import FileHaServices
from runtime.ha.retrieval import LeaderRetrieval, ha_settings


def test_only_the_ha_keys_count_and_none_means_no_ha():
    entries = {"high-availability.type": "zookeeper", "high-availability.zookeeper.quorum": "zk:2181",
               "rest.port": "8081", "high-availability.storageDir": ""}
    assert ha_settings(entries) == {"high-availability.type": "zookeeper",
                                    "high-availability.zookeeper.quorum": "zk:2181"}
    assert ha_settings({"high-availability.type": "none", "high-availability.cluster-id": "x"}) == {}


def test_retrieval_needs_an_ha_type_and_file_ha_its_directory():
    with pytest.raises(ConfigError, match="high-availability.type"):
        LeaderRetrieval({"rest.port": "1"})
    with pytest.raises(ConfigError, match="high-availability.storageDir"):
        LeaderRetrieval({"high-availability.type": "file"})


def test_a_file_ha_lease_names_the_leader_to_a_client(tmp_path):
    retrieval = LeaderRetrieval({"high-availability.type": "file", "high-availability.storageDir": str(tmp_path)})
    assert retrieval.leader_address() is None, "no store yet: nothing to read and nothing created"
    assert not list(tmp_path.iterdir())
    jobmanager = FileHaServices(str(tmp_path / "default"), 3.0)
    jobmanager.try_lead("jm-1", "http://127.0.0.1:8081/")
    assert retrieval.leader_address() == "http://127.0.0.1:8081"


class NamedLeader:
    def __init__(self, address):
        self.address = address

    def leader_address(self):
        if isinstance(self.address, Exception):
            raise self.address
        return self.address


def test_a_client_tries_the_leader_the_ha_services_name_before_the_addresses_it_knows():
    client = RestClient(["http://a:1", "http://b:1"])
    client.retrieval = NamedLeader("http://c:1")
    client._next_candidate()
    assert client.url == "http://c:1" and "http://c:1" in client.urls
    client.retrieval = NamedLeader(OSError("ZooKeeper unreachable"))
    client._next_candidate()
    assert client.url == "http://a:1", "with the store unreachable too, the next known address"


def test_a_client_given_only_ha_settings_starts_at_the_leader_and_waits_through_failovers(monkeypatch):
    monkeypatch.setattr(LeaderRetrieval, "leader_address", lambda self: "http://leader:8081")
    client = RestClient(ha={"high-availability.type": "zookeeper", "high-availability.zookeeper.quorum": "zk:1"})
    assert client.url == "http://leader:8081" and client.failover_timeout == FAILOVER_TIMEOUT_S
    monkeypatch.setattr(LeaderRetrieval, "leader_address", lambda self: None)
    with pytest.raises(Exception, match="name no leader"):
        RestClient(ha={"high-availability.type": "zookeeper", "high-availability.zookeeper.quorum": "zk:1"})


def test_a_single_address_client_learns_the_other_jobmanagers():
    client = RestClient("http://a:1")
    assert client.failover_timeout == 0
    client.add_jobmanagers(["http://a:1/", "http://b:1"])
    assert client.urls == ["http://a:1", "http://b:1"] and client.failover_timeout == FAILOVER_TIMEOUT_S


ZOOKEEPER = {"high-availability.type": "zookeeper", "high-availability.zookeeper.quorum": "zk:1"}


class CountingServices:
    """HA services that name ``address`` as the leader and count how often they were closed."""

    def __init__(self, address):
        self.address, self.closed = address, 0

    def leader(self):
        return SimpleNamespace(address=self.address) if self.address else None

    def close(self):
        self.closed += 1


def test_a_client_lets_go_of_the_ha_store_when_closed_replaced_or_left_without_a_leader(monkeypatch):
    opened = []
    monkeypatch.setattr("runtime.ha.retrieval.ha_services", lambda conf: opened.append(CountingServices(
        "http://leader:1" if len(opened) < 2 else None)) or opened[-1])
    with RestClient(ha=ZOOKEEPER) as client:
        assert client.url == "http://leader:1"
        client.follow_ha(ZOOKEEPER)
        assert opened[0].closed == 1, "the settings it followed before are let go"
        client._next_candidate()
    assert [s.closed for s in opened] == [1, 1]
    with pytest.raises(Exception, match="name no leader"):
        RestClient(ha=ZOOKEEPER)
    assert opened[2].closed == 1

"""The JobManager's users over an HA store of one JobManager (a file): who a token names, changes made
only while leading, a newer stored table taken, and a removed or re-added user's old token refused."""
from __future__ import annotations

import asyncio

import pytest

from runtime.ha.services import LeadershipLost, NoHaServices
from runtime.jobmanager.user_registry import UserRegistry
from runtime.users import CLUSTER_ADMIN, Caller, UserTable

CLUSTER_TOKEN = "c" * 43


def registry(tmp_path, session="s1"):
    ha = NoHaServices(str(tmp_path / "users.json"))
    return UserRegistry(ha, CLUSTER_TOKEN, lambda: session), ha


def test_the_cluster_token_is_the_admins_and_a_users_token_names_them(tmp_path):
    async def body():
        users, _ = registry(tmp_path)
        quotas = []
        users.on_change(lambda table: quotas.append(table.quotas()))
        _, token = await users.add("alice", 2, False)
        assert users.identify(CLUSTER_TOKEN) == Caller(CLUSTER_ADMIN, True)
        assert users.identify(token) == Caller("alice", False)
        assert users.identify(token) == Caller("alice", False), "the second time from the checked tokens"
        assert users.identify(None) is None and users.identify("x" * 43) is None
        assert quotas == [{}, {"alice": 2}]
    asyncio.run(body())


def test_a_removed_or_re_added_users_old_token_is_refused(tmp_path):
    async def body():
        users, _ = registry(tmp_path)
        _, old = await users.add("alice", None, False)
        assert users.identify(old) is not None
        await users.remove("alice")
        assert users.identify(old) is None
        _, new = await users.add("alice", None, True)
        assert users.identify(old) is None and users.identify(new) == Caller("alice", True)
    asyncio.run(body())


def test_another_jobmanager_takes_the_stored_table_and_only_a_leader_changes_it(tmp_path):
    async def body():
        leader, _ = registry(tmp_path)
        standby, _ = registry(tmp_path, session=None)
        _, token = await leader.add("bob", 1, False)
        assert standby.identify(token) is None
        await standby.refresh()
        assert standby.identify(token) == Caller("bob", False)
        standby.table = UserTable(dict(standby.table.users), version=99)
        await standby.refresh()
        assert standby.table.version == 99, "an older stored table does not replace a newer one"
        with pytest.raises(LeadershipLost, match="users are changed by the leader"):
            await standby.add("carol", None, False)
    asyncio.run(body())

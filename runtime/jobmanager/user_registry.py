"""The JobManager's users: who presents which token, and the table's changes through the HA store.

The table (runtime.users) lives in the HA store, so every JobManager reads the same one: each loads it
at start and reads it again every second (a standby knows a user added a moment ago once it leads),
keeping a copy only when it is newer than its own. Changes are the leader's: a table with the change
is written under the leader's fence (the HA services' fenced write, as every JobManager write is) and
only then taken into use here. The cluster token stays the admin's. A token once checked against its
hash is remembered (by its SHA-256) while its user exists, so a request costs one scrypt per user per
process, not one each. Runs on the JobManager's loop; store calls go to a thread.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable

from runtime.ha.services import HaServices, LeadershipLost
from runtime.ids import LeaderSessionId
from runtime.security import tokens_match
from runtime.users import CLUSTER_ADMIN, Caller, User, UserTable

log = logging.getLogger(__name__)

REFRESH_S = 1.0


class UserRegistry:
    """The user table in force on this JobManager, and the one way to change it."""

    def __init__(self, ha: HaServices, cluster_token: str, session: Callable[[], LeaderSessionId | None]):
        self.ha, self.cluster_token, self.session = ha, cluster_token, session
        self.table = UserTable()
        self._checked: dict[str, User] = {}  # SHA-256 of a checked token -> its user
        self._writing = asyncio.Lock()
        self._listeners: list[Callable[[UserTable], None]] = []

    def on_change(self, listener: Callable[[UserTable], None]) -> None:
        """Call ``listener(table)`` whenever another table comes into force (and now, with this one)."""
        self._listeners.append(listener)
        listener(self.table)

    # -- who is asking -------------------------------------------------------------------------
    def identify(self, token: str | None) -> Caller | None:
        """The caller a presented token names: the cluster token is the admin's; None for no known token."""
        if not token:
            return None
        if tokens_match(self.cluster_token, token):
            return Caller(CLUSTER_ADMIN, True)
        key = hashlib.sha256(token.encode()).hexdigest()
        user = self._checked.get(key)
        if user is None or self.table.users.get(user.name) != user:  # unchecked, removed, or added anew
            user = self.table.find(token)
            if user is None:
                return None
            self._checked[key] = user
        return user.caller()

    def users(self) -> list[User]:
        return sorted(self.table.users.values(), key=lambda u: u.name)

    # -- changes (the leader's) ----------------------------------------------------------------
    async def add(self, name: str, slots: int | None, admin: bool) -> tuple[User, str]:
        """Add a user; their token, returned once, is kept only as a hash. UserError names what is wrong."""
        async with self._writing:
            await self.refresh()  # a leader of a moment ago may have changed it: build on the stored table
            table, token = self.table.add(name, slots, admin)
            await self._store(table)
            return table.users[name], token

    async def remove(self, name: str) -> None:
        """Remove a user: their token stops working at once here (at the next refresh elsewhere); their jobs run on."""
        async with self._writing:
            await self.refresh()
            await self._store(self.table.remove(name))

    async def _store(self, table: UserTable) -> None:
        session = self.session()
        if session is None:
            raise LeadershipLost("this JobManager does not lead: users are changed by the leader")
        await asyncio.get_running_loop().run_in_executor(None, self.ha.put_users, session, table.to_plain())
        self._install(table)

    # -- reading the store ---------------------------------------------------------------------
    async def refresh(self) -> None:
        """Read the stored table and take it when it is newer than this one (OSError: the store did not answer)."""
        stored = await asyncio.get_running_loop().run_in_executor(None, self.ha.users)
        table = UserTable.from_plain(stored)
        if table.version > self.table.version:
            self._install(table)

    async def keep_fresh(self) -> None:
        """Refresh every REFRESH_S until cancelled; a store that does not answer is tried again next time."""
        while True:
            try:
                await self.refresh()
            except (OSError, ValueError, KeyError, TypeError) as err:
                log.debug("cannot read the user table from the HA store: %s", err)
            await asyncio.sleep(REFRESH_S)

    def _install(self, table: UserTable) -> None:
        self.table = table
        self._checked = {key: user for key, user in self._checked.items() if table.users.get(user.name) == user}
        for listener in list(self._listeners):
            listener(table)

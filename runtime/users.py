"""The users of one cluster: names, slot quotas, who is an admin, and their tokens kept only as hashes.

A class shares one cluster: each student gets a name and a token of their own (``flinkbench users
add``), the teacher keeps the cluster token, which is the admin's. The table is plain data kept in the
cluster's HA storage (runtime.ha.services) so a standby leader knows every user; this module holds no
I/O. A token is shown once, when the user is added; the table keeps its first characters (its id, to
find the user without trying every hash) and a salted scrypt hash of the whole, compared in constant
time. Each write makes a new table with a higher ``version``, so a reader can tell an older copy of the
stored table from the one it holds.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field, replace

from runtime.errors import FlinkbenchError
from runtime.security import new_token, tokens_match

#: the owner of jobs submitted with the cluster token (a name no user can take)
CLUSTER_ADMIN = "admin"
#: how another user's slot shows to a user: taken, without its job's id or name
HIDDEN_JOB = "another-user"
HIDDEN_JOB_NAME = "(another user)"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
TOKEN_ID_CHARS = 8  # public prefix of a token that names its user in the table
SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1}
SALT_BYTES = 16


class UserError(FlinkbenchError, ValueError):
    """A user that cannot be added or removed as asked; the text names the user and why."""


class UnknownUser(UserError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Caller:
    """Who makes a request: a user's name, and whether they may see and control everything."""
    name: str
    admin: bool


@dataclass(frozen=True)
class ClusterTokenOnly:
    """Who a token names in a process that has no users (the history server): the cluster token is the
    admin's, any other token no one's."""
    cluster_token: str

    def identify(self, token: str | None) -> Caller | None:
        return Caller(CLUSTER_ADMIN, True) if tokens_match(self.cluster_token, token) else None


@dataclass(frozen=True)
class User:
    """One user: their slot quota (None: no limit), whether they administer the cluster, and their token's id
    and salted hash."""
    name: str
    slots: int | None
    admin: bool
    token_id: str
    salt: str
    token_hash: str

    def matches(self, token: str) -> bool:
        """Whether ``token`` is this user's (scrypt of it with the salt, compared in constant time)."""
        return hmac.compare_digest(self.token_hash, _hash(token, self.salt))

    def caller(self) -> Caller:
        return Caller(self.name, self.admin)

    def public(self) -> dict:
        """What may be shown about the user: never the hash or the token id."""
        return {"name": self.name, "slots": self.slots, "admin": self.admin}


@dataclass(frozen=True)
class UserTable:
    """Every user of the cluster by name, and the table's version (raised by each write)."""
    users: dict[str, User] = field(default_factory=dict)
    version: int = 0

    def add(self, name: str, slots: int | None, admin: bool) -> tuple[UserTable, str]:
        """A table with ``name`` added, and the new user's token (shown once). UserError names a name that
        is taken or malformed, or a quota that is not a positive number."""
        check_name(name)
        if name in self.users:
            raise UserError(f"user '{name}' exists already: remove it first to give it a new token")
        if slots is not None and slots < 1:
            raise UserError(f"user '{name}': a slot quota must be at least 1, got {slots}")
        token = new_token()
        while any(u.token_id == token[:TOKEN_ID_CHARS] for u in self.users.values()):
            token = new_token()
        salt = base64.b64encode(secrets.token_bytes(SALT_BYTES)).decode()
        user = User(name, slots, admin, token[:TOKEN_ID_CHARS], salt, _hash(token, salt))
        return replace(self, users={**self.users, name: user}, version=self.version + 1), token

    def remove(self, name: str) -> UserTable:
        if name not in self.users:
            raise UnknownUser(f"no user '{name}' on this cluster ('flinkbench users list' shows them)")
        return replace(self, users={n: u for n, u in self.users.items() if n != name}, version=self.version + 1)

    def find(self, token: str) -> User | None:
        """The user whose token this is, or None (one hash computed, not one per user)."""
        found = next((u for u in self.users.values() if u.token_id == token[:TOKEN_ID_CHARS]), None)
        return found if found is not None and found.matches(token) else None

    def quotas(self) -> dict[str, int | None]:
        return {name: user.slots for name, user in self.users.items()}

    def to_plain(self) -> dict:
        return {"version": self.version, "users": [vars(u) for u in self.users.values()]}

    @classmethod
    def from_plain(cls, data: dict | None) -> UserTable:
        """The table as stored; an empty one for nothing stored."""
        if not data:
            return cls()
        return cls({u["name"]: User(**u) for u in data.get("users", [])}, int(data.get("version", 0)))


def check_name(name: str) -> None:
    if name == CLUSTER_ADMIN:
        raise UserError(f"the name '{CLUSTER_ADMIN}' is the cluster token's holder: choose another "
                        "(add a teacher with --admin)")
    if not NAME.fullmatch(name or ""):
        raise UserError(f"user name {name!r} must be 1-64 letters, digits or _.@- starting with a letter or digit")


def _hash(token: str, salt: str) -> str:
    digest = hashlib.scrypt(token.encode(), salt=base64.b64decode(salt), dklen=32, **SCRYPT)
    return base64.b64encode(digest).decode()

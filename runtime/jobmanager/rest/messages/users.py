"""The cluster's users (Flinkbench's own: Flink has no users): who they are, their quotas, a new user's token."""
from __future__ import annotations

from runtime.jobmanager.rest.fields import F, message


@message
class UserInfo:
    name: str = F("name")
    slots: int | None = F("slots", doc="the user's slot quota; null: no limit")
    admin: bool = F("admin", doc="sees and controls every user's jobs")


@message
class UsersInfo:
    users: list[UserInfo] = F("users")


@message
class UserAddRequestBody:
    name: str = F("name", doc="1-64 letters, digits or _.@-")
    slots: int | None = F("slots", default=None, doc="slot quota; null or left out: no limit")
    admin: bool = F("admin", default=False)


@message
class UserAddedResponseBody:
    """The new user and their token: shown this once, the cluster keeps only its hash."""
    name: str = F("name")
    slots: int | None = F("slots")
    admin: bool = F("admin")
    token: str = F("token")


@message
class UserJobInfo:
    """One job in the class view: what a teacher checks at a glance."""
    jid: str = F("jid")
    name: str = F("name")
    state: str = F("state")
    restarts: int = F("restarts")
    parallelism: int = F("parallelism")
    slots: int = F("slots", doc="slots the job holds now")
    last_exception: str | None = F("last-exception", doc="the last line of its latest failure, if any")
    last_exception_time: int | None = F("last-exception-time", doc="ms since the epoch")


@message
class UserOverview:
    name: str = F("name")
    slots: int | None = F("slots", doc="the user's slot quota; null: no limit")
    admin: bool = F("admin")
    slots_held: int = F("slots-held", doc="slots the user's jobs hold now")
    known: bool = F("known", doc="false for jobs of a user since removed (or of the cluster token's holder)")
    jobs: list[UserJobInfo] = F("jobs")


@message
class ClassOverview:
    """Every user with their jobs, slots, restarts and latest exceptions (an admin's view)."""
    users: list[UserOverview] = F("users")

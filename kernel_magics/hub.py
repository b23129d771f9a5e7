"""A JupyterHub in front of a class on one Flinkbench cluster: each student's server gets their own token.

In the hub's ``jupyterhub_config.py`` (the teacher's; the hub holds the cluster token, the students never
see it)::

    from kernel_magics.hub import ClassCluster

    ClassCluster("http://127.0.0.1:8081", token_file="/srv/flinkbench/token",
                 tokens_dir="/srv/flinkbench/students", slots=2).configure(c)

Before the hub starts a student's server, :meth:`ClassCluster.pre_spawn_hook` makes sure the student is a
user of the cluster (``POST /users`` with the cluster token, as ``flinkbench users add NAME --slots N
-o FILE`` does; hub admins are added ``--admin``), keeps the token in ``tokens_dir/NAME`` (owner-only, and
owned by the student's system user when there is one), and gives the server ``FLINKBENCH_JOBMANAGER_URL``
and ``FLINKBENCH_TOKEN_FILE``: ``%flink connect`` with no arguments, every ``%%flink`` cell, the side
panel and ``flinkbench`` in a terminal then work as that student. Nobody copies a token: a student added
earlier by the teacher keeps their quota; one whose token file is gone gets a new token.
"""
from __future__ import annotations

import asyncio
import os
import pwd
from pathlib import Path

from runtime.client import RestClient
from runtime.errors import ClusterError
from runtime.security import read_token_file, write_token_file
from runtime.users import NAME


class ClassCluster:
    """The class's cluster as JupyterHub's spawners see it."""

    def __init__(self, jobmanager_url: str, token_file: str, tokens_dir: str, slots: int | None = None,
                 admins: frozenset[str] = frozenset()):
        self.url, self.token_file, self.tokens_dir = jobmanager_url.rstrip("/"), token_file, Path(tokens_dir)
        self.slots, self.admins = slots, admins

    def configure(self, c) -> None:
        """Install the hook in a JupyterHub configuration (``c``); hub admins become cluster admins too."""
        c.Spawner.pre_spawn_hook = self.pre_spawn_hook
        self.admins = frozenset(self.admins | set(c.Authenticator.admin_users or ()))

    async def pre_spawn_hook(self, spawner) -> None:
        """JupyterHub calls this before starting ``spawner``'s server: the student's token file and environment."""
        name = spawner.user.name
        token_file = await asyncio.to_thread(self.student_token, name)
        spawner.environment.update({"FLINKBENCH_JOBMANAGER_URL": self.url, "FLINKBENCH_TOKEN_FILE": str(token_file)})

    def student_token(self, name: str) -> Path:
        """``tokens_dir/NAME`` holding the student's own token, the student added to the cluster first when
        needed. ClusterError names the student and what the JobManager answered."""
        if not NAME.fullmatch(name):
            raise ClusterError(f"hub user {name!r} cannot be a Flinkbench user: names are 1-64 letters, digits "
                               "or _.@- starting with a letter or digit")
        path = self.tokens_dir / name
        with RestClient(self.url, token_file=self.token_file) as admin:
            known = {u["name"]: u for u in admin.get("/users")["users"]}
            if name in known and path.exists() and self._works(path):
                return path
            user = known.get(name)
            if user is not None:  # added by the teacher, its token shown once and not kept here: a new one
                admin.request("DELETE", f"/users/{name}")
            slots = user["slots"] if user else self.slots
            added = admin.post("/users", {"name": name, "slots": slots,
                                          "admin": bool(user["admin"]) if user else name in self.admins})
        self.tokens_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_token_file(str(path), added["token"])
        _give_to(path, name)
        return path

    def _works(self, path: Path) -> bool:
        try:
            with RestClient(self.url, token=read_token_file(str(path))) as client:
                client.get("/users")
        except (ClusterError, OSError, ValueError):
            return False
        return True


def _give_to(path: Path, name: str) -> None:
    """Let the student's system user own their token file, where the spawner runs servers as system users."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return  # servers run as the hub's own user (SimpleLocalProcessSpawner): nothing to hand over
    os.chown(path, entry.pw_uid, entry.pw_gid)

"""REST handlers for the cluster's users (runtime.users): an admin adds and removes them; each user sees
themselves. The table is the leader's to change (runtime.jobmanager.user_registry)."""
from __future__ import annotations

from runtime.jobmanager.gateways import UnknownJob
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, UserGateway, operation
from runtime.jobmanager.rest.class_view import class_overview, slots_by_job
from runtime.users import User


def info(user: User) -> m.UserInfo:
    return m.UserInfo(name=user.name, slots=user.slots, admin=user.admin)


class UsersHandlerBase(ApiHandler):
    @property
    def users(self) -> UserGateway:
        if self.ctx.users is None:
            raise HTTPError(404, "this JobManager keeps no users")
        return self.ctx.users


class UsersHandler(UsersHandlerBase):
    @operation("The cluster's users with their slot quotas (a user who is no admin sees themselves).", m.UsersInfo)
    def get(self):
        return m.UsersInfo(users=[info(u) for u in self.users.users()
                                  if self.caller.admin or u.name == self.caller.name])

    @operation("Add a user (admins only): the answer holds their token, shown this once.",
               m.UserAddedResponseBody, status=201, request=m.UserAddRequestBody)
    async def post(self):
        self.gateway.require_admin("adding a user")
        body = self.body(m.UserAddRequestBody)
        user, token = await self.users.add(body.name, body.slots, body.admin)
        return m.UserAddedResponseBody(name=user.name, slots=user.slots, admin=user.admin, token=token)


class UserHandler(UsersHandlerBase):
    admin_only = "removing a user"

    @operation("Remove a user (admins only): their token stops working; their running jobs run on.", None)
    async def delete(self, name):
        await self.users.remove(name)
        return {}


class ClassOverviewHandler(UsersHandlerBase):
    admin_only = "the class overview (every user's jobs)"

    @operation("Every user with their jobs: slots held, restarts, latest exception (admins only).", m.ClassOverview)
    def get(self):
        jobs = self.gateway.list_jobs()
        latest = {}
        for job in jobs:
            try:
                history = self.gateway.job_exceptions(job.job_id)
            except UnknownJob:  # ended and gone between the two calls
                history = []
            latest[job.job_id] = history[0] if history else None
        return class_overview(self.users.users(), jobs, slots_by_job(self.gateway.request_task_managers()), latest)

"""Users on one shared cluster (real JobManager, TaskManagers and Spark): each user's REST calls, event stream
and slot view show their own jobs only (another's job is 404, as one that does not exist), a job beyond a
user's slot quota is refused at submission naming the quota and what the user holds while the others' jobs
run on, and the admin sees and controls all. Users are added and removed with the CLI as the README shows."""
from __future__ import annotations

import json
import secrets
import subprocess
import sys

import pytest
import websocket

from runtime.api.environment import StreamExecutionEnvironment
from runtime.client import RestClient
from runtime.errors import ClusterError
from runtime.users import HIDDEN_JOB, HIDDEN_JOB_NAME
from tests.helpers import readme
from tests.helpers.clusters import wait_until
from tests.helpers.readme_inventory import USERS, run_by
from tests.integration.test_cli import cli_environment
from tests.integration.test_cluster_core import seq_source

SHOWN = run_by(USERS)  # the README's `flinkbench users` lines
RAN: set[str] = set()


@pytest.fixture
def home(tmp_path):
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def flinkbench(home, *args: str) -> subprocess.CompletedProcess:
    """``flinkbench args``, only as an instance of a command line the README shows."""
    lines = [line for line in SHOWN if readme.matches(line, ["flinkbench", *args])]
    assert lines, f"'flinkbench {' '.join(args)}' is not a command the README shows: {SHOWN}"
    RAN.update(lines)
    return subprocess.run([sys.executable, "-m", "runtime.cli", *args], env=cli_environment(home),
                          capture_output=True, text=True, timeout=120, cwd=home)


def add_user(cluster, home, name: str, *options: str) -> str:
    """``flinkbench users add`` against the cluster with its token file; the token it printed."""
    done = flinkbench(home, "users", "add", name, *options, "-m", cluster.url, "--token-file", cluster.token_file)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Added user {name} ("), done.stdout
    return done.stdout.strip().splitlines()[-1]


def user_client(cluster, token: str) -> RestClient:
    return RestClient(cluster.url, token=token)


def start_endless(client: RestClient, name: str, parallelism: int = 1):
    env = StreamExecutionEnvironment(client)
    env.set_parallelism(parallelism)
    seq_source(env, rows=None, rows_per_second=50).blackhole()
    job = env.execute_async(name)
    wait_until(lambda: job.status() == "RUNNING", 180, f"{name} running")
    return job


def error_of(call) -> ClusterError:
    with pytest.raises(ClusterError) as refused:
        call()
    return refused.value


def first_stream_message(cluster, token: str) -> dict:
    ws = websocket.create_connection(cluster.url.replace("http://", "ws://") + "/events",
                                     header=[f"Authorization: Bearer {token}"], timeout=60)
    try:
        return json.loads(ws.recv())
    finally:
        ws.close()


@pytest.mark.timeout(600)
def test_users_see_and_control_their_own_jobs_only_and_a_quota_refuses_a_job_beyond_it(cluster, home):
    suffix = secrets.token_hex(3)
    alice_name, bob_name = f"alice-{suffix}", f"bob-{suffix}"
    alice = user_client(cluster, add_user(cluster, home, alice_name, "--slots", "1"))
    bob = user_client(cluster, add_user(cluster, home, bob_name, "--slots", "2"))
    a_job = start_endless(alice, f"alice's job {suffix}")
    b_job = start_endless(bob, f"bob's job {suffix}")
    try:
        for path in ("", "/status", "/checkpoints", "/exceptions"):
            assert error_of(lambda p=path: bob.get(f"/jobs/{a_job.job_id}{p}")).status == 404
        refused = error_of(lambda: bob.patch(f"/jobs/{a_job.job_id}?mode=cancel"))
        assert refused.status == 404 and str(refused) == f"Job {a_job.job_id} not found"
        assert [j["jid"] for j in bob.jobs()] == [b_job.job_id]
        assert [j["jid"] for j in alice.jobs()] == [a_job.job_id]
        admin_sees = {j["jid"] for j in cluster.client.jobs()}
        assert {a_job.job_id, b_job.job_id} <= admin_sees

        slots = [s for tm in bob.get("/taskmanagers")["taskmanagers"] for s in tm["slots"] if s["allocation-id"]]
        theirs = [s for s in slots if s["job-id"] != b_job.job_id]
        assert theirs and all(s["job-id"] == HIDDEN_JOB and s["job-name"] == HIDDEN_JOB_NAME and not s["tasks"]
                              for s in theirs), slots
        snapshot = first_stream_message(cluster, bob.token)
        assert [j["jid"] for j in snapshot["jobs"]] == [b_job.job_id]
        assert a_job.job_id not in json.dumps(snapshot)

        over = error_of(lambda: start_endless(alice, f"one job too many {suffix}"))
        assert over.status == 400, over
        assert (f"slot quota exceeded: user '{alice_name}' may hold 1 slot and holds 1 ('alice's job {suffix}' 1); "
                f"job 'one job too many {suffix}' needs 1 more") in str(over)
        assert b_job.status() == "RUNNING" and a_job.status() == "RUNNING"

        overview = {u["name"]: u for u in cluster.client.get("/users/overview")["users"]}
        assert [(j["jid"], j["state"], j["slots"]) for j in overview[alice_name]["jobs"]] == [
            (a_job.job_id, "RUNNING", 1)]
        assert overview[bob_name]["slots-held"] == 1 and overview[bob_name]["slots"] == 2
        assert error_of(lambda: bob.get("/users/overview")).status == 403

        listed = flinkbench(home, "users", "list", "-m", cluster.url, "--token-file", cluster.token_file)
        assert listed.returncode == 0 and f"{alice_name}" in listed.stdout and f"{bob_name}" in listed.stdout
        assert [u["name"] for u in bob.get("/users")["users"]] == [bob_name], "a user sees themselves"
        removed = flinkbench(home, "users", "remove", bob_name, "-m", cluster.url, "--token-file", cluster.token_file)
        assert removed.returncode == 0, removed.stderr
        assert error_of(lambda: bob.get("/overview")).status == 401
        assert cluster.client.job(b_job.job_id).status() == "RUNNING", "a removed user's job runs on for the admin"
    finally:
        for job in (a_job, b_job):
            cluster.client.job(job.job_id).cancel()
    assert a_job.wait(120) == "CANCELED"
    flinkbench(home, "users", "remove", alice_name, "-m", cluster.url, "--token-file", cluster.token_file)


def test_a_user_may_not_add_users_or_use_the_taskmanagers_channel(cluster, home):
    name = f"carol-{secrets.token_hex(3)}"
    carol = user_client(cluster, add_user(cluster, home, name))
    try:
        refused = error_of(lambda: carol.post("/users", {"name": f"{name}-admin", "admin": True}))
        assert refused.status == 403 and f"user '{name}' may not do it" in str(refused)
        with pytest.raises(websocket.WebSocketBadStatusException) as control:
            websocket.create_connection(cluster.url.replace("http://", "ws://") + "/control",
                                        header=[f"Authorization: Bearer {carol.token}"], timeout=30)
        assert control.value.status_code == 403
        taken = flinkbench(home, "users", "add", name, "-m", cluster.url, "--token-file", cluster.token_file)
        assert taken.returncode == 2 and f"user '{name}' exists already" in taken.stderr
    finally:
        flinkbench(home, "users", "remove", name, "-m", cluster.url, "--token-file", cluster.token_file)


def test_the_hubs_hook_gives_each_student_a_token_file_keeping_the_teachers_quota(cluster, home, tmp_path):
    """kernel_magics.hub without a hub: a student the teacher added keeps their quota and gets a token the hub
    keeps; the next spawn reuses it; a student new to the cluster gets the hook's quota; a hub name that cannot
    be a Flinkbench user is refused naming it."""
    from kernel_magics.hub import ClassCluster

    suffix = secrets.token_hex(3)
    dora, eli = f"dora-{suffix}", f"eli-{suffix}"
    add_user(cluster, home, dora, "--slots", "3")  # its token printed once, kept nowhere
    hook = ClassCluster(cluster.url, cluster.token_file, str(tmp_path / "students"), slots=1)
    try:
        first = hook.student_token(dora)
        token = first.read_text()
        assert oct(first.stat().st_mode & 0o777) == "0o600"
        assert hook.student_token(dora).read_text() == token, "the next spawn reuses the token the hub keeps"
        assert [u["name"] for u in user_client(cluster, token).get("/users")["users"]] == [dora]
        hook.student_token(eli)
        quotas = {u["name"]: u["slots"] for u in cluster.client.get("/users")["users"]}
        assert quotas[dora] == 3 and quotas[eli] == 1
        with pytest.raises(ClusterError, match="hub user 'no spaces' cannot be a Flinkbench user"):
            hook.student_token("no spaces")
    finally:
        for name in (dora, eli):
            flinkbench(home, "users", "remove", name, "-m", cluster.url, "--token-file", cluster.token_file)


def test_every_users_command_the_readme_shows_was_run():
    assert set(SHOWN) == RAN, f"the README shows users commands this module did not run: {set(SHOWN) - RAN}"

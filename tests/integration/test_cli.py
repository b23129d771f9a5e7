"""The flinkbench command against real processes, run as the README shows it: every invocation here is an instance
of a command line of the README (tests/helpers/readme.py), and every such line is run. A detached local cluster
started from a config file and stopped again, one in the foreground stopped with Ctrl-C, a JobManager and a
TaskManager started by hand, and Flink's job verbs (run attached, detached and from a savepoint, list, checkpoint,
savepoint and its disposal, cancel, stop --drain, and stop with a savepoint over REST with curl) driven against a
live cluster."""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import types
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from runtime.client import RestClient
from tests.helpers import readme
from tests.helpers.clusters import wait_until
from tests.helpers.events import EventRecorder
from tests.helpers.ports import free_port
from tests.helpers.readme_inventory import CLI, run_by

REPO = Path(__file__).resolve().parents[2]
SHOWN = [c for c in run_by(CLI) if c.startswith("flinkbench ")]  # the README's flinkbench command lines
RAN: set[str] = set()  # those run so far


@pytest.fixture
def home(tmp_path) -> Path:
    """A HOME of its own: `cluster start` records its cluster under ~/.flinkbench."""
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def as_shown(args: tuple[str, ...] | list[str]) -> list[str]:
    """The command ``flinkbench args`` runs as: only as an instance of a command line the README shows."""
    lines = [line for line in SHOWN if readme.matches(line, ["flinkbench", *args])]
    assert lines, f"'flinkbench {' '.join(args)}' is not a command the README shows: {SHOWN}"
    RAN.update(lines)
    return [sys.executable, "-m", "runtime.cli", *args]


def cli_environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLINKBENCH_")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    return env


def flinkbench(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(as_shown(args), env=cli_environment(home), capture_output=True, text=True,
                          timeout=timeout, cwd=home)


def in_background(home: Path, args: list[str], log: Path) -> subprocess.Popen:
    """A flinkbench process in the foreground of a session of its own (signalled as a terminal would)."""
    with open(log, "wb") as out:
        return subprocess.Popen(as_shown(args), env=cli_environment(home), stdout=out, stderr=subprocess.STDOUT,
                                cwd=home, start_new_session=True)


def ended(process: subprocess.Popen, sig: int, timeout: float = 60) -> int:
    """Send ``sig`` to the process and wait for it to end (killing its group if it does not in time)."""
    process.send_signal(sig)
    try:
        return process.wait(timeout)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def recorded(home: Path) -> dict | None:
    path = home / ".flinkbench" / "current-cluster.json"
    return json.loads(path.read_text()) if path.exists() else None


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_cluster_start_detached_honours_its_conf_file_and_cluster_stop_ends_it(home, tmp_path):
    port = free_port()
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text(f"rest.port: {port}\nheartbeat:\n  timeout: 7 s\n")
    started = flinkbench(home, "cluster", "start", "--taskmanagers", "0", "--conf", str(conf), "--detach")
    assert started.returncode == 0, started.stderr
    assert f"cluster running: JobManager http://127.0.0.1:{port}," in started.stdout
    info = recorded(home)
    try:
        config = RestClient(info["url"], token_file=info["token_file"]).get("/jobmanager/config")
        assert {"key": "heartbeat.timeout", "value": "7 s"} in config
        again = flinkbench(home, "cluster", "start", "--taskmanagers", "0", "--detach")
        assert again.returncode == 2 and f"already running at http://127.0.0.1:{port}" in again.stderr
        assert "'flinkbench dashboard' prints a link" in started.stdout and "<" not in started.stdout
        link = flinkbench(home, "dashboard")
        assert link.returncode == 0 and "opens once" in link.stderr, link.stderr
        assert_logs_in(link.stdout.strip(), f"http://127.0.0.1:{port}")
    finally:
        stopped = flinkbench(home, "cluster", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not alive(info["pid"]) and recorded(home) is None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    nothing = flinkbench(home, "cluster", "stop")
    assert nothing.returncode == 2 and "no cluster to stop" in nothing.stderr


def assert_logs_in(link: str, jobmanager: str) -> None:
    """The link logs a browser in once: a redirect to the dashboard that sets the token cookie."""
    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    assert link.startswith(f"{jobmanager}/dashboard/login?code="), link
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.build_opener(Stay).open(link, timeout=30)
    assert answer.value.code == 302 and answer.value.headers["Location"] == "/dashboard"
    assert "HttpOnly" in answer.value.headers["Set-Cookie"]


BOUNDED = """
from runtime.api.environment import StreamExecutionEnvironment
from runtime.api.functions import col

env = StreamExecutionEnvironment()
env.datagen("seq BIGINT", number_of_rows=2_000, fields={"seq": {"kind": "sequence"}}).filter(col("seq") % 2 == 0).collect()
env.execute("bounded evens")
"""

UNBOUNDED = """
import sys
from runtime.api.environment import StreamExecutionEnvironment

env = StreamExecutionEnvironment()
env.datagen("seq BIGINT", rows_per_second=500, fields={"seq": {"kind": "sequence"}}).blackhole()
env.execute(sys.argv[1])
"""


SHIPPED = """
from runtime.api.environment import StreamExecutionEnvironment


def numerals(frame):
    import cli_words, roman  # shipped with -pyfs, installed from -pyreq: neither is on the TaskManagers
    frame["word"] = [cli_words.word(roman.toRoman(n + 1)) for n in frame["seq"]]
    return frame


env = StreamExecutionEnvironment()
(env.datagen("seq BIGINT", number_of_rows=12, fields={"seq": {"kind": "sequence"}})
    .map(numerals, schema="seq BIGINT, word STRING").collect())
print("WORDS", sorted(env.execute_async("shipped numerals").results(timeout=300).column("word").to_pylist()))
"""


def run_with_shipped_dependencies(home: Path, tmp_path: Path, target: list[str]) -> None:
    """``flinkbench run -pyfs ... -pyreq ...``: a program whose map function imports a shipped module and an
    installed package."""
    (tmp_path / "shipped.py").write_text(SHIPPED)
    (tmp_path / "cli_words.py").write_text("def word(text):\n    return f'<{text}>'\n")
    (tmp_path / "requirements.txt").write_text("roman\n")
    done = flinkbench(home, "run", *target, "-pyfs", str(tmp_path / "cli_words.py"), "-pyreq",
                      str(tmp_path / "requirements.txt"), str(tmp_path / "shipped.py"), timeout=600)
    assert done.returncode == 0, done.stderr
    expected = sorted(f"<{r}>" for r in ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"])
    assert f"WORDS {expected}" in done.stdout, done.stdout


def submitted_id(out: str) -> str:
    match = re.search(r"Job has been submitted with JobID ([0-9a-f]{32})", out)
    assert match, out
    return match.group(1)


def test_flink_verbs_against_a_live_cluster(home, tmp_path):
    (tmp_path / "bounded.py").write_text(BOUNDED)
    (tmp_path / "unbounded.py").write_text(UNBOUNDED)
    assert flinkbench(home, "--version").stdout.startswith("flinkbench ")
    started = flinkbench(home, "cluster", "start", "--taskmanagers", "1", "--slots", "2", "--detach")
    assert started.returncode == 0, started.stderr
    info = recorded(home)
    rest = RestClient(info["url"], token_file=info["token_file"])
    target = ["-m", info["url"].removeprefix("http://"), "--token-file", info["token_file"]]
    try:
        attached = flinkbench(home, "run", *target, "-p", "2", str(tmp_path / "bounded.py"))
        assert attached.returncode == 0, attached.stderr
        bounded = submitted_id(attached.stdout)
        assert re.search(rf"Job {bounded} \(bounded evens\) FINISHED after", attached.stdout)
        assert {v["parallelism"] for v in rest.get(f"/jobs/{bounded}")["vertices"]} == {2}
        run_with_shipped_dependencies(home, tmp_path, target)

        detached = flinkbench(home, "run", "-D", "execution.checkpointing.interval=1 s", "--detached",
                              str(tmp_path / "unbounded.py"), "endless")
        assert detached.returncode == 0, detached.stderr
        endless = submitted_id(detached.stdout)
        assert rest.get(f"/jobs/{endless}/checkpoints/config")["interval"] == 1000
        wait_until(lambda: rest.get(f"/jobs/{endless}")["state"] == "RUNNING", 120, "the detached job to run")

        running = flinkbench(home, "list", "-r").stdout  # found through the recorded cluster, no flags
        assert f": {endless} : endless (RUNNING)" in running and bounded not in running
        every = flinkbench(home, "list", "-a", *target).stdout
        assert f": {bounded} : bounded evens (FINISHED)" in every and "Terminated Jobs" in every

        manual = flinkbench(home, "checkpoint", *target, endless)
        assert manual.returncode == 0, manual.stderr
        checkpoint_id = int(re.search(rf"Checkpoint (\d+) for job {endless} completed\.", manual.stdout).group(1))
        history = rest.get(f"/jobs/{endless}/checkpoints")["history"]
        assert any(c["id"] == checkpoint_id and c["status"] == "COMPLETED" for c in history)

        taken = flinkbench(home, "savepoint", *target, endless, str(tmp_path / "savepoints"))
        assert taken.returncode == 0 and f"savepoint of {endless} completed: file://" in taken.stdout, taken.stderr
        location = taken.stdout.split("completed: ")[1].split()[0]
        assert Path(location.removeprefix("file://"), "_metadata").exists()
        disposed = flinkbench(home, "savepoint", *target, "--dispose", location)
        assert disposed.returncode == 0 and "disposed" in disposed.stdout, disposed.stderr
        assert not Path(location.removeprefix("file://")).exists()

        doomed = submitted_id(flinkbench(home, "run", *target, "--detached", str(tmp_path / "unbounded.py"),
                                         "doomed").stdout)
        wait_until(lambda: rest.get(f"/jobs/{doomed}")["state"] == "RUNNING", 120, "the second detached job to run")
        cancelled = flinkbench(home, "cancel", *target, doomed)
        assert cancelled.returncode == 0 and f"Cancelled job {doomed}." in cancelled.stdout
        wait_until(lambda: rest.get(f"/jobs/{doomed}")["state"] == "CANCELED", 60, "the job to be cancelled")

        drained = flinkbench(home, "stop", *target, "--drain", "-p", str(tmp_path / "final"), endless)
        assert drained.returncode == 0 and f"Job {endless} stopped after draining." in drained.stdout, drained.stderr
        wait_until(lambda: rest.get(f"/jobs/{endless}")["state"] == "FINISHED", 60, "the drained job to finish")

        final = drained.stdout.split("completed: ")[1].split()[0]
        resumed = submitted_id(flinkbench(home, "run", "-s", final, "--detached", str(tmp_path / "unbounded.py"),
                                          "resumed").stdout)
        wait_until(lambda: rest.get(f"/jobs/{resumed}")["state"] == "RUNNING", 120, "the resumed job to run")
        assert curl_stop_with_savepoint(info, resumed, tmp_path / "sp").startswith("file://")
        wait_until(lambda: rest.get(f"/jobs/{resumed}")["state"] == "FINISHED", 60, "the job stopped over REST to end")
    finally:
        stopped = flinkbench(home, "cluster", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not alive(info["pid"])


def curl_stop_with_savepoint(info: dict, job_id: str, target: Path) -> str:
    """The README's two curl lines, as shown: stop the job with a savepoint, then ask where it went. Their
    placeholders are filled in: TOKEN_FILE, 'Bearer ...', $JM, $JOB, $REQUEST_ID, and /tmp/sp (a folder of this
    test's rather than one every user of the machine shares)."""
    stop, poll = [c for c in run_by(CLI) if c.startswith("curl ")]
    token = Path(info["token_file"]).read_text().strip()
    env = {**os.environ, "JM": info["url"], "JOB": job_id}

    def curl(line: str, **more: str) -> dict:
        command = line.replace("TOKEN_FILE", shlex.quote(info["token_file"])).replace("Bearer ...", f"Bearer {token}")
        done = subprocess.run(["bash", "-c", command.replace("/tmp/sp", str(target))], env={**env, **more},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{line}: {done.stderr}"
        return json.loads(done.stdout)

    request_id = curl(stop)["request-id"]
    answer = wait_until(lambda: (a := curl(poll, REQUEST_ID=request_id))["status"]["id"] == "COMPLETED" and a, 120,
                        "the savepoint to complete")
    return answer["operation"]["location"]


def test_the_resource_provider_example_runs_in_the_foreground_until_ctrl_c(home, tmp_path):
    """The README's line as it is, in the foreground; Ctrl-C stops it and a clean stop leaves no folder behind."""
    [line] = [c for c in SHOWN if "resourcemanager.taskmanager-timeout" in c]
    log = tmp_path / "cluster.out"
    process = in_background(home, shlex.split(line)[1:], log)
    try:
        wait_until(lambda: "stops it." in log.read_text() or process.poll() is not None, 120, "the cluster to start")
        info = recorded(home)
        assert info is not None, log.read_text()
        config = RestClient(info["url"], token_file=info["token_file"]).get("/jobmanager/config")
        assert {"key": "resourcemanager.taskmanager-timeout", "value": "10 s"} in config
        assert {"key": "resourcemanager.provider", "value": "local"} in config
    finally:
        code = ended(process, signal.SIGINT)
    out = log.read_text()
    assert code == 0 and out.rstrip().endswith("cluster stopped"), out
    assert not Path(info["logs"]).exists(), "a cluster that stopped cleanly leaves no folder behind"


def test_a_jobmanager_and_a_taskmanager_started_by_hand_stop_without_a_loss(home, tmp_path):
    """The README's one-process-at-a-time commands: a TaskManager stopped on purpose deregisters (it is not
    lost, so nothing replaces it) and both processes end cleanly."""
    port = free_port()
    conf = tmp_path / "conf.yaml"
    conf.write_text(f"rest.port: {port}\ncluster.working-dir: {tmp_path / 'work'}\n")
    jobmanager = in_background(home, ["jobmanager", "-c", str(conf), "-D", "heartbeat.interval=500 ms"],
                               tmp_path / "jm.out")
    taskmanager = None
    try:
        token_file = tmp_path / "work" / "token"
        wait_until(lambda: token_file.exists() and "JobManager at" in (tmp_path / "jm.out").read_text(), 120,
                   "the JobManager to serve")
        rest = RestClient(f"http://127.0.0.1:{port}", token_file=str(token_file))
        taskmanager = in_background(home, ["taskmanager", "-m", f"127.0.0.1:{port}", "--token-file", str(token_file),
                                           "--slots", "1"], tmp_path / "tm.out")
        wait_until(lambda: "Spark session up" in (tmp_path / "jm.out").read_text(), 300, "the TaskManager's Spark")
        [tm] = rest.get("/taskmanagers")["taskmanagers"]
        recorder = EventRecorder(types.SimpleNamespace(url=f"http://127.0.0.1:{port}", token=rest.token))
        assert ended(taskmanager, signal.SIGTERM) == 0, (tmp_path / "tm.out").read_text()[-3000:]
        left = wait_until(lambda: recorder.of_type("TaskManagerDeregistered"), 30, "the TaskManager to deregister")
        recorder.close()
        assert left[0]["tm_id"] == tm["id"] and not recorder.of_type("TaskManagerLost")
        assert rest.get("/taskmanagers")["taskmanagers"] == [], "gone, not listed as lost"
    finally:
        if taskmanager is not None and taskmanager.poll() is None:
            ended(taskmanager, signal.SIGKILL)
        code = ended(jobmanager, signal.SIGTERM)
    assert code == 0, (tmp_path / "jm.out").read_text()[-3000:]


def test_every_flinkbench_command_the_readme_shows_was_run(request):
    mine = [item for item in request.session.items if item.module is request.module]
    if len(mine) < len([name for name in dir(request.module) if name.startswith("test_")]):
        pytest.skip("only some of this module's tests were chosen: the README's commands are not all run")
    assert set(SHOWN) <= RAN, f"the README shows flinkbench commands this module did not run: {set(SHOWN) - RAN}"

"""Job commands of ``flinkbench``, as Flink's CLI has them: run, list, cancel, savepoint, checkpoint, stop;
and ``dashboard``, a one-time link to the web dashboard.

Each finds its cluster with :func:`target` and talks to it through runtime.client's REST client.
"""
from __future__ import annotations

import datetime
import os
import runpy
import sys

from runtime.cli.processes import jobmanager_url, recorded
from runtime import tls
from runtime.client import RestClient
from runtime.job_client import JobClient
from runtime.config import Configuration, parse_dynamic_properties
from runtime.errors import ClusterError, JobFailed, SubmissionError

RUNNING = ("RUNNING", "RESTARTING", "FAILING", "CANCELLING")
SCHEDULED = ("INITIALIZING", "CREATED", "SUSPENDED")
TERMINATED = ("FINISHED", "FAILED", "CANCELED")


def target(args) -> tuple[str, str | None, str | None]:
    """The JobManager URL(s), token file and CA certificate (with REST TLS): flags, else FLINKBENCH_*
    variables, else the recorded cluster."""
    url = args.jobmanager or os.environ.get("FLINKBENCH_JOBMANAGER_URL")
    token_file = args.token_file or os.environ.get("FLINKBENCH_TOKEN_FILE")
    trust_cert = tls.trust_from_environment()
    if not url and (current := recorded()):
        url, token_file = current["url"], token_file or current["token_file"]
        trust_cert = trust_cert or current.get("trust_cert")
    if not url:
        raise ClusterError("no cluster given: pass -m HOST:PORT --token-file F, or start one with "
                           "'flinkbench cluster start'")
    return jobmanager_url(url, tls.rest_enabled_in_environment()), token_file, trust_cert


def client(args) -> RestClient:
    url, token_file, trust_cert = target(args)
    return RestClient(url, token=None if token_file else os.environ.get("FLINKBENCH_TOKEN"), token_file=token_file,
                      trust_cert=trust_cert)


# -- run --------------------------------------------------------------------------------------
def run(args) -> int:
    """Run the program with this cluster as its environment's; unless detached, wait for its jobs."""
    from runtime.api.environment import ProgramContext, program_context

    url, token_file, trust_cert = target(args)
    config = {**job_settings(args.dynamic, args.parallelism), **python_settings(args)}
    if args.allow_non_restored_state:
        config["execution.state-recovery.ignore-unclaimed-state"] = "true"
    os.environ["FLINKBENCH_JOBMANAGER_URL"] = url
    if token_file:
        os.environ["FLINKBENCH_TOKEN_FILE"] = token_file
    if trust_cert:
        os.environ[tls.TRUST_CERT_ENV] = trust_cert
    context = ProgramContext(config, args.detached, args.from_savepoint,
                             on_submit=lambda job: print(f"Job has been submitted with JobID {job.job_id}", flush=True))
    sys.argv = [args.file, *args.args]
    with program_context(context):
        runpy.run_path(args.file, run_name="__main__")
    if not context.submitted:
        raise SubmissionError(f"{args.file} submitted no job: it should call env.execute() or env.execute_async()")
    if args.detached:
        return 0
    return 0 if all(_await_end(job) == "FINISHED" for job in context.submitted) else 1


def job_settings(dynamic: list[str], parallelism: int | None) -> dict[str, str]:
    """The program's job settings: every ``-D`` key and value checked as given (a bad one stops here, naming it,
    also when ``-p`` then sets the same key), then ``-p`` as ``parallelism.default``, as Flink's CLI applies it."""
    config = parse_dynamic_properties(dynamic)
    Configuration(config)
    if parallelism is not None:
        config["parallelism.default"] = str(parallelism)
        Configuration(config)
    return config


def python_settings(args) -> dict[str, str]:
    """``-pyfs``, ``-pyarch`` and ``-pyreq`` as the keys they stand for, their paths made absolute (the program
    may change its working directory before it submits)."""
    def absolute(item: str) -> str:  # path or path#rest: the path absolute, the rest (a target folder) kept
        path, mark, rest = item.partition("#")
        return os.path.abspath(path) + mark + rest

    settings = {}
    for key, value in (("python.files", args.py_files), ("python.archives", args.py_archives)):
        if value:
            settings[key] = ",".join(absolute(item) for item in value.split(",") if item.strip())
    if args.py_requirements:
        path, mark, cached = args.py_requirements.partition("#")
        settings["python.requirements"] = os.path.abspath(path) + (mark + os.path.abspath(cached) if cached else "")
    return settings


def _await_end(job: JobClient) -> str:
    """Wait for the job to end and print how it ended (Flink's attached mode); Ctrl-C stops waiting only."""
    try:
        state = job.wait()
    except JobFailed as err:
        print(f"Job {job.job_id} FAILED: {err.cause.strip()}", file=sys.stderr)
        return "FAILED"
    except KeyboardInterrupt:
        print(f"\nstopped waiting; job {job.job_id} goes on ('flinkbench cancel {job.job_id}' cancels it)")
        raise SystemExit(130) from None
    details = job.details()
    print(f"Job {job.job_id} ({details.get('name', '?')}) {state} after {details.get('duration', 0) / 1000:.1f} s")
    return state


# -- list -------------------------------------------------------------------------------------
def list_jobs(args) -> int:
    jobs = sorted(client(args).jobs(), key=lambda j: j.get("start-time", 0))
    sections = [("Running/Restarting Jobs", "running", RUNNING)]
    if not args.running:
        sections.append(("Scheduled Jobs", "scheduled", SCHEDULED))
    if args.all:
        sections.append(("Terminated Jobs", "terminated", TERMINATED))
    for title, word, states in sections:
        chosen = [j for j in jobs if j["state"] in states]
        if not chosen:
            print(f"No {word} jobs.")
            continue
        print(f" {title} ".center(62, "-"))
        for job in chosen:
            print(f"{_when(job.get('start-time'))} : {job['jid']} : {job['name']} ({job['state']})")
        print("-" * 62)
    return 0


def _when(millis: int | None) -> str:
    if not millis or millis < 0:
        return "--.--.---- --:--:--"
    return datetime.datetime.fromtimestamp(millis / 1000).strftime("%d.%m.%Y %H:%M:%S")


# -- one job ----------------------------------------------------------------------------------
def cancel(args) -> int:
    client(args).job(args.job_id).cancel()
    print(f"Cancelled job {args.job_id}.")
    return 0


def savepoint(args) -> int:
    rest = client(args)
    if args.dispose:
        rest.dispose_savepoint(args.dispose)
        print(f"Savepoint '{args.dispose}' disposed.")
        return 0
    location = rest.job(args.job_id).savepoint(args.target)
    print(f"savepoint of {args.job_id} completed: {location}")
    return 0


def checkpoint(args) -> int:
    checkpoint_id = client(args).job(args.job_id).checkpoint(full=args.full)
    print(f"Checkpoint {checkpoint_id} for job {args.job_id} completed.")
    return 0


def stop(args) -> int:
    location = client(args).job(args.job_id).savepoint(args.target, stop=True, drain=args.drain)
    print(f"savepoint of {args.job_id} completed: {location}")
    print(f"Job {args.job_id} stopped{' after draining' if args.drain else ''}.")
    return 0


# -- dashboard --------------------------------------------------------------------------------
def dashboard(args) -> int:
    """A link that logs a browser into the dashboard once (runtime.jobmanager.logins): the token stays in its file."""
    page = f"/dashboard?job={args.job_id}" if args.job_id else None
    link = client(args).post("/login-links", {"next": page} if page else {})
    print(link["url"])
    print(f"(opens once, within {link['expires-in-s'] / 60:g} minutes; run 'flinkbench dashboard' again for another)",
          file=sys.stderr)
    return 0

"""Spark Structured Streaming running the clicks query, each run in a fresh process of its own.

The same query as Flinkbench's clicks job (runtime.examples.clicks): generated columns from an offset, the
amount filter, 10 s tumbling event-time windows with a 1 s watermark lag, count and sum per user. Two jobs:

- throughput: a ``rate-micro-batch`` source of fixed micro-batches (``rows_per_batch`` over all cores) as fast
  as the query goes, into Spark's ``noop`` sink; with ``checkpoints`` in a checkpoint location of its own
  (Spark writes its offset and commit logs and state store every batch either way: without one, into a
  temporary folder);
- latency: Spark's ``rate`` source at ``rate`` rows/s with event time the wall clock, its windows delivered to
  the driver by ``foreachBatch``: the time each window arrives there, less its end, with the default trigger
  or a processing-time one.

A run is a child process (``python -m tests.benchmarks.structured_streaming JSON``) so that its process tree,
the driver's Python process with its JVM and Python workers, is the side's whole cost: the parent samples
its memory; the child samples its CPU and the machine's over the span it measures, and prints its figures
as one ``RESULT`` line. The JVM starts with Spark's defaults or with Flinkbench's TaskManagers' options
(comparison.JVM_PROFILES), both at the TaskManagers' 2 GB heap.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULT = "RESULT "
START_TIMEOUT_S = 300.0


def run(params: dict, timeout: float | None = None) -> dict:
    """Run one job (``params``: see :func:`main`) in a child process; its figures with the peak memory of its
    process tree. Raises RuntimeError, with the end of its log, when it printed no result."""
    from tests.benchmarks.memory import PeakRss

    timeout = timeout or START_TIMEOUT_S + 2 * (params.get("warmup", 0) + params.get("measure", 0)) + 120
    with tempfile.TemporaryDirectory(prefix="bench-structured-streaming-") as tmp:
        params = {**params, "launched_at": time.time(), "workdir": tmp}
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(REPO)}
        with open(Path(tmp) / "stderr.log", "w") as log:
            child = subprocess.Popen([sys.executable, "-m", "tests.benchmarks.structured_streaming", json.dumps(params)],
                                     stdout=subprocess.PIPE, stderr=log, text=True, cwd=REPO, env=env,
                                     start_new_session=True)
            with PeakRss(roots=lambda: [child.pid]) as peak:
                try:
                    out, _ = child.communicate(timeout=timeout)
                finally:
                    _end_group(child)
        lines = [line[len(RESULT):] for line in out.splitlines() if line.startswith(RESULT)]
        if not lines:
            tail = (Path(tmp) / "stderr.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"Structured Streaming run {params.get('job')} exited {child.returncode} "
                               f"without a result:\n{tail}")
    return {**json.loads(lines[-1]), "peak_rss_gib": peak.gib, "peak_pss_gib": peak.pss_gib}


def _end_group(child: subprocess.Popen) -> None:
    """The child and what it started (its JVM), which a timed-out or interrupted run leaves behind."""
    if child.poll() is None:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)
    with contextlib.suppress(ProcessLookupError):  # its group is empty once the JVM went with it
        os.killpg(child.pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Child: ``argv[0]`` is JSON with ``job`` (throughput or latency), ``cores``, ``jvm``, ``warmup``,
    ``measure``, and for throughput ``rows_per_batch`` and ``checkpoints``, for latency ``rate``, ``users``,
    ``trigger`` (``default`` or a processing-time interval such as ``500 milliseconds``) and ``stall``."""
    from tests.benchmarks import structured_streaming_jobs as jobs

    params = json.loads(argv[0])
    spark = jobs.session(params["cores"], params["jvm"])
    session_s = time.time() - params["launched_at"]
    try:
        figures = jobs.throughput(spark, params) if params["job"] == "throughput" else jobs.latency(spark, params)
    finally:
        jobs.stop(spark)
    print(RESULT + json.dumps({**figures, "session_s": round(session_s, 2)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

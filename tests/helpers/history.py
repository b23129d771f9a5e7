"""``flinkbench historyserver`` as a process of its own, as the README starts it."""
from __future__ import annotations

import contextlib
import subprocess
import sys

from tests.helpers.clusters import wait_until


@contextlib.contextmanager
def history_server(archive_dir: str, token_file: str, *dynamic: str):
    """The history server on a free port serving ``archive_dir``; yields its URL. Stopped with SIGTERM."""
    args = [sys.executable, "-m", "runtime.cli", "historyserver", "-D", f"historyserver.archive.fs.dir={archive_dir}",
            "-D", "historyserver.web.port=0", "-D", f"security.token-file={token_file}",
            "-D", "historyserver.archive.fs.refresh-interval=1 s", *dynamic]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []

    def announced() -> str | None:
        line = process.stdout.readline() if process.stdout else ""
        lines.append(line)
        if process.poll() is not None and not line:
            raise AssertionError(f"the history server exited ({process.returncode}):\n{''.join(lines)[-3000:]}")
        return line.split(" at ", 1)[1].split()[0] if line.startswith("history server at ") else None
    try:
        yield wait_until(announced, 60, "the history server to listen", interval=0)
    finally:
        process.terminate()
        process.wait(30)

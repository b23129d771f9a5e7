"""A process's log files: found from where its stderr and stdout go, listed with rotations, read by name
only, long ones from their end; a process writing to a pipe has none and is told so."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from runtime import process_logs

PROBE = """
import json, sys
from runtime import process_logs as p
sys.stderr.write("line one\\nline two\\n"); sys.stderr.flush()
print("to stdout", flush=True)
out = {"listing": [f.name for f in p.listing()], "log": p.read(None).decode(), "stdout": p.read_stdout().decode(),
       "tail": p.read("job.log", limit=12).decode()}
try:
    p.read("../../etc/passwd")
except p.NoLogFile as err:
    out["refused"] = str(err)
open(sys.argv[1], "w").write(json.dumps(out))
"""


def run_probe(tmp_path, stdout, stderr):
    result = tmp_path / "result.json"
    subprocess.run([sys.executable, "-c", PROBE, str(result)], stdout=stdout, stderr=stderr, check=True, timeout=60)
    return json.loads(result.read_text())


def test_the_log_is_where_stderr_goes_and_rotations_and_stdout_are_listed(tmp_path):
    (tmp_path / "job.log.1").write_text("older\n")
    (tmp_path / "job.log.x").write_text("not a rotation\n")
    with open(tmp_path / "job.log", "w") as log, open(tmp_path / "job.out", "w") as out:
        seen = run_probe(tmp_path, out, log)
    assert seen["listing"] == ["job.log", "job.log.1", "job.out"]
    assert seen["log"] == "line one\nline two\n" and seen["stdout"] == "to stdout\n"
    assert seen["tail"] == "[... the first 6 bytes are not shown]\nline two\n", "from a line start near the end"
    assert "no log file called '../../etc/passwd'" in seen["refused"]


def test_a_process_writing_to_pipes_has_no_log_file():
    code = ("from runtime import process_logs as p\ntry:\n    p.read(None, 'JobManager')\nexcept p.NoLogFile as e:\n"
            "    print(e)\nprint(p.listing())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert "this JobManager writes its log to a terminal or a pipe" in done.stdout and "[]" in done.stdout


def test_tail_of_a_missing_file_is_no_log_file(tmp_path):
    with pytest.raises(process_logs.NoLogFile, match="cannot read gone.log"):
        process_logs.tail(str(tmp_path / "gone.log"), 100)

"""Apache Flink's own answers to SQL queries: PyFlink 2.3 (its cached venv, tests.helpers.pyflink) runs the
same DDL and queries on the same files in streaming mode; each query's changelog is applied to its table."""
from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

from tests.helpers.pyflink import pyflink

SCRIPT = r'''
import datetime, decimal, importlib, json, os, sys
from pyflink.table import EnvironmentSettings, TableEnvironment

spec = json.load(open(sys.argv[1]))
t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "2")
t_env.get_config().set("table.local-time-zone", "UTC")
if spec.get("python_files"):
    sys.path[:0] = [os.path.dirname(f) for f in spec["python_files"]]
    t_env.get_config().set("python.files", ",".join(spec["python_files"]))
for name, path in spec.get("functions", {}).items():
    module, attribute = path.rsplit(".", 1)
    t_env.create_temporary_system_function(name, getattr(importlib.import_module(module), attribute))
for statement in spec["ddl"]:
    t_env.execute_sql(statement)

def plain(v):
    if isinstance(v, (datetime.datetime, datetime.date)):
        return {"time": v.isoformat()}
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v

answers = {}
for name, query in spec["queries"].items():
    try:
        present = {}
        with t_env.execute_sql(query).collect() as rows:
            for row in rows:
                key = json.dumps([plain(v) for v in row], default=str)
                kind = row.get_row_kind().value
                present[key] = present.get(key, 0) + (1 if kind in (0, 2) else -1)
        answers[name] = {"rows": [json.loads(k) for k, n in present.items() for _ in range(n)]}
    except Exception as err:
        causes = [line.strip() for line in str(err).splitlines() if line.strip().startswith("Caused by")]
        answers[name] = {"error": (causes[-1] if causes else str(err).splitlines()[0])[:800]}
json.dump(answers, open(sys.argv[2], "w"))
'''


def flink_answers(ddl: list[str], queries: dict[str, str], workdir: Path, timeout: float = 900,
                  python_files: list[Path] = (), functions: dict[str, str] | None = None) -> dict[str, dict]:
    """{name: {"rows": [...]} or {"error": "..."}} from PyFlink; RuntimeError with its output if it cannot run.
    ``functions`` ({SQL name: 'module.attribute'}) are registered as temporary system functions first, their
    modules found among ``python_files`` (shipped to Flink's Python workers as ``python.files``)."""
    found = pyflink()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "answers.py").write_text(SCRIPT)
    spec = {"ddl": ddl, "queries": queries, "python_files": [str(f) for f in python_files],
            "functions": functions or {}}
    (workdir / "spec.json").write_text(json.dumps(spec))
    done = subprocess.run([str(found.python), str(workdir / "answers.py"), str(workdir / "spec.json"),
                           str(workdir / "out.json")], env=found.env(), capture_output=True, text=True,
                          timeout=timeout, cwd=workdir, check=False)
    if done.returncode != 0 or not (workdir / "out.json").exists():
        raise RuntimeError(f"PyFlink did not answer (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    answers = json.loads((workdir / "out.json").read_text())
    for answer in answers.values():
        if "rows" in answer:
            answer["rows"] = [tuple(_value(v) for v in row) for row in answer["rows"]]
    return answers


def _value(v):
    if isinstance(v, dict) and "time" in v:
        return datetime.datetime.fromisoformat(v["time"])
    return v

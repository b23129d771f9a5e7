"""Apache Flink's own answers to SQL queries: PyFlink 2.3 (its cached venv, tests.helpers.pyflink) runs the
same DDL and queries on the same files in streaming mode; each query's changelog is applied to its table.

Values cross from PyFlink's interpreter as tagged JSON (tests.helpers.sql_values, which the script loads by
path) and come back as the Python values PyFlink gave: a plain datetime stays plain, a Decimal keeps its scale.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.pyflink import pyflink
from tests.helpers.sql_values import decode

SCRIPT = r'''
import importlib, importlib.util, json, os, sys, time
from pyflink.common import Configuration
from pyflink.table import EnvironmentSettings, TableEnvironment

spec = json.load(open(sys.argv[1]))
loader = importlib.util.spec_from_file_location("sql_values", spec["values_module"])
values = importlib.util.module_from_spec(loader)
loader.loader.exec_module(values)
batch = spec.get("batch", 1)
conf = Configuration()
conf.set_string("taskmanager.numberOfTaskSlots", str(2 * batch))  # a batch's jobs run side by side
t_env = TableEnvironment.create(EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build())
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


def failure(err):
    causes = [line.strip() for line in str(err).splitlines() if line.strip().startswith("Caused by")]
    return {"error": (causes[-1] if causes else str(err).splitlines()[0])[:800]}


def final_table(result):
    present = {}
    with result.collect() as rows:
        for row in rows:
            key = json.dumps([values.encode(v) for v in row])
            present[key] = present.get(key, 0) + (1 if row.get_row_kind().value in (0, 2) else -1)
    return {"rows": [json.loads(k) for k, n in present.items() for _ in range(n)]}


answers = {}
names = list(spec["queries"])
for first in range(0, len(names), batch):  # planned one after the other (the planner is not thread-safe), run together
    submitted = []
    for name in names[first:first + batch]:
        started = time.monotonic()
        try:
            submitted.append((name, t_env.execute_sql(spec["queries"][name]), started))
        except Exception as err:
            answers[name] = {**failure(err), "seconds": round(time.monotonic() - started, 3)}
    for name, result, started in submitted:
        try:
            answers[name] = final_table(result)
        except Exception as err:
            answers[name] = failure(err)
        answers[name]["seconds"] = round(time.monotonic() - started, 3)
json.dump(answers, open(sys.argv[2], "w"))
'''


def flink_answers(ddl: list[str], queries: dict[str, str], workdir: Path, timeout: float = 900,
                  batch: int = 1, python_files: list[Path] = (), functions: dict[str, str] | None = None
                  ) -> dict[str, dict]:
    """{name: {"rows": [...], "seconds": s} or {"error": "...", "seconds": s}} from PyFlink, each row a tuple of
    Python values; RuntimeError with its output if PyFlink cannot run. ``batch`` queries run at once (their jobs
    side by side on the local cluster: about twice as fast for 4 on two cores); their seconds then overlap.
    ``functions`` ({SQL name: 'module.attribute'}) are registered as temporary system functions first, their
    modules found among ``python_files`` (shipped to Flink's Python workers as ``python.files``)."""
    found = pyflink()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "answers.py").write_text(SCRIPT)
    values_module = Path(__file__).with_name("sql_values.py")
    (workdir / "spec.json").write_text(json.dumps({"ddl": ddl, "queries": queries, "values_module": str(values_module),
                                                   "batch": batch, "python_files": [str(f) for f in python_files],
                                                   "functions": functions or {}}))
    done = subprocess.run([str(found.python), str(workdir / "answers.py"), str(workdir / "spec.json"),
                           str(workdir / "out.json")], env=found.env(), capture_output=True, text=True,
                          timeout=timeout, cwd=workdir, check=False)
    if done.returncode != 0 or not (workdir / "out.json").exists():
        raise RuntimeError(f"PyFlink did not answer (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    answers = json.loads((workdir / "out.json").read_text())
    for answer in answers.values():
        if "rows" in answer:
            answer["rows"] = [tuple(decode(v) for v in row) for row in answer["rows"]]
    return answers

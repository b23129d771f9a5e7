"""Python dependencies shipped with jobs, on TaskManagers that lack them: a function of a module shipped with
add_python_file (importing another shipped module) runs and reads a file of an archive shipped with
add_python_archive by its path relative to the working directory (as in PyFlink), one needing a package from
set_python_requirements runs through a TaskManager kill (its replacement installs it from what the job carries), a
misspelled requirement fails the submission with pip's message before anything runs, and a shipped module reaches
the Python workers of a Spark standalone cluster too."""
from __future__ import annotations

import importlib.util
import zipfile

import pyarrow.csv as pa_csv
import pytest

from runtime.table import StreamTableEnvironment
from runtime.errors import SubmissionError
from tests.helpers.clusters import busy_taskmanager, completed_checkpoints, job_state, started_cluster, wait_until
from tests.helpers.pacing import Pace
from tests.helpers.spark_engines import spark_standalone

pytestmark = pytest.mark.slow

TEXT_MODULE = "flinkbench_shipped_text"
UDF_MODULE = "flinkbench_shipped_udfs"
PACKAGE = "roman"  # a small package from the index, not installed here
UDFS = f'''import {TEXT_MODULE}
from runtime.udf import udf


@udf(result_type="STRING")
def loud(word):
    return {TEXT_MODULE}.shout(word)


@udf(result_type="STRING")
def greeted(word):
    with open("greetings/hello.txt") as f:  # from the archive, unpacked into the folder greetings
        return f.read().strip() + " " + word


@udf(result_type="STRING")
def numeral(n):
    import {PACKAGE}
    return {PACKAGE}.toRoman(int(n) + 1)
'''


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The files a job ships (nowhere on any process's path) and two requirements files."""
    assert importlib.util.find_spec(PACKAGE) is None, f"{PACKAGE} is installed here: the TaskManagers would not lack it"
    folder = tmp_path_factory.mktemp("shipped")
    (folder / f"{TEXT_MODULE}.py").write_text("def shout(word):\n    return word.upper() + '!'\n")
    (folder / f"{UDF_MODULE}.py").write_text(UDFS)
    (folder / "requirements.txt").write_text(f"{PACKAGE}\n")
    (folder / "misspelled.txt").write_text("rmoan\n")
    with zipfile.ZipFile(folder / "greetings.zip", "w") as archive:
        archive.writestr("hello.txt", "hello\n")
    return folder


def numbers_table(t_env, rows: int) -> None:
    t_env.execute_sql(f"CREATE TABLE numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '{rows}', "
                      f"'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '{rows - 1}')")


def with_files(env, shipped) -> StreamTableEnvironment:
    t_env = StreamTableEnvironment.create(env)
    t_env.add_python_file(str(shipped / f"{TEXT_MODULE}.py"))
    t_env.add_python_file(str(shipped / f"{UDF_MODULE}.py"))
    t_env.execute_sql(f"CREATE TEMPORARY FUNCTION loud AS '{UDF_MODULE}.loud' LANGUAGE PYTHON")
    return t_env


def roman(n: int) -> str:
    """Roman numerals, written here (the package the job installs is not)."""
    out = ""
    for value, letters in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                           (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        out += letters * (n // value)
        n %= value
    return out


def test_a_function_of_a_shipped_module_runs_on_taskmanagers_that_lacked_it(cluster, shipped):
    env = cluster.environment()
    env.set_parallelism(2)
    t_env = with_files(env, shipped)
    t_env.add_python_archive(str(shipped / "greetings.zip"), "greetings")
    t_env.execute_sql(f"CREATE TEMPORARY FUNCTION greeted AS '{UDF_MODULE}.greeted' LANGUAGE PYTHON")
    numbers_table(t_env, 200)
    rows = list(t_env.execute_sql("SELECT n, loud(CONCAT('n', CAST(n AS STRING))) AS l, greeted(CAST(n AS STRING)) "
                                  "AS g FROM numbers").collect())
    assert sorted(tuple(r) for r in rows) == [(n, f"N{n}!", f"hello {n}") for n in range(200)]


def test_a_misspelled_requirement_fails_the_submission_with_pips_message(cluster, shipped):
    env = cluster.environment()
    t_env = with_files(env, shipped)
    numbers_table(t_env, 10)
    t_env.set_python_requirements(str(shipped / "misspelled.txt"))
    jobs_before = len(cluster.client.jobs())
    with pytest.raises(SubmissionError) as refused:
        t_env.execute_sql("SELECT loud(CAST(n AS STRING)) FROM numbers")
    assert "python.requirements: pip cannot install them" in str(refused.value)
    assert "No matching distribution found for rmoan" in str(refused.value)
    assert len(cluster.client.jobs()) == jobs_before, "nothing was submitted"


@pytest.mark.serial  # it kills a TaskManager at a moment paced by its input
@pytest.mark.timeout(900)
def test_a_required_package_is_installed_again_where_a_killed_taskmanagers_tasks_restart(fresh_cluster, shipped,
                                                                                          tmp_path):
    rows = 6_000
    # one slot each: the killed TaskManager's subtask can only restart on its replacement
    cluster = fresh_cluster(taskmanagers=2, slots=1, **{"restart-strategy.fixed-delay.delay": "200 ms"})
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    t_env = with_files(env, shipped)
    t_env.set_python_requirements(str(shipped / "requirements.txt"))
    t_env.execute_sql(f"CREATE TEMPORARY FUNCTION numeral AS '{UDF_MODULE}.numeral' LANGUAGE PYTHON")
    pace = Pace(tmp_path / "pace", 200)
    t_env.create_temporary_function("paced", pace, "BIGINT")
    numbers_table(t_env, rows)
    out = tmp_path / "out"
    t_env.execute_sql(f"CREATE TABLE out (n BIGINT, r STRING, l STRING) WITH ('connector' = 'filesystem', "
                      f"'path' = '{out}', 'format' = 'csv')")
    job = t_env.execute_sql("INSERT INTO out SELECT n, numeral(MOD(n, 3000)), loud(CAST(n AS STRING)) FROM numbers "
                            "WHERE paced(n) >= 0").get_job_client()
    wait_until(lambda: completed_checkpoints(cluster.client, job.job_id) >= 1, 300, "a completed checkpoint")
    assert job_state(cluster.client, job.job_id) != "FINISHED", "finished before the kill"
    cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))
    replacement = cluster.add_taskmanager(wait=True)
    wait_until(lambda: job.details()["restarts"] >= 1, 300, "the restart")
    pace.lift()
    assert job.wait(600) == "FINISHED"
    got = sorted(_rows(out))
    assert got == [(n, roman(n % 3000 + 1), f"{n}!") for n in range(rows)], "every row once, with its numeral"
    assert any(p.name.startswith("requirements-") for p in _python_folder(cluster, replacement).iterdir()), \
        "the replacement TaskManager installed the requirements itself"


def test_a_shipped_module_reaches_the_workers_of_a_spark_standalone_cluster(tmp_path, shipped):
    with spark_standalone(tmp_path / "spark", workers=1, cores=1, memory="1g") as engine:
        conf = {"spark.master": engine.url, "spark.cores.max": "1", "spark.executor.memory": "512m",
                "spark.driver.memory": "512m"}
        with started_cluster(tmp_path / "cluster", taskmanagers=1, slots=1, config=conf) as cluster:
            t_env = with_files(cluster.environment(), shipped)
            numbers_table(t_env, 50)
            rows = list(t_env.execute_sql("SELECT n, loud(CAST(n AS STRING)) AS l FROM numbers").collect())
    assert sorted((r[0], r[1]) for r in rows) == [(n, f"{n}!") for n in range(50)]


def _rows(folder) -> list[tuple]:
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))):
        table = pa_csv.read_csv(str(path), read_options=pa_csv.ReadOptions(column_names=["n", "r", "l"]))
        found += list(zip(table["n"].to_pylist(), table["r"].to_pylist(), table["l"].to_pylist()))
    return found


def _python_folder(cluster, taskmanager):
    from pathlib import Path

    tm_id = next(tm["id"] for tm in cluster.client.get("/taskmanagers")["taskmanagers"] if tm.get("pid") == taskmanager.pid)
    return Path(cluster.working_dir) / "python" / tm_id

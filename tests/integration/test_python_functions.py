"""Python functions in SQL on a real cluster: a row-at-a-time and a pandas ``udf``, ``udtf``s with LATERAL TABLE
(comma, CROSS JOIN and LEFT JOIN ... ON TRUE) and ``udaf``s in GROUP BY and in TUMBLE, HOP and CUMULATE windows
give the same tables as the same logic written in pandas over the same input, and as Apache Flink 2.3 running
the very same function source (tests.helpers.python_functions) where it accepts the query; window accumulators
restored from a checkpoint after a TaskManager kill give the same windows."""
from __future__ import annotations

import concurrent.futures
import contextlib
import shutil

import cloudpickle
import pandas as pd
import pytest

from runtime.table import StreamTableEnvironment
from runtime.changelog import materialize
from tests.helpers import python_functions
from tests.helpers.clusters import busy_taskmanager, completed_checkpoints, job_state, wait_until
from tests.helpers.pacing import Pace
from tests.helpers.sql_suite import SCHEMAS, ddl, normalized, write_inputs

pytestmark = pytest.mark.slow

TUMBLE = "TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
QUERIES = {
    "udf": "SELECT id, band(amount) AS b, with_tax(amount) AS t FROM clicks",
    "lateral table": "SELECT c.id, s.piece, s.pos FROM clicks AS c, LATERAL TABLE(segments(url)) AS s(piece, pos)",
    "cross join lateral": "SELECT id, piece FROM clicks CROSS JOIN LATERAL TABLE(segments(url)) AS s(piece, pos) "
                          "WHERE pos = 1",
    "left join lateral": "SELECT c.id, d.digit FROM clicks AS c LEFT JOIN LATERAL TABLE(digits(amount)) AS d(digit) "
                         "ON TRUE WHERE c.id <= 200",
    "udaf in tumble": f"SELECT window_start, window_end, user_id, mean_of(amount) AS m, "
                      f"longest(CAST(amount AS STRING)) AS l, COUNT(*) AS n FROM {TUMBLE} "
                      f"GROUP BY window_start, window_end, user_id",
    "udaf in hop": "SELECT window_start, window_end, mean_of(amount) AS m FROM TABLE(HOP(TABLE clicks, "
                   "DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY window_start, window_end",
    "udaf in cumulate": "SELECT window_start, window_end, mean_of(amount) AS m FROM TABLE(CUMULATE(TABLE clicks, "
                        "DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '30' SECOND)) GROUP BY window_start, window_end",
    "udaf in group by": "SELECT user_id, mean_of(amount) AS m, longest(CAST(amount AS STRING)) AS l FROM clicks "
                        "GROUP BY user_id",
    "udaf over an updating input": "SELECT n, mean_of(CAST(user_id AS DOUBLE)) AS m FROM (SELECT user_id, COUNT(*) AS n "
                                   "FROM clicks GROUP BY user_id) GROUP BY n",
    "pandas udaf in tumble": f"SELECT window_start, median(amount) AS md FROM {TUMBLE} GROUP BY window_start, window_end",
}
# Apache Flink 2.3 refuses pandas aggregate functions in streaming mode ("Pandas UDAFs are not supported in
# streaming mode currently"); Flinkbench runs them per window, so that case is checked against pandas alone.
FLINK_REFUSES = {"pandas udaf in tumble": "Pandas UDAFs are not supported in streaming mode"}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return write_inputs(tmp_path_factory.mktemp("udf-inputs"))


@pytest.fixture(scope="module")
def flink(tmp_path_factory):
    """Flink 2.3's answers, computed in the background while this module runs its own queries."""
    from tests.helpers.flink_sql import flink_answers

    folder = tmp_path_factory.mktemp("pyflink-udf")
    module = shutil.copy(python_functions.__file__, folder / "python_functions.py")
    functions = {name: f"python_functions.{name}" for name in python_functions.FUNCTIONS}
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pyflink") as pool:
        yield pool.submit(flink_answers, ddl(write_inputs(folder / "inputs", split=False)), QUERIES, folder / "flink",
                          python_files=[module], functions=functions)


@contextlib.contextmanager
def functions_by_value():
    """The test functions pickled by value while jobs are built: the TaskManagers' Spark workers cannot import
    tests.*."""
    registered = python_functions.__name__ in cloudpickle.list_registry_pickle_by_value()
    if not registered:
        cloudpickle.register_pickle_by_value(python_functions)
    try:
        yield
    finally:
        if not registered:
            cloudpickle.unregister_pickle_by_value(python_functions)


@pytest.fixture(scope="module")
def t_env(cluster, inputs):
    env = cluster.environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    for statement in ddl(inputs):
        t_env.execute_sql(statement)
    for name in python_functions.FUNCTIONS:
        t_env.create_temporary_system_function(name, getattr(python_functions, name))
    with functions_by_value():
        yield t_env


@pytest.fixture(scope="module")
def clicks(inputs) -> pd.DataFrame:
    names = [c.split()[0] for c in SCHEMAS["clicks"].split(", ")]
    frame = pd.concat(pd.read_csv(f, names=names, header=None) for f in sorted(inputs["clicks"].glob("*.csv")))
    frame["ts"] = pd.to_datetime(frame["ts"])
    return frame.sort_values("id").reset_index(drop=True)


@pytest.fixture(scope="module")
def final_tables() -> dict:
    return {}


# -- the same logic in pandas -------------------------------------------------------------------------------
def _rows(frame: pd.DataFrame) -> list[tuple]:
    def plain(v):
        return None if pd.isna(v) else v.to_pydatetime() if isinstance(v, pd.Timestamp) else v
    return normalized([tuple(plain(v) for v in row) for row in frame.itertuples(index=False)])


def _pieces(url: str) -> list[tuple[str, int]]:
    return [(p, i) for i, p in enumerate(url.strip("/").split("a")) if p]


def _longest(values: pd.Series):
    present = values.dropna()
    return min(present, key=lambda s: (-len(s), s)) if len(present) else None


def _amount_text(amounts: pd.Series) -> pd.Series:
    return amounts.map(lambda a: None if pd.isna(a) else repr(float(a)))


def _windows(frame: pd.DataFrame, size_s: int, slide_s: int, cumulate: bool = False) -> pd.DataFrame:
    """Each row once per window holding it (window_start, window_end), as TUMBLE, HOP and CUMULATE assign them."""
    parts = []
    for k in range(size_s // slide_s):
        if cumulate:
            start = frame["ts"].dt.floor(f"{size_s}s")
            end = start + pd.Timedelta(seconds=(k + 1) * slide_s)
            keep = frame["ts"] < end
        else:
            start = frame["ts"].dt.floor(f"{slide_s}s") - pd.Timedelta(seconds=k * slide_s)
            end = start + pd.Timedelta(seconds=size_s)
            keep = pd.Series(True, index=frame.index)
        parts.append(frame[keep].assign(window_start=start[keep], window_end=end[keep]))
    return pd.concat(parts)


def expected(name: str, clicks: pd.DataFrame) -> list[tuple]:
    amount = clicks["amount"]
    if name == "udf":
        band = pd.cut(amount, [-float("inf"), 30, 70, float("inf")], right=False, labels=["low", "mid", "high"])
        return _rows(pd.DataFrame({"id": clicks["id"], "b": band.astype(object), "t": amount * 1.25}))
    if name in ("lateral table", "cross join lateral"):
        exploded = clicks.assign(p=clicks["url"].map(_pieces)).explode("p").dropna(subset=["p"])
        pieces = pd.DataFrame(exploded["p"].tolist(), columns=["piece", "pos"], index=exploded.index)
        out = pd.concat([exploded[["id"]], pieces], axis=1)
        return _rows(out) if name == "lateral table" else _rows(out[out["pos"] == 1][["id", "piece"]])
    if name == "left join lateral":
        few = clicks[clicks["id"] <= 200]
        digits = few["amount"].map(lambda a: [None] if pd.isna(a) else [int(d) for d in str(int(a))])
        return _rows(few.assign(digit=digits).explode("digit")[["id", "digit"]])
    if name == "udaf in tumble":
        rows = _windows(clicks, 10, 10).assign(text=lambda f: _amount_text(f["amount"]))
        grouped = rows.groupby(["window_start", "window_end", "user_id"])
        return _rows(grouped.agg(m=("amount", "mean"), l=("text", _longest), n=("id", "size")).reset_index())
    if name in ("udaf in hop", "udaf in cumulate"):
        rows = _windows(clicks, 15, 5) if name == "udaf in hop" else _windows(clicks, 30, 10, cumulate=True)
        return _rows(rows.groupby(["window_start", "window_end"]).agg(m=("amount", "mean")).reset_index())
    if name == "udaf in group by":
        rows = clicks.assign(text=_amount_text(amount)).groupby("user_id")
        return _rows(rows.agg(m=("amount", "mean"), l=("text", _longest)).reset_index())
    if name == "udaf over an updating input":
        counts = clicks.groupby("user_id").size().rename("n").reset_index()
        return _rows(counts.groupby("n").agg(m=("user_id", "mean")).reset_index())
    if name == "pandas udaf in tumble":
        rows = _windows(clicks, 10, 10).groupby(["window_start"])
        return _rows(rows.agg(md=("amount", "median")).reset_index())
    raise KeyError(name)


@pytest.mark.parametrize("name", list(QUERIES))
def test_the_answer_equals_the_same_logic_in_pandas(t_env, clicks, flink, final_tables, name):
    got = final_tables[name] = normalized(materialize(list(t_env.execute_sql(QUERIES[name]).collect())))
    want = expected(name, clicks)
    assert want, f"{name}: the query selects nothing, so it proves nothing"
    assert got == want, f"{name}: {len(got)} rows, pandas {len(want)}; first differences " \
                        f"{[(a, b) for a, b in zip(got, want) if a != b][:3]}"


@pytest.mark.parametrize("name", list(QUERIES))
def test_the_answer_equals_apache_flinks(flink, final_tables, name):
    assert name in final_tables, f"{name}: Flinkbench's run of it failed (see the test above)"
    answer = flink.result()[name]
    if name in FLINK_REFUSES:
        assert FLINK_REFUSES[name] in answer.get("error", ""), f"{name}: Flink 2.3 now answers it: {answer}"
        return
    assert "error" not in answer, f"{name}: Flink could not run it: {answer.get('error')}"
    assert normalized(answer["rows"]) == final_tables[name], f"{name}: Flink's answer differs"


@pytest.mark.serial  # it kills a TaskManager at a moment paced by its input
@pytest.mark.timeout(900)
def test_window_accumulators_survive_a_taskmanager_kill(fresh_cluster, inputs, clicks, tmp_path):
    cluster = fresh_cluster(taskmanagers=2, slots=1, **{"restart-strategy.fixed-delay.delay": "200 ms"})
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    t_env = StreamTableEnvironment.create(env)
    for statement in ddl({**inputs, "clicks": _in_many_files(inputs["clicks"], tmp_path / "clicks", 30)}):
        t_env.execute_sql(statement)
    with functions_by_value():
        for name in ("mean_of", "longest"):
            t_env.create_temporary_system_function(name, getattr(python_functions, name))
        pace = Pace(tmp_path / "pace", 10)  # a bundle (file) of 20 rows each 2 s while the pace is on
        t_env.create_temporary_function("paced", pace, "DOUBLE")
        out = tmp_path / "windows"
        t_env.execute_sql(f"CREATE TABLE windows (window_start TIMESTAMP(3), user_id BIGINT, m DOUBLE, l STRING, "
                          f"n BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')")
        job = t_env.execute_sql(f"INSERT INTO windows SELECT window_start, user_id, mean_of(amount), "
                                f"longest(CAST(amount AS STRING)), COUNT(*) FROM {TUMBLE} "
                                f"WHERE paced(CAST(id AS DOUBLE)) > 0 GROUP BY window_start, window_end, user_id"
                                ).get_job_client()
    wait_until(lambda: completed_checkpoints(cluster.client, job.job_id) >= 2, 300, "two completed checkpoints")
    assert job_state(cluster.client, job.job_id) != "FINISHED", "finished before the kill"
    cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))
    cluster.add_taskmanager(wait=False)
    wait_until(lambda: job.details()["restarts"] >= 1, 300, "the restart")
    pace.lift()
    assert job.wait(600) == "FINISHED"
    written = pd.concat(pd.read_csv(p, names=["window_start", "user_id", "m", "l", "n"], dtype={"l": str},
                                    keep_default_na=False, na_values=[""]) for p in sorted(out.rglob("*")) if p.is_file()
                        and not p.name.startswith((".", "_")))
    written["window_start"] = pd.to_datetime(written["window_start"])
    want = [(w, u, m, lo, n) for w, _, u, m, lo, n in expected("udaf in tumble", clicks)]
    assert _rows(written) == want, "every window once, its accumulators carried through the restart"


def _in_many_files(folder, into, files: int):
    """The clicks in ``files`` files (a bundle each, read in time order by each subtask), for checkpoints between."""
    lines = [line for path in sorted(folder.glob("*.csv")) for line in path.read_text().splitlines()]
    into.mkdir()
    size = -(-len(lines) // files)
    for i in range(files):
        (into / f"part-{i:03d}.csv").write_text("\n".join(lines[i * size:(i + 1) * size]) + "\n")
    return into

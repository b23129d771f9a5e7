"""Every function the registry says Flinkbench runs, run on a real cluster and on Apache Flink 2.3 (PyFlink) over
the same rows (NULLs, negative numbers, non-ASCII strings, an empty string), each value compared with its type.

One query per category on each engine (a column per function's example); where Flink cannot run a category's
query as a whole, its functions are asked one by one. A function whose example Flink rejects is reported and
fails: every supported function must be checked against Flink."""
from __future__ import annotations

import concurrent.futures
import datetime
import decimal
import math

import pytest

from runtime.table import StreamTableEnvironment
from runtime.sql.builtins import registry

pytestmark = pytest.mark.slow

COLUMNS = "id INT, s STRING, t STRING, i INT, j INT, d DOUBLE, ts TIMESTAMP(3), flag BOOLEAN"
ROWS = [
    "1,Hello World,lo,7,2,2.5,2024-02-29 13:14:15.123,true",
    "2,äöü Åsa ß,ä,-7,3,-0.5,1999-12-31 23:59:59.999,false",
    "3,東京|大阪|京都,|,0,-4,0.0,1970-01-01 00:00:00.000,",
    "4,,,15,4,100.25,2024-06-01 00:00:00.000,true",
    "5,,,,,,,",
    "6,  padded  ,a,1,1,1.0E10,2024-01-01 12:00:00.000,false",
    "7,123,42,100,7,3.75,2000-02-29 06:30:00.500,true",
]
SKIPPED_CATEGORIES = ("aggregate", "grouping")  # aggregations: checked by the conformance suite's query pages
CHECKED = [f for f in registry().functions if f.supported and f.example and f.category not in SKIPPED_CATEGORIES
           and "random" not in f.note and f.name not in ("CURRENT_DATE", "CURRENT_TIMESTAMP", "NOW",
                                                         "CURRENT_ROW_TIMESTAMP", "PROCTIME")]
BY_CATEGORY: dict[str, list] = {}
for _f in CHECKED:
    BY_CATEGORY.setdefault(_f.category, []).append(_f)


def _shown(function) -> str:
    """The function's example as both engines can return it (PyFlink cannot return a TIMESTAMP_LTZ value)."""
    if function.result == "TIMESTAMP_LTZ":
        return f"DATE_FORMAT({function.example}, 'yyyy-MM-dd HH:mm:ss')"
    return function.example


def _query(functions) -> str:
    return "SELECT id, " + ", ".join(f"{_shown(f)} AS c{n}" for n, f in enumerate(functions)) + " FROM fn_input"


def _flink(ddl: list[str], folder) -> dict[str, dict]:
    """{function name: {"rows": [(id, value), ...]} or {"error": ...}}, by category, then one by one."""
    from tests.helpers.flink_sql import flink_answers

    answers = flink_answers(ddl, {c: _query(fs) for c, fs in BY_CATEGORY.items()}, folder / "categories", 3000)
    out, alone = {}, {}
    for category, functions in BY_CATEGORY.items():
        if "error" in answers[category]:
            alone.update({f.name: _query([f]) for f in functions})
            continue
        for n, f in enumerate(functions):
            out[f.name] = {"rows": [(row[0], row[n + 1]) for row in answers[category]["rows"]]}
    if alone:
        out.update(flink_answers(ddl, alone, folder / "alone", 3000))
    return out


@pytest.fixture(scope="module")
def answers(cluster, tmp_path_factory):
    """(Flink's answers, Flinkbench's) per function: rows of (id, value)."""
    folder = tmp_path_factory.mktemp("functions")
    (folder / "data").mkdir()
    (folder / "data" / "part-0.csv").write_text("\n".join(ROWS) + "\n", encoding="utf-8")
    ddl = [f"CREATE TABLE fn_input ({COLUMNS}) WITH ('connector' = 'filesystem', 'path' = '{folder / 'data'}', "
           "'format' = 'csv', 'csv.null-literal' = '')"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pyflink") as pool:
        flink = pool.submit(_flink, ddl, folder)
        env = cluster.environment()
        env.set_parallelism(2)
        t_env = StreamTableEnvironment.create(env)
        t_env.execute_sql(ddl[0])
        ours = {}
        for functions in BY_CATEGORY.values():
            ours.update(_flinkbench(t_env, functions))
        return flink.result(), ours


def _flinkbench(t_env, functions) -> dict:
    """{function name: rows of (id, value) or the error}: the category in one job, one by one if it fails."""
    try:
        rows = list(t_env.execute_sql(_query(functions)).collect())
        return {f.name: [(row[0], row[n + 1]) for row in rows] for n, f in enumerate(functions)}
    except Exception as err:  # noqa: BLE001 - a failing function is reported by its own test below
        if len(functions) == 1:
            return {functions[0].name: f"{type(err).__name__}: {str(err).strip()[-600:]}"}
        return {k: v for f in functions for k, v in _flinkbench(t_env, [f]).items()}


def plain(value, ours: bool = False):
    """A value comparable across engines with its type: times naive UTC and dates as datetimes, DECIMAL as float,
    bytes as printed, lists element by element, a ROW as the list of its values (PyFlink's Row comes back from
    tests.helpers.flink_sql as a tuple); ``ours``: Flinkbench's value as Arrow gives it (a MAP as a list of
    (key, value) pairs, a ROW as a dict)."""
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if ours and isinstance(value, list) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        return {plain(k): plain(v, ours) for k, v in value}
    if isinstance(value, (list, tuple)):
        return [plain(v, ours) for v in value]
    if isinstance(value, dict) and ours:
        return [plain(v, ours) for v in value.values()]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return str(bytes(value))
    return value


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("function", CHECKED, ids=[f.name for f in CHECKED])
def test_a_supported_function_gives_flinks_values_with_their_types(answers, function):
    flink, ours = answers
    theirs = flink[function.name]
    assert "error" not in theirs, f"Flink cannot run {function.example}: {theirs.get('error')}"
    assert not isinstance(ours[function.name], str), f"Flinkbench failed on {function.example}: {ours[function.name]}"
    expected = {row_id: plain(v) for row_id, v in theirs["rows"]}
    got = {row_id: plain(v, ours=True) for row_id, v in ours[function.name]}
    assert expected.keys() == got.keys()
    differences = [(k, expected[k], got[k]) for k in sorted(expected) if not same(expected[k], got[k])]
    assert not differences, f"{function.example}: (id, Flink, Flinkbench) {differences[:3]}"

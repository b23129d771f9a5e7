"""Flink's SQL types in Python on a real cluster: TIMESTAMP as a plain datetime wherever rows arrive (collect,
pandas, window bounds, a filesystem sink read back), TIMESTAMP_LTZ as an instant in the session time zone."""
from __future__ import annotations

import datetime

import pyarrow.parquet as pq
import pytest

from runtime.table import StreamTableEnvironment
from runtime.changelog import materialize

pytestmark = pytest.mark.slow

BASE = datetime.datetime(2024, 1, 1, 12, 0, 0)
ROWS = 40


@pytest.fixture(scope="module")
def t_env(cluster, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sql-types")
    (folder / "events").mkdir()
    lines = []
    for i in range(ROWS):
        ts = BASE + datetime.timedelta(milliseconds=250 * i + 5)
        text = f"{ts:%Y-%m-%d %H:%M:%S}.{ts.microsecond // 1000:03d}"
        lines.append(f"{i},{text},{text}")
    (folder / "events" / "events.csv").write_text("\n".join(lines) + "\n")
    env = cluster.environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(f"""CREATE TABLE events (id INT, ts TIMESTAMP(3), utc TIMESTAMP_LTZ(3),
        WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{folder / "events"}', 'format' = 'csv')""")
    t_env.folder = folder
    return t_env


def rows(t_env, query):
    return materialize(list(t_env.execute_sql(query).collect()))


def test_timestamps_are_plain_datetimes_in_rows_windows_and_pandas(t_env):
    got = rows(t_env, "SELECT id, ts, CAST(ts AS TIMESTAMP_LTZ(3)) AS lt FROM events WHERE id < 3")
    first = sorted(got)[0]
    assert first.ts == BASE + datetime.timedelta(milliseconds=5) and first.ts.tzinfo is None
    assert first.lt == first.ts.replace(tzinfo=datetime.timezone.utc) and first.lt.tzinfo is not None
    windows = rows(t_env, "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, "
                          "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end")
    assert sorted((w.window_start, w.n) for w in windows) == [(BASE, 20), (BASE + datetime.timedelta(seconds=5), 20)]
    assert all(w.window_start.tzinfo is None and w.window_end.tzinfo is None for w in windows)
    frame = t_env.sql_query("SELECT id, ts FROM events").to_pandas()
    assert str(frame.dtypes["ts"]) == "datetime64[ns]" and len(frame) == ROWS


def test_an_instant_is_read_and_shown_in_the_session_time_zone(t_env):
    """As Flink: a TIMESTAMP cast to TIMESTAMP_LTZ is the instant its wall clock names in the session zone, and
    an instant's fields and text are its wall clock there."""
    from zoneinfo import ZoneInfo

    t_env.get_config().set("table.local-time-zone", "Asia/Shanghai")
    try:
        got = rows(t_env, "SELECT id, CAST(ts AS TIMESTAMP_LTZ(3)) AS lt, HOUR(CAST(ts AS TIMESTAMP_LTZ(3))) AS h, "
                          "utc, HOUR(utc) AS utc_h, CAST(utc AS STRING) AS utc_text, CAST(utc AS TIMESTAMP(3)) AS "
                          "utc_wall FROM events WHERE id = 0")
    finally:
        t_env.get_config().set("table.local-time-zone", "UTC")
    lt = got[0].lt
    assert lt.utcoffset() == datetime.timedelta(hours=8) and lt.hour == 12 and got[0].h == 12
    assert lt == (BASE + datetime.timedelta(milliseconds=5)).replace(tzinfo=ZoneInfo("Asia/Shanghai"))
    noon = BASE + datetime.timedelta(milliseconds=5)  # the file's text, read as a UTC instant into the LTZ column
    assert got[0].utc == noon.replace(tzinfo=datetime.timezone.utc) and got[0].utc.utcoffset().seconds == 8 * 3600
    assert got[0].utc_h == 20 and got[0].utc_text == "2024-01-01 20:00:00.005"
    assert got[0].utc_wall == noon + datetime.timedelta(hours=8) and got[0].utc_wall.tzinfo is None


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_rows_written_to_a_filesystem_sink_read_back_plain(t_env, fmt):
    path = t_env.folder / f"out-{fmt}"
    t_env.execute_sql(f"""CREATE TABLE copy_{fmt} (id INT, ts TIMESTAMP(3))
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}')""")
    t_env.execute_sql(f"INSERT INTO copy_{fmt} SELECT id, ts FROM events").wait(120_000)
    back = rows(t_env, f"SELECT id, ts FROM copy_{fmt}")
    original = rows(t_env, "SELECT id, ts FROM events")
    assert sorted(back) == sorted(original) and len(back) == ROWS
    assert all(r.ts.tzinfo is None for r in back)
    if fmt == "parquet":
        written = pq.read_table(str(path))
        assert written.schema.field("ts").type.tz is None

"""A TaskManager process stays lean: it loads pandas only for a job whose own functions use it
(runtime.taskmanager.lean_pyspark), and Arrow's C++ code allocates with the configured allocator rather than
pyarrow's caching default (runtime.taskmanager.allocators): about 40 and 50 MB resident per TaskManager."""
from __future__ import annotations

from pathlib import Path

import pytest

from runtime.table import StreamTableEnvironment
from runtime.examples import clicks
from tests.helpers.clusters import started_cluster


@pytest.fixture(scope="module")
def lean_cluster(tmp_path_factory):
    """A cluster of its own: a shared one's TaskManagers may have run other modules' pandas functions."""
    with started_cluster(tmp_path_factory.mktemp("lean"), taskmanagers=1, slots=2) as cluster:
        yield cluster


def pandas_loaded(cluster) -> bool:
    """Whether the TaskManager process maps pandas' compiled modules (read from outside, as the kernel sees it)."""
    (process,) = cluster.taskmanagers
    return "/pandas/" in Path(f"/proc/{process.pid}/maps").read_text()


def reserved_regions_mib(cluster) -> list[int]:
    """Anonymous mappings of 512 MiB or more in the TaskManager process: a caching allocator's reservation
    (mimalloc takes 1 GiB at a time; glibc's heaps stay within 64 MiB)."""
    (process,) = cluster.taskmanagers
    sizes = []
    for line in Path(f"/proc/{process.pid}/maps").read_text().splitlines():
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if len(fields) == 5 and end - start >= 512 << 20:
            sizes.append((end - start) >> 20)
    return sizes


def test_window_jobs_and_sql_run_without_pandas_and_a_pandas_function_loads_it(lean_cluster):
    env = lean_cluster.environment()
    env.set_parallelism(2)
    clicks.build(env, 20_000)
    assert env.execute_async("clicks").results(timeout=240).num_rows > 0

    t_env = StreamTableEnvironment.create(lean_cluster.environment())
    t_env.execute_sql("CREATE TABLE c (user_id INT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' "
                      "SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '5000', 'rows-per-second' = '100000', "
                      "'fields.user_id.min' = '0', 'fields.user_id.max' = '20', 'fields.url.length' = '1')")
    rows = list(t_env.execute_sql("SELECT window_start, user_id, COUNT(DISTINCT url) AS urls, COUNT(*) AS n FROM "
                                  "TABLE(TUMBLE(TABLE c, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                                  "GROUP BY window_start, window_end, user_id").collect())
    assert rows and all(r["n"] >= r["urls"] >= 1 for r in rows)
    assert not pandas_loaded(lean_cluster), "a window job or a SQL query loaded pandas into the TaskManager"
    assert reserved_regions_mib(lean_cluster) == [], "Arrow's C++ code allocated with pyarrow's caching default"

    env = lean_cluster.environment()
    env.from_collection([{"x": 1}, {"x": 2}]).map(lambda frame: frame.assign(y=frame["x"] * 2)).collect()
    assert sorted(env.execute_async("pandas").results(timeout=240).column("y").to_pylist()) == [2, 4]
    assert pandas_loaded(lean_cluster), "the check above cannot see pandas: a pandas function must load it"


def test_a_table_becomes_the_dataframe_create_data_frame_makes_and_ddl_parses_as_it_does(spark):
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa

    from runtime.taskmanager.lean_pyspark import frame_from_arrow, schema_from_ddl

    table = pa.table({"i": pa.array([1, None, 3], pa.int32()), "s": ["a", None, "ç"], "d": [1.5, None, -0.0],
                      "t": pa.array([dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc), None, None],
                                    pa.timestamp("us", tz="UTC")),
                      "m": pa.array([Decimal("1.25"), None, Decimal("-3.50")], pa.decimal128(9, 2)),
                      "b": [True, False, None], "l": pa.array([[1, 2], None, []], pa.list_(pa.int64()))})
    ours, theirs = frame_from_arrow(spark, table), spark.createDataFrame(table)
    assert ours.schema == theirs.schema
    assert ours.toArrow().equals(theirs.toArrow())
    for ddl in ("a INT, b STRING", "x DECIMAL(10, 2), y ARRAY<BIGINT>", "INT"):
        assert schema_from_ddl(spark, ddl) == spark.createDataFrame([], ddl).schema, ddl


def test_a_bundle_leaves_spark_and_is_grouped_as_pysparks_own_calls_do(spark):
    """table_of reads the action's stream as toArrow does (types cast alike, an empty result typed too);
    group_aggregate and with_columns build the plans PySpark's groupBy/agg and withColumns build."""
    from pyspark.sql import functions as F

    from runtime.taskmanager.lean_pyspark import group_aggregate, table_of, with_columns

    df = spark.sql("SELECT id % 3 AS k, CAST(id AS DECIMAL(9, 2)) AS m, TIMESTAMP'2024-01-01 00:00:00' + "
                   "make_interval(0, 0, 0, 0, 0, 0, id) AS t, map('a', id) AS mp, named_struct('x', id) AS st, "
                   "CAST(id AS STRING) AS s FROM range(7)")
    for frame in (df, df.filter("id < 0"), df.filter("id < 0").limit(0)):
        assert table_of(frame).equals(frame.toArrow())
        assert table_of(frame).schema == frame.toArrow().schema
    keys, aggregates = [F.col("k")], [F.count(F.lit(1)).alias("n"), F.sum("m").alias("total"), F.max("t").alias("last")]
    for _ in range(2):  # the second time with the JVM's lists kept from the first
        ours, theirs = group_aggregate(df, keys, aggregates), df.groupBy(*keys).agg(*aggregates)
        assert ours.schema == theirs.schema and table_of(ours.orderBy("k")).equals(theirs.orderBy("k").toArrow())
        columns = {"twice": F.col("k") * 2, "s": F.upper("s")}
        ours, theirs = with_columns(df, columns), df.withColumns(columns)
        assert ours.schema == theirs.schema and table_of(ours).equals(theirs.toArrow())
    failing = spark.sql("SELECT assert_true(id < 0) FROM range(2)")
    with pytest.raises(Exception, match="is not true") as theirs_failed:
        failing.toArrow()
    with pytest.raises(type(theirs_failed.value), match="is not true"):  # the action's error, as PySpark raises it
        table_of(failing)

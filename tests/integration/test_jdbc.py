"""The jdbc connector against a real PostgreSQL: a scan split over 4 subtasks returns exactly the table's rows,
values and types; a lookup join enriches a stream and sees a change of the dimension table once the cache
TTL has passed; the DataStream JdbcSink appends exactly once through a TaskManager kill; the README's database cell
runs as shown."""
from __future__ import annotations

import datetime
import time
from decimal import Decimal

import pytest

from runtime.table import StreamTableEnvironment
from runtime.connectors.jdbc import JdbcConnectionOptions, JdbcSink, JdbcSource
from runtime.connectors.postgres_cdc import PostgresCdcSource
from tests.helpers.clusters import busy_taskmanager, job_state, wait_for_checkpoint_after_restart, wait_until
from tests.helpers import readme
from tests.helpers.pacing import Pace
from tests.helpers.postgres import jdbc_driver_config, postgres_server

pytestmark = pytest.mark.slow
ROWS = 10_000


@pytest.fixture(scope="module")
def pg():
    with postgres_server() as server:
        server.execute("CREATE TABLE items (id BIGINT PRIMARY KEY, qty INT, price NUMERIC(10, 2), name TEXT, "
                       "added TIMESTAMP, day DATE, fresh BOOLEAN, ratio DOUBLE PRECISION)")
        server.execute(f"INSERT INTO items SELECT g, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 97 END, g / 4.0, "
                       f"CASE WHEN g % 13 = 0 THEN '' WHEN g % 17 = 0 THEN NULL ELSE 'item, \"' || g || '\"' END, "
                       f"TIMESTAMP '2024-01-01 00:00:00' + g * INTERVAL '1 second', DATE '2024-01-01' + g % 365, "
                       f"g % 2 = 0, g / 7.0 FROM generate_series(1, {ROWS}) g")
        server.execute("CREATE TABLE customers (id INT PRIMARY KEY, name TEXT)")
        server.execute("INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace')")
        yield server


def with_options(pg) -> str:
    return f"'url' = '{pg.jdbc_url}', 'username' = '{pg.user}', 'password' = '{pg.password}'"


def test_a_scan_over_four_subtasks_returns_exactly_the_tables_rows(cluster, pg):
    env = cluster.environment()
    env.set_parallelism(4)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(f"""CREATE TABLE items (id BIGINT, qty INT, price DECIMAL(10, 2), name STRING, added TIMESTAMP(3),
        day DATE, fresh BOOLEAN, ratio DOUBLE) WITH ('connector' = 'jdbc', {with_options(pg)}, 'table-name' = 'items',
        'scan.partition.column' = 'id', 'scan.partition.num' = '8', 'scan.partition.lower-bound' = '1',
        'scan.partition.upper-bound' = '{ROWS}', 'scan.fetch-size' = '1000')""")
    t_env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    result = t_env.execute_sql("SELECT * FROM items")
    got = sorted(tuple(_naive(v) for v in row) for row in result.collect())
    job = result.get_job_client()
    assert {v["parallelism"] for v in job.details()["vertices"] if "Source" in v["name"]} == {4}
    expected = sorted(pg.execute("SELECT * FROM items"))
    assert len(got) == ROWS and got == expected
    assert {type(v) for row in got[:50] for v in row if v is not None} == {int, Decimal, str, datetime.datetime,
                                                                          datetime.date, bool, float}


def _naive(value):
    """TIMESTAMP as Flink gives it in Python: a plain datetime (UTC when the result carries the zone)."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def test_a_lookup_join_enriches_a_stream_and_sees_a_change_after_the_cache_ttl(cluster, pg):
    env = cluster.environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(f"""CREATE TABLE customers (id INT, name STRING) WITH ('connector' = 'jdbc', {with_options(pg)},
        'table-name' = 'customers', 'lookup.cache.max-rows' = '100', 'lookup.cache.ttl' = '3 s')""")
    t_env.create_temporary_view("orders", env.push_source("order_id BIGINT, customer INT", name="orders in"))
    result = t_env.execute_sql("""SELECT o.order_id, c.name FROM (SELECT *, PROCTIME() AS pt FROM orders) AS o
        LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.customer = c.id""")
    job = result.get_job_client()
    job.push("orders in", [{"order_id": 1, "customer": 1}, {"order_id": 2, "customer": 2},
                           {"order_id": 3, "customer": 9}])
    seen = wait_until(lambda: _names(job) if len(_names(job)) == 3 else None, 180, "the first three orders joined")
    assert seen == {1: "Ada", 2: "Grace", 3: None}
    pg.execute("UPDATE customers SET name = 'Ada Lovelace' WHERE id = 1")
    time.sleep(3.5)  # the cache keeps a key's rows for its TTL: past it, the next order sees the change
    job.push("orders in", [{"order_id": 4, "customer": 1}])
    assert wait_until(lambda: _names(job).get(4), 120, "the fourth order joined") == "Ada Lovelace"
    job.cancel()


def _names(job) -> dict:
    """Order id -> customer name of the rows the running job has delivered so far."""
    return {row["order_id"]: row["name"] for row in job.fetch(0)[0].to_pylist()}


@pytest.mark.timeout(900)
def test_the_datastream_jdbc_sink_appends_exactly_once_through_a_taskmanager_kill(fresh_cluster, pg, tmp_path):
    pg.execute("CREATE TABLE events (id BIGINT, v DOUBLE PRECISION)")  # no key: an append sink, where a duplicate would show
    cluster = fresh_cluster(taskmanagers=2, slots=2, **{"restart-strategy.fixed-delay.delay": "200 ms"},
                            **jdbc_driver_config())
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    pace = Pace(tmp_path / "pace", 1_000)
    connection = (JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(pg.jdbc_url)
                  .with_user_name(pg.user).with_password(pg.password).build())
    (env.datagen("id BIGINT, v DOUBLE", number_of_rows=40_000, fields={"id": {"kind": "sequence", "start": 0}})
        .map(pace, schema="id BIGINT, v DOUBLE")
        .sink_to(JdbcSink.sink("events", connection)))
    job = env.execute_async("events into PostgreSQL")
    wait_for_checkpoint_after_restart(cluster.client, job.job_id, restarts=0)
    wait_until(lambda: pg.execute("SELECT count(*) FROM events")[0][0] > 0, 120, "rows written before the kill")
    assert job_state(cluster.client, job.job_id) == "RUNNING"
    cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))
    wait_for_checkpoint_after_restart(cluster.client, job.job_id, restarts=1)
    pace.lift()
    assert job.wait(600) == "FINISHED"
    assert pg.execute("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM events")[0] == (40_000, 40_000, 0,
                                                                                                  39_999)
    reader = cluster.environment()  # and back through the DataStream source: 4 splits, 2 subtasks (one TaskManager)
    reader.set_parallelism(2)
    reader.set_runtime_mode("batch")
    reader.from_source(JdbcSource.source("events", "id BIGINT, v DOUBLE", connection,
                                         partition=("id", 4, 0, 39_999))).collect()
    back = reader.execute_async("events from PostgreSQL").results(timeout=600)
    assert sorted(back.column("id").to_pylist()) == list(range(40_000))


def cdc_job(cluster, pg, table: str, rows: str, slot: str, **options):
    """A DataStream job collecting the changes of a new table ``table`` (sku INT key, v INT) holding ``rows``."""
    pg.execute(f"CREATE TABLE {table} (sku INT PRIMARY KEY, v INT)")
    pg.execute(f"ALTER TABLE {table} REPLICA IDENTITY FULL")
    pg.execute(f"INSERT INTO {table} VALUES {rows}")
    env = cluster.environment()
    env.enable_checkpointing("1 s")
    (env.from_source(PostgresCdcSource.source("127.0.0.1", pg.database, "public", table, "sku INT, v INT", pg.user,
                                              pg.password, slot, port=pg.port, **options))
        .set_parallelism(1).collect())
    return env.execute_async(f"{table} changes")


def test_the_datastream_cdc_source_reads_the_snapshot_then_each_change(cluster, pg):
    job = cdc_job(cluster, pg, "stock", "(1, 10), (2, 20)", "stock_stream", decoding_plugin="wal2json")
    changes = lambda: [(r["__op"], r["sku"], r["v"]) for r in job.fetch(0)[0].to_pylist()]  # noqa: E731
    wait_until(lambda: len(changes()) == 2, 180, "the snapshot")
    pg.execute("UPDATE stock SET v = 11 WHERE sku = 1")
    pg.execute("DELETE FROM stock WHERE sku = 2")
    pg.execute("INSERT INTO stock VALUES (3, 30)")
    wait_until(lambda: len(changes()) == 6, 120, "the three changes")
    assert sorted(changes()[:2]) == [(0, 1, 10), (0, 2, 20)]
    assert changes()[2:] == [(1, 1, 10), (2, 1, 11), (3, 2, 20), (0, 3, 30)]
    job.cancel()
    wait_until(lambda: job.status() == "CANCELED", 60, "the job cancelled")
    wait_until(lambda: pg.execute("SELECT NOT active FROM pg_replication_slots WHERE slot_name = 'stock_stream'")[0][0],
               60, "the slot let go")
    pg.execute("SELECT pg_drop_replication_slot('stock_stream')")


REVENUE = """SELECT c.country, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id
             GROUP BY c.country"""


def test_the_readmes_database_cell_runs_as_shown(cluster):
    cell = next(c for c in readme.commands("Databases") if c.startswith("%%flink sql"))
    options, script = cell.split("\n", 1)
    assert options == "%%flink sql --checkpoint-interval 1s"
    with postgres_server() as server:  # the cell's tables and slot, on a server of its own
        server.execute("CREATE TABLE customers (id INT PRIMARY KEY, name TEXT, country TEXT)")
        server.execute("INSERT INTO customers VALUES (1, 'Ada', 'UK'), (2, 'Grace', 'US'), (3, 'Edsger', 'NL')")
        server.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT, amount NUMERIC(10, 2))")
        server.execute("ALTER TABLE orders REPLICA IDENTITY FULL")
        server.execute("INSERT INTO orders SELECT g, 1 + g % 3, g / 10.0 FROM generate_series(1, 100) g")
        server.execute("CREATE TABLE revenue (country TEXT PRIMARY KEY, orders BIGINT, total NUMERIC(12, 2))")
        env = cluster.environment()
        env.set_parallelism(2)
        env.enable_checkpointing("1 s")
        t_env = StreamTableEnvironment.create(env)
        script = script.replace("127.0.0.1:5432", f"127.0.0.1:{server.port}").replace(
            "'port' = '5432'", f"'port' = '{server.port}'")
        job = t_env.executor.execute_script(script)[-1].job
        wait_until(lambda: sorted(server.execute("SELECT * FROM revenue")) == sorted(server.execute(REVENUE)), 180,
                   "the snapshot's revenue")
        server.execute("INSERT INTO orders SELECT g, 1 + g % 2, g / 10.0 FROM generate_series(101, 150) g")
        server.execute("UPDATE orders SET customer_id = 3, amount = amount + 1 WHERE id % 7 = 0")
        server.execute("DELETE FROM orders WHERE id % 11 = 0")
        wait_until(lambda: sorted(server.execute("SELECT * FROM revenue")) == sorted(server.execute(REVENUE)), 180,
                   "the revenue after the changes")
        job.cancel()
        wait_until(lambda: job.status() == "CANCELED", 60, "the job cancelled")


def test_latest_offset_reads_only_changes_made_after_the_job_started(cluster, pg):
    job = cdc_job(cluster, pg, "prices", "(1, 100)", "prices_latest", startup_mode="latest-offset")
    wait_until(lambda: pg.execute("SELECT active FROM pg_replication_slots WHERE slot_name = 'prices_latest'"), 180,
               "the job's slot")
    pg.execute("UPDATE prices SET v = 120 WHERE sku = 1")
    rows = wait_until(lambda: job.fetch(0)[0].to_pylist() or None, 120, "the update")
    assert [(r["__op"], r["sku"], r["v"]) for r in rows] == [(1, 1, 100), (2, 1, 120)], "no snapshot, the update"
    job.cancel()
    wait_until(lambda: job.status() == "CANCELED", 60, "the job cancelled")

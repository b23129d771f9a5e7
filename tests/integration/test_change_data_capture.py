"""Change data capture through failures: a SQL job reads a PostgreSQL table of orders through postgres-cdc, groups
it and writes through the upsert jdbc sink, while the test inserts, updates and deletes 20,000 rows and kills a
TaskManager twice and the leading JobManager once (file HA). Afterwards the sink table equals the same GROUP BY
run by PostgreSQL on the final table (nothing lost, nothing twice), and the replication slot's confirmed
position has moved past every change."""
from __future__ import annotations

import random
import signal
import threading
import time

import pytest

from runtime.table import StreamTableEnvironment
from runtime.cluster import LocalCluster
from tests.helpers.clusters import (FAST_FAILURE_CONFIG, busy_taskmanager, job_state, wait_for_checkpoint_after_restart,
                                    wait_until)
from tests.helpers.ha import new_leader, registered_taskmanagers
from tests.helpers.postgres import postgres_server

pytestmark = pytest.mark.serial

CHANGES, PER_TRANSACTION, INITIAL_ROWS, CUSTOMERS = 20_000, 50, 2_000, 40
CONFIG = {**FAST_FAILURE_CONFIG, "high-availability.lease-duration": "2 s", "spark.driver.memory": "512m",
          "restart-strategy.fixed-delay.delay": "200 ms"}
TOTALS = "SELECT customer, SUM(amount), COUNT(*) FROM orders GROUP BY customer"


class OrderChanges(threading.Thread):
    """Writes CHANGES inserts, updates and deletes in transactions of PER_TRANSACTION, two transactions a second
    until ``lift`` (then as fast as it can): the job's input outlasts the faults without a minute to spare."""

    def __init__(self, server):
        super().__init__(name="order-changes", daemon=True)
        self.server, self.lifted, self.written, self.error = server, threading.Event(), 0, None
        self.random, self.next_id, self.live = random.Random(34), INITIAL_ROWS + 1, list(range(1, INITIAL_ROWS + 1))

    def lift(self) -> None:
        self.lifted.set()

    def run(self) -> None:
        try:
            with self.server.connect() as conn:
                while self.written < CHANGES:
                    with conn.transaction():
                        for _ in range(PER_TRANSACTION):
                            self._change(conn)
                    self.written += PER_TRANSACTION
                    if not self.lifted.is_set():
                        time.sleep(0.5)
        except Exception as err:  # noqa: BLE001 - reported by the test
            self.error = err

    def _change(self, conn) -> None:
        roll = self.random.random()
        if roll < 0.5 or len(self.live) < 100:
            conn.execute("INSERT INTO orders VALUES (%s, %s, %s)",
                         (self.next_id, self.random.randrange(CUSTOMERS), self.random.randrange(100, 10_000) / 100))
            self.live.append(self.next_id)
            self.next_id += 1
        elif roll < 0.85:
            conn.execute("UPDATE orders SET amount = amount + 1, customer = %s WHERE id = %s",
                         (self.random.randrange(CUSTOMERS), self.random.choice(self.live)))
        else:
            victim = self.live.pop(self.random.randrange(len(self.live)))
            conn.execute("DELETE FROM orders WHERE id = %s", (victim,))


@pytest.mark.timeout(900)
def test_cdc_into_an_upsert_sink_survives_taskmanager_and_leader_kills_exactly_once(tmp_path):
    with postgres_server() as pg:
        pg.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT NOT NULL, amount NUMERIC(12, 2))")
        pg.execute("ALTER TABLE orders REPLICA IDENTITY FULL")
        pg.execute(f"INSERT INTO orders SELECT g, g % {CUSTOMERS}, g / 100.0 FROM generate_series(1, {INITIAL_ROWS}) g")
        pg.execute("CREATE TABLE totals (customer INT PRIMARY KEY, total NUMERIC(14, 2), orders BIGINT)")
        with LocalCluster(taskmanagers=3, slots=2, jobmanagers=2, config=CONFIG,
                          working_dir=str(tmp_path / "cluster")) as cluster:
            job = submit(cluster, pg)
            writer = OrderChanges(pg)
            writer.start()
            for kill in range(2):  # each kill once the round before it runs and has checkpointed
                wait_for_checkpoint_after_restart(cluster.client, job.job_id, restarts=kill)
                assert job_state(cluster.client, job.job_id) == "RUNNING"
                cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))
                cluster.add_taskmanager(wait=False)
            wait_for_checkpoint_after_restart(cluster.client, job.job_id, restarts=2)
            assert cluster.client.get(f"/jobs/{job.job_id}")["restarts"] >= 2
            old = cluster.leader_url()
            assert cluster.kill_jobmanager().popen.returncode == -signal.SIGKILL
            new_leader(cluster, old)
            wait_until(lambda: registered_taskmanagers(cluster) == 3, 90, "the TaskManagers to follow the new leader")
            writer.lift()
            writer.join(300)
            assert writer.error is None and writer.written == CHANGES, writer.error
            last_change = pg.execute("SELECT pg_current_wal_lsn()")[0][0]
            expected = sorted(pg.execute(TOTALS))
            wait_until(lambda: sorted(pg.execute("SELECT * FROM totals")) == expected, 300,
                       "the sink table to equal PostgreSQL's GROUP BY")
            wait_until(lambda: pg.execute("SELECT confirmed_flush_lsn >= %s FROM pg_replication_slots "
                                          "WHERE slot_name = 'orders_slot'", (last_change,))[0][0], 120,
                       "the slot confirmed past the last change")
            assert job_state(cluster.client, job.job_id) == "RUNNING"
            restored = cluster.client.get(f"/jobs/{job.job_id}/checkpoints")["counts"]["restored"]
            assert restored >= 1, "the new leader restored the job from a checkpoint"
            job.cancel()
        pg.execute("SELECT pg_drop_replication_slot('orders_slot')")


def submit(cluster, pg):
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(f"""CREATE TABLE orders (id BIGINT, customer INT, amount DECIMAL(12, 2),
        PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'postgres-cdc', 'hostname' = '{pg.host}',
        'port' = '{pg.port}', 'username' = '{pg.user}', 'password' = '{pg.password}', 'database-name' = '{pg.database}',
        'schema-name' = 'public', 'table-name' = 'orders', 'slot.name' = 'orders_slot')""")
    t_env.execute_sql(f"""CREATE TABLE totals (customer INT, total DECIMAL(14, 2), orders BIGINT,
        PRIMARY KEY (customer) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{pg.jdbc_url}',
        'username' = '{pg.user}', 'password' = '{pg.password}', 'table-name' = 'totals')""")
    return t_env.execute_sql(f"INSERT INTO totals {TOTALS}").get_job_client()

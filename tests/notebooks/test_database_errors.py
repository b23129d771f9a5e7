"""Bad database input in %%flink sql cells of a real kernel: a wrong password, an unreachable host, a missing table,
a sink whose primary key the table lacks, a server whose wal_level is not logical and a replication slot another
process reads each get one line naming the table, the option or setting, and the cause; the cluster then runs
the next cell, and what a job wrote before is still there."""
from __future__ import annotations

import psycopg
import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of
from tests.helpers.ports import free_port
from tests.helpers.postgres import postgres_server

pytestmark = pytest.mark.slow

CASES = {
    "wrong password": ("CREATE TABLE t1 (id INT) WITH ({jdbc}, 'password' = 'not-it', 'table-name' = 'totals');\n"
                       "SELECT * FROM t1", "table 't1': PostgreSQL at 127.0.0.1:{port}/shop refused user 'flinkbench': "
                                           "password authentication failed (options 'username' and 'password')"),
    "unreachable host": ("CREATE TABLE t2 (id INT) WITH ('connector' = 'jdbc', 'url' = "
                         "'jdbc:postgresql://127.0.0.1:{closed}/shop', 'table-name' = 'totals');\nSELECT * FROM t2",
                         "table 't2': cannot reach PostgreSQL at 127.0.0.1:{closed} (option 'url'): "),
    "missing table": ("CREATE TABLE t3 (id INT) WITH ({jdbc}, {password}, 'table-name' = 'nope');\nSELECT * FROM t3",
                      "table 't3': PostgreSQL has no table public.nope"),
    "sink without the key": ("CREATE TABLE t4 (id INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ({jdbc}, {password}, "
                             "'table-name' = 'keyless');\nINSERT INTO t4 VALUES (1, 2)",
                             "table 't4': the sink declares PRIMARY KEY (id) but the PostgreSQL table public.keyless "
                             "has no primary key or unique index on exactly those columns"),
    "wal_level not logical": ("CREATE TABLE t5 (id INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({cdc_replica}, "
                              "'slot.name' = 's5');\nSELECT * FROM t5",
                              "table 't5': PostgreSQL at 127.0.0.1:{replica_port} has wal_level = replica; change data "
                              "capture needs wal_level = logical"),
    "slot in use": ("CREATE TABLE t6 (id INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ({cdc}, "
                    "'slot.name' = 'busy_slot');\nSELECT * FROM t6",
                    "table 't6': replication slot 'busy_slot' is in use by another process (PID "),
}


@pytest.fixture(scope="module")
def servers():
    with postgres_server() as logical, postgres_server(wal_level="replica") as replica:
        logical.execute("CREATE TABLE totals (id INT PRIMARY KEY, n BIGINT)")
        logical.execute("CREATE TABLE keyless (id INT, n BIGINT)")
        logical.execute("ALTER TABLE totals REPLICA IDENTITY FULL")
        logical.execute("CREATE PUBLICATION busy_pub FOR TABLE totals")  # before the slot, which sees only older ones
        logical.execute("SELECT pg_create_logical_replication_slot('busy_slot', 'pgoutput')")
        replica.execute("CREATE TABLE totals (id INT PRIMARY KEY)")
        yield logical, replica


@pytest.fixture(scope="module")
def reader_of_the_slot(servers):
    """Another process streaming from 'busy_slot' for the whole module."""
    logical, _ = servers
    conn = psycopg.connect(logical.conninfo + " replication=database", autocommit=True)
    conn.pgconn.send_query(b"START_REPLICATION SLOT busy_slot LOGICAL 0/0 (proto_version '1', publication_names "
                           b"'busy_pub')")
    conn.pgconn.get_result()
    yield conn
    conn.close()


def options(server, replica) -> dict[str, str]:
    cdc = ("'connector' = 'postgres-cdc', 'hostname' = '127.0.0.1', 'port' = '{}', 'username' = '{}', "
           "'password' = '{}', 'database-name' = '{}', 'schema-name' = 'public', 'table-name' = 'totals'")
    return {"jdbc": f"'connector' = 'jdbc', 'url' = '{server.jdbc_url}', 'username' = '{server.user}'",
            "password": f"'password' = '{server.password}'", "port": str(server.port), "closed": str(free_port()),
            "cdc": cdc.format(server.port, server.user, server.password, server.database),
            "cdc_replica": cdc.format(replica.port, replica.user, replica.password, replica.database),
            "replica_port": str(replica.port)}


@pytest.fixture(scope="module")
def cells(cluster, servers, reader_of_the_slot, tmp_path_factory):
    """One kernel: a job writes two rows, then each bad cell, then a cell that reads them back."""
    logical, replica = servers
    values = options(logical, replica)
    table = (f"%%flink sql\nCREATE TABLE totals (id INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ({values['jdbc']}, "
             f"{values['password']}, 'table-name' = 'totals')")
    nb = execute(code_notebook(
        "%load_ext kernel_magics",
        f"%flink connect {cluster.url} --token-file {cluster.token_file}",
        table,
        "%%flink sql --wait\nINSERT INTO totals VALUES (1, 10), (2, 20)",
        *[f"%%flink sql\n{text.format(**values)}" for text, _ in CASES.values()],
        "%%flink sql --wait --mode batch -o back\nSELECT * FROM totals",
        "from tests.helpers.live_checks import report\nreport(rows=sorted(map(list, back.values.tolist())))",
    ), timeout=600, allow_errors=True, save_to=tmp_path_factory.mktemp("nb") / "database-errors.ipynb")
    return dict(zip(["load", "connect", "table", "insert", *CASES, "read", "check"], nb.cells)), values


@pytest.mark.parametrize("case", list(CASES))
def test_each_bad_input_is_one_line_naming_table_option_and_cause(cells, case):
    by_name, values = cells
    cell = by_name[case]
    err = error_of(cell)
    assert err is not None and err.ename == "SqlCellError", text_of(cell)
    assert CASES[case][1].format(**values) in text_of(cell), text_of(cell)
    assert len(err.traceback) == 1, "one line, no stack"


def test_the_cluster_runs_the_next_cell_and_nothing_written_is_lost(cells, servers):
    by_name, _ = cells
    for name in ("table", "insert", "read", "check"):
        assert error_of(by_name[name]) is None, text_of(by_name[name])
    assert json_lines(by_name["check"])["rows"] == [[1, 10], [2, 20]]
    assert servers[0].execute("SELECT * FROM totals ORDER BY id") == [(1, 10), (2, 20)]

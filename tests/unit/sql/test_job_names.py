"""A SQL job's name, as Flink gives it: pipeline.name when set, else insert-into_<sink tables> or collect; the
statement itself stays with the job."""
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment

TABLES = ["CREATE TABLE clicks (`user` BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen')",
          "CREATE TABLE counts (`user` BIGINT, n BIGINT) WITH ('connector' = 'blackhole')",
          "CREATE TABLE shown (`user` BIGINT, n BIGINT) WITH ('connector' = 'print')"]
INSERT = "INSERT INTO counts SELECT `user`, COUNT(*) FROM clicks GROUP BY `user`"


class SubmittedGraphs:
    """Takes submissions as a JobManager would and keeps what it was given."""

    def __init__(self):
        self.graphs: list[dict] = []

    def submit(self, graph: dict):
        self.graphs.append(graph)
        return type("Job", (), {"job_id": f"{len(self.graphs):032x}"})()


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment(SubmittedGraphs()))
    for ddl in TABLES:
        t_env.execute_sql(ddl)
    return t_env


def submitted(t_env) -> dict:
    return t_env.executor.env._client.graphs[-1]


@pytest.mark.parametrize("statement, name", [
    ("SELECT `user` FROM clicks WHERE `user` > 3", "collect"),
    (INSERT, "insert-into_default_catalog.default_database.counts"),
    ("INSERT INTO default_database.counts SELECT `user`, 1 FROM clicks",
     "insert-into_default_catalog.default_database.counts"),
    (f"EXECUTE STATEMENT SET BEGIN {INSERT}; INSERT INTO shown SELECT `user`, 2 FROM clicks; END",
     "insert-into_default_catalog.default_database.counts,default_catalog.default_database.shown"),
])
def test_an_unnamed_job_is_named_as_flink_names_it_and_keeps_its_statement(t_env, statement, name):
    result = t_env.execute_sql(statement)
    graph = submitted(t_env)
    assert graph["name"] == name
    assert graph["statement"] == statement
    assert result.get_job_client().name == name


def test_pipeline_name_names_the_job(t_env):
    t_env.execute_sql("SET 'pipeline.name' = 'tumble-sql'")
    t_env.execute_sql(INSERT)
    assert submitted(t_env)["name"] == "tumble-sql"
    t_env.execute_sql("RESET 'pipeline.name'")
    t_env.execute_sql("SELECT `user` FROM clicks")
    assert submitted(t_env)["name"] == "collect"

"""Python functions in SQL without a cluster: PyFlink's decorators and types, registration (the Table API and
CREATE FUNCTION), how calls resolve beside the built-ins (Flink's order), LATERAL TABLE and aggregate calls in the
plan, and the errors that name the function."""
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.udf import AggregateFunction, DataTypes, udaf, udf, udtf
from tests.helpers import python_functions

CLICKS = """CREATE TABLE clicks (`user` BIGINT, url STRING, amount DOUBLE, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '100')"""
MODULE = "tests.helpers.python_functions"


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql(CLICKS)
    return t_env


def plan(t_env, query: str) -> str:
    return t_env.explain_sql(query).split("== Physical Execution Plan ==")[0]


def test_decorators_take_types_as_strings_or_datatypes_as_pyflink_does():
    assert python_functions.band.result_type == "STRING" and python_functions.band.kind == "scalar"
    assert python_functions.segments.result_type == "ROW<f0 STRING, f1 INT>"
    assert python_functions.mean_of.kind == "aggregate" and python_functions.mean_of.mergeable
    assert not python_functions.longest.mergeable
    assert str(DataTypes.ROW([DataTypes.FIELD("a", DataTypes.DECIMAL(10, 2))])) == "ROW<`a` DECIMAL(10, 2)>"
    with pytest.raises(TypeError, match="result_type"):
        udf(lambda x: x)
    with pytest.raises(ValueError, match="func_type"):
        udf(lambda x: x, result_type="INT", func_type="arrow")
    with pytest.raises(TypeError, match="AggregateFunction instance"):
        udaf(lambda x: x, result_type="INT")


def test_a_temporary_system_function_shadows_a_built_in_and_a_catalog_function_does_not(t_env):
    t_env.create_temporary_system_function("upper", udf(lambda s: s, result_type="STRING"))
    t_env.create_temporary_function("lower", udf(lambda s: s, result_type="STRING"))
    text = plan(t_env, "SELECT UPPER(url) AS u, LOWER(url) AS l, default_catalog.default_database.lower(url) AS p "
                       "FROM clicks")
    assert "UPPER__PY" in text and "LOWER(`url`) AS l" in text and "LOWER__PY" in text


def test_create_function_imports_the_module_and_names_what_is_wrong(t_env):
    t_env.execute_sql(f"CREATE TEMPORARY FUNCTION band AS '{MODULE}.band' LANGUAGE PYTHON")
    t_env.execute_sql(f"CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS band AS '{MODULE}.band' LANGUAGE PYTHON")
    assert [r[0] for r in t_env.execute_sql("SHOW USER FUNCTIONS").collect()] == ["band"]
    for statement, words in [
        ("CREATE TEMPORARY FUNCTION f AS 'no_such_module.f' LANGUAGE PYTHON", "cannot import module 'no_such_module'"),
        (f"CREATE TEMPORARY FUNCTION f AS '{MODULE}.nothing' LANGUAGE PYTHON", "has no 'nothing'"),
        (f"CREATE TEMPORARY FUNCTION f AS '{MODULE}.MeanOf' LANGUAGE PYTHON", "is a class, not a function made by"),
        (f"CREATE TEMPORARY FUNCTION band AS '{MODULE}.band' LANGUAGE PYTHON", "already exists"),
        ("CREATE FUNCTION f AS 'com.example.F'", "LANGUAGE JAVA is not supported"),
    ]:
        with pytest.raises((SqlValidationError, UnsupportedSqlError), match=words):
            t_env.execute_sql(statement)
    t_env.execute_sql("DROP TEMPORARY FUNCTION band")
    t_env.execute_sql("DROP TEMPORARY SYSTEM FUNCTION IF EXISTS band")
    with pytest.raises(SqlValidationError, match="does not exist"):
        t_env.execute_sql("DROP TEMPORARY FUNCTION band")
    assert not list(t_env.execute_sql("SHOW USER FUNCTIONS").collect())


def test_create_function_finds_a_module_among_python_files(t_env, tmp_path):
    (tmp_path / "flinkbench_unit_functions.py").write_text(
        "from runtime.udf import udf\n\n@udf(result_type='BIGINT')\ndef twice(n):\n    return 2 * n\n")
    t_env.add_python_file(str(tmp_path / "flinkbench_unit_functions.py"))
    t_env.execute_sql("CREATE TEMPORARY FUNCTION twice AS 'flinkbench_unit_functions.twice' LANGUAGE PYTHON")
    assert "TWICE__PY" in plan(t_env, "SELECT twice(`user`) FROM clicks")


@pytest.mark.parametrize("query, words", [
    ("SELECT band(amount, url) FROM clicks", "function band cannot take 2 argument"),
    ("SELECT segments(url) FROM clicks", "segments is a table function: call it in FROM as LATERAL TABLE"),
    ("SELECT p FROM clicks, LATERAL TABLE(band(url)) AS T(p)", "LATERAL TABLE takes a table function"),
    ("SELECT p FROM clicks, LATERAL TABLE(nosuch(url)) AS T(p)", "table function 'nosuch' does not exist"),
    ("SELECT p FROM clicks, LATERAL TABLE(segments(url)) AS T(p)", "names 1 column"),
    ("SELECT url, median(amount) FROM clicks GROUP BY url", "pandas aggregate function median needs all"),
    ("SELECT mean_of(amount) OVER (PARTITION BY url ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) "
     "FROM clicks", "cannot be used in OVER"),
    ("SELECT url FROM clicks WHERE mean_of(amount) > 1", r"MEAN_OF\(amount\) is not allowed here"),
])
def test_misused_functions_are_refused_by_name(t_env, query, words):
    for name in python_functions.FUNCTIONS:
        t_env.create_temporary_system_function(name, getattr(python_functions, name))
    with pytest.raises((SqlValidationError, UnsupportedSqlError), match=words):
        plan(t_env, query)


def test_lateral_table_and_python_aggregates_show_in_the_plan(t_env):
    for name in python_functions.FUNCTIONS:
        t_env.create_temporary_system_function(name, getattr(python_functions, name))
    lateral = plan(t_env, "SELECT url, p FROM clicks LEFT JOIN LATERAL TABLE(segments(url)) AS T(p, q) ON TRUE")
    assert "Correlate(invocation=[segments(`url`)], joinType=[LEFT], fields=[p, q])" in lateral
    window = plan(t_env, "SELECT window_start, mean_of(amount), median(amount) FROM TABLE(TUMBLE(TABLE clicks, "
                         "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end")
    assert "mean_of(amount) AS __agg0, median(amount) AS __agg1" in window


def test_an_aggregate_function_that_cannot_merge_travels_raw_and_one_that_can_is_pre_aggregated(t_env):
    class Count(AggregateFunction):
        def create_accumulator(self):
            return [0]

        def accumulate(self, acc, *values):
            acc[0] += 1

        def get_value(self, acc):
            return acc[0]

    t_env.create_temporary_system_function("counted", udaf(Count(), result_type="BIGINT"))
    t_env.create_temporary_system_function("mean_of", python_functions.mean_of)
    assert "[local_aggregate]" in t_env.explain_sql("SELECT url, mean_of(amount) FROM clicks GROUP BY url")
    assert "[local_aggregate]" not in t_env.explain_sql("SELECT url, counted(amount) FROM clicks GROUP BY url")


def test_a_function_that_cannot_be_pickled_is_refused_when_registered(t_env):
    import threading

    lock = threading.Lock()
    with pytest.raises(SqlValidationError, match="cannot be sent to the TaskManagers"):
        t_env.create_temporary_system_function("locked", udf(lambda s: str(lock), result_type="STRING"))


def test_a_table_function_declared_with_udtf_takes_a_row_type():
    pairs = udtf(lambda s: [(s, 1)], result_types=DataTypes.ROW([DataTypes.FIELD("word", DataTypes.STRING()),
                                                                  DataTypes.FIELD("n", DataTypes.INT())]))
    assert pairs.result_type == "ROW<`word` STRING, `n` INT>"

"""The function registry: what the planner runs of Flink's built-in functions, refusing the rest by name, and the
docs table generated from it (which must be current)."""
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.builtins import registry
from runtime.sql.function_defs import CATEGORIES
from runtime.sql.functions import to_spark

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql("CREATE TABLE t (s STRING, i INT, d DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                      "WITH ('connector' = 'datagen', 'number-of-rows' = '5')")
    return t_env


def test_every_category_of_flinks_page_has_functions_and_each_function_one_entry():
    functions = registry().functions
    assert {f.category for f in functions} == set(CATEGORIES)
    names = [f.name for f in functions]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    assert all(f.note for f in functions if not f.supported), "an unsupported function says why"


@pytest.mark.parametrize("query, words", [
    ("SELECT TYPEOF(i) FROM t", "function TYPEOF is not supported: Spark's type names are not Flink's"),
    ("SELECT s SIMILAR TO 'a%' FROM t", "function SIMILAR TO is not supported"),
    ("SELECT JSON_VALUE(s, '$.a') FROM t", "function JSON_VALUE is not supported"),
    ("SELECT NO_SUCH_FUNCTION(s) FROM t", r"function NO_SUCH_FUNCTION is not supported \(docs/sql-functions.md"),
    ("SELECT * FROM t WHERE RAND(42) > 0.5", "function RAND \\(seeded\\) is not supported"),
])
def test_a_function_the_registry_does_not_run_is_refused_by_name_with_its_position(t_env, query, words):
    with pytest.raises(UnsupportedSqlError, match=words) as caught:
        t_env.sql_query(query)
    assert caught.value.line == 1 and caught.value.column is not None


def test_a_registered_python_function_is_not_taken_for_an_unknown_built_in(t_env):
    t_env.create_temporary_function("shout", lambda s: s.str.upper(), "STRING")
    assert t_env.sql_query("SELECT shout(s) AS loud FROM t").get_schema() == [("loud", "STRING")]


@pytest.mark.parametrize("flink, spark", [
    ("SPLIT_INDEX(s, ',', 1)", "IF(1 < 0, NULL, TRY_ELEMENT_AT(SPLIT(s, CONCAT('\\\\Q', ',', '\\\\E')), 1 + 1))"),
    ("SHA256(s)", "SHA2(s, 256)"),
    ("ARRAY[i, 2][1]", "TRY_ELEMENT_AT(ARRAY(i, 2), 1)"),
    ("MAP['a', i]['a']", "TRY_ELEMENT_AT(MAP('a', i), 'a')"),
    ("GREATEST(i, 3)", "IF(i IS NULL OR 3 IS NULL, NULL, GREATEST(i, 3))"),
    ("CURRENT_DATABASE()", "'default_database'"),
    ("FLOOR(ts TO HOUR)", "DATE_TRUNC('HOUR', ts)"),
])
def test_calls_are_rendered_as_the_registry_says(flink, spark):
    import sqlglot

    from runtime.sql.dialect import Flink

    assert to_spark(sqlglot.parse_one(flink, read=Flink)).upper() == spark.upper()


def test_ceil_of_a_double_stays_a_double_when_the_column_types_are_known():
    import sqlglot

    from runtime.sql.dialect import Flink

    assert to_spark(sqlglot.parse_one("CEIL(d)", read=Flink), {"d": "DOUBLE"}) == "CAST(CEIL(d) AS DOUBLE)"
    assert to_spark(sqlglot.parse_one("CEIL(i)", read=Flink), {"i": "INT"}) == "CEIL(i)"


def test_the_docs_table_is_generated_from_the_registry_and_current():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_function_docs.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout
    text = (ROOT / "docs" / "sql-functions.md").read_text()
    assert "| `SPLIT_INDEX(string1, string2, integer1)` | yes |" in text and "## Json" not in text

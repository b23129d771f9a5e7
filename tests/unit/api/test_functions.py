import pytest

from runtime.api import functions as F
from runtime.api.functions import col, lit, when


def test_columns_render_spark_sql():
    assert (col("amount") > 0.1).sql == "(`amount` > 0.1)"
    assert ((col("a") + 1) * col("b")).alias("c").sql == "((`a` + 1) * `b`) AS `c`"
    assert (~(col("x").isin(1, 2)) & col("y").isNull()).sql == "((NOT (`x` IN (1, 2))) AND (`y` IS NULL))"
    assert when(col("a") > 1, "big").otherwise(lit("small")).sql == "CASE WHEN (`a` > 1) THEN 'big' ELSE 'small' END"
    assert F.upper(col("url")).sql == "upper(`url`)"
    assert lit("it's").sql == "'it\\'s'"


def test_python_boolean_operators_are_refused():
    with pytest.raises(TypeError, match="combine conditions with &"):
        bool(col("a") > 1)

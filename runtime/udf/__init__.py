"""Python functions for SQL with PyFlink's names (pyflink.table.udf): ``udf``, ``udtf``, ``udaf``, the
function classes and ``DataTypes``. ``from runtime.udf import udf, DataTypes`` as PyFlink's
``from pyflink.table.udf import udf`` and ``from pyflink.table import DataTypes``."""
from runtime.udf.definitions import (AggregateFunction, FunctionContext, ScalarFunction, TableFunction,
                                     UserDefinedFunction, UserDefinedFunctionWrapper, udaf, udf, udtf)
from runtime.udf.types import DataType, DataTypes, RowType

__all__ = ["AggregateFunction", "DataType", "DataTypes", "FunctionContext", "RowType", "ScalarFunction",
           "TableFunction", "UserDefinedFunction", "UserDefinedFunctionWrapper", "udaf", "udf", "udtf"]

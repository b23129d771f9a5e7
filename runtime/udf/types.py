"""PyFlink's ``DataTypes``: the types a Python function declares for its arguments, result and accumulator.

A DataType here is what its Flink SQL spelling says (``str(DataTypes.DECIMAL(10, 2))`` is ``DECIMAL(10, 2)``):
the SQL layer reads declared types as Flink SQL type strings, so a function may give its types either way,
as PyFlink allows. ``nullable`` is accepted and kept; every column of the runtime is nullable.

This module imports nothing of flinkbench: user functions pickled into Spark's Python workers may carry its
types along, and those workers need not have flinkbench installed.
"""
from __future__ import annotations


class DataType:
    """A Flink SQL type; ``str()`` gives its SQL spelling."""

    def __init__(self, sql: str, nullable: bool = True):
        self.sql, self.nullable = sql, nullable

    def __str__(self) -> str:
        return self.sql

    def __repr__(self) -> str:
        return f"DataTypes<{self.sql}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, DataType) and (self.sql, self.nullable) == (other.sql, other.nullable)

    def __hash__(self) -> int:
        return hash(self.sql)


class RowField:
    """One field of a ROW type: its name and type."""

    def __init__(self, name: str, data_type: DataType, description: str | None = None):
        self.name, self.data_type, self.description = name, data_type, description


class RowType(DataType):
    """``ROW<name type, ...>``; its fields' names and types as PyFlink's RowType gives them."""

    def __init__(self, fields: list[RowField], nullable: bool = True):
        self.fields = list(fields)
        super().__init__("ROW<" + ", ".join(f"`{f.name}` {f.data_type}" for f in self.fields) + ">", nullable)

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field_types(self) -> list[DataType]:
        return [f.data_type for f in self.fields]


def _fixed(sql: str):
    """A factory of a type without parameters: ``DataTypes.BIGINT()``, ``DataTypes.BIGINT(nullable=False)``."""
    def make(nullable: bool = True) -> DataType:
        return DataType(sql, nullable)
    make.__name__ = sql
    return staticmethod(make)


class DataTypes:
    """PyFlink's type factory: ``DataTypes.BIGINT()``, ``DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT())])``."""
    BOOLEAN = _fixed("BOOLEAN")
    TINYINT = _fixed("TINYINT")
    SMALLINT = _fixed("SMALLINT")
    INT = _fixed("INT")
    BIGINT = _fixed("BIGINT")
    FLOAT = _fixed("FLOAT")
    DOUBLE = _fixed("DOUBLE")
    STRING = _fixed("STRING")
    BYTES = _fixed("BYTES")
    DATE = _fixed("DATE")

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DataType:
        return DataType(f"DECIMAL({precision}, {scale})", nullable)

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> DataType:
        return DataType(f"CHAR({length})", nullable)

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> DataType:
        return DataType(f"VARCHAR({length})", nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:
        return DataType(f"TIMESTAMP({precision})", nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> DataType:
        return DataType(f"TIMESTAMP_LTZ({precision})", nullable)

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> DataType:
        return DataType(f"ARRAY<{element_type}>", nullable)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> DataType:
        return DataType(f"MAP<{key_type}, {value_type}>", nullable)

    @staticmethod
    def ROW(row_fields: list[RowField] | None = None, nullable: bool = True) -> RowType:
        return RowType(row_fields or [], nullable)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None) -> RowField:
        return RowField(name, data_type, description)

"""SQL's stateful operators by kind, for the operator chain (runtime.taskmanager.chain)."""
from __future__ import annotations

from runtime.taskmanager.group_aggregate import GroupAggregateOperator

SQL_OPERATORS = {
    "sql_group_aggregate": GroupAggregateOperator,
}

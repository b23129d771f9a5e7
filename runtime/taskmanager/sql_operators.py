"""SQL's stateful operators by kind, for the operator chain (runtime.taskmanager.chain)."""
from __future__ import annotations

from runtime.taskmanager.group_aggregate import GroupAggregateOperator
from runtime.taskmanager.join_operator import JoinOperator
from runtime.taskmanager.lookup_join_operator import LookupJoinOperator
from runtime.taskmanager.match_operator import MatchOperator
from runtime.taskmanager.over_operator import OverOperator
from runtime.taskmanager.rank_operator import RankOperator
from runtime.taskmanager.sort_operator import SortOperator
from runtime.taskmanager.temporal_join_operator import TemporalJoinOperator
from runtime.taskmanager.time_join_operator import IntervalJoinOperator, WindowJoinOperator

SQL_OPERATORS = {
    "sql_group_aggregate": GroupAggregateOperator,
    "sql_rank": RankOperator,
    "sql_sort": SortOperator,
    "sql_over": OverOperator,
    "sql_join": JoinOperator,
    "sql_interval_join": IntervalJoinOperator,
    "sql_window_join": WindowJoinOperator,
    "sql_lookup_join": LookupJoinOperator,
    "sql_match": MatchOperator,
    "sql_temporal_join": TemporalJoinOperator,
}

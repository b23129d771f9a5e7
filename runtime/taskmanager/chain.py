"""The operators of one task between its input and its output, grouped into stages.

Consecutive stateless operators form a :class:`SparkStage`: one Spark plan per bundle, one action,
out as Arrow. Stateful operators (event-time windows, keyed process functions) run between stages on
the TaskManager and keep their state by key group. A bundle flows through every stage in order; a
watermark (or a due processing-time timer) enters at the stateful stages it can fire, and what they emit
flows on through the later stages.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import SubmissionError
from runtime.jobgraph import OperatorSpec, unpack_udf
from runtime.keygroups import KEY_GROUP_COLUMN, key_group_sql
from runtime.messages import OutputDescriptor
from runtime.spark_stages import DRIVER_PHASE
from runtime.taskmanager.metrics import PhaseTimes
from runtime.taskmanager.process_operator import KeyedProcessOperator, OutputRowError
from runtime.taskmanager.python_environment import JobPythonEnvironment, for_workers
from runtime.taskmanager.spark import UserFunctionError, missing_columns, pre_aggregates
from runtime.taskmanager.spark_udfs import PythonFunctionError, failure_line
from runtime.taskmanager.sql_operators import SQL_OPERATORS
from runtime.taskmanager.watermarks import BoundedOutOfOrderness
from runtime.taskmanager.window_operator import BEFORE_TIME, END_OF_TIME, RECORDS, WindowOperator

STATELESS_KINDS = ("select", "filter", "with_columns", "map", "flat_map", "window_combine", "watermark", "union",
                   "local_aggregate", "table_function")
STATEFUL_OPERATORS = {"window_aggregate": WindowOperator, "keyed_process": KeyedProcessOperator, **SQL_OPERATORS}
STATEFUL_KINDS = tuple(STATEFUL_OPERATORS)
EVENT_MICROS = "__event_us"  # a folded watermark's event time per row, then the largest per pre-aggregated group
KEEP = "__keep"  # whether the filters folded into a pre-aggregate keep the row
PLAIN_NAME = re.compile(r"\s*(`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)\s*")


class OperatorError(SubmissionError):
    """An operator that cannot run as configured; the message names it."""


def load_udf(op: OperatorSpec):
    """The user function an operator ships (unpickled), or None when it has none."""
    if not op.udf:
        return None
    try:
        return unpack_udf(op.udf)
    except SubmissionError as err:
        raise OperatorError(f"operator '{op.name}': {err}") from None


@dataclass
class SparkStage:
    """Stateless operators run as one Spark plan; observes event time where a watermark op sits."""
    phase = "spark_action"
    ops: list[OperatorSpec]
    fns: list[Callable | None]
    key_output: OutputDescriptor | None = None
    assigner: BoundedOutOfOrderness | None = None
    max_parallelism: int = 128
    environment: JobPythonEnvironment | None = None  # the job's shipped Python dependencies on this TaskManager
    driver_s: float = 0.0  # of its last run, the seconds Spark's driver spent on its query outside any stage

    def run(self, spark, data) -> pa.Table | None:
        if self.environment is not None:
            try:
                spark.ship_python_environment(self.environment)
            except ValueError as err:
                raise OperatorError(f"operator '{self.ops[0].name}': {err}") from None
        df = spark.from_arrow(data) if isinstance(data, pa.Table) else data
        observation = None
        for op, fn in zip(self.ops, self.fns):
            try:
                if op.kind == "watermark" and op.params.get("event_column"):
                    df = spark.mark_event_time(df, op.params)
                elif op.kind == "watermark":
                    df, observation = spark.observe_max_micros(df, op.params["ts_column"])
                else:
                    df = spark.apply(df, op.kind, op.params, fn)
            except ValueError as err:
                raise OperatorError(f"operator '{op.name}' ({op.kind}): {err}") from None
        df = self._with_key_group(spark, df)
        users = [op.name for op, fn in zip(self.ops, self.fns) if fn is not None]
        table = _to_arrow(spark, df, " / ".join(users) if users else self.ops[-1].name)
        self.driver_s = spark.driver_seconds(df)
        if observation is not None and self.assigner is not None:
            self.assigner.observe(observation.get.get("max_us"))
        return self._folded_watermark(table) if self.ops[-1].params.get("event_column") else table

    def _folded_watermark(self, table: pa.Table) -> pa.Table:
        """A bundle pre-aggregated with the watermark folded in (:func:`fold_watermark`): its largest event time
        observed, then the groups as the unfolded plan makes them (none whose rows the filters all dropped)."""
        if self.assigner is not None:
            self.assigner.observe(pc.max(table[EVENT_MICROS]).as_py())
        table = table.drop_columns([EVENT_MICROS])
        if self.ops[-1].params.get("keep_column"):
            table = table.filter(pc.greater(table[RECORDS], 0))
        return table

    def _with_key_group(self, spark, df):
        out = self.key_output
        if out is None:
            return df
        try:
            return spark.with_column(df, KEY_GROUP_COLUMN, key_group_sql(out.keys, self.max_parallelism))
        except Exception as err:
            missing = missing_columns(err, df, out.keys)
            if missing:
                raise OperatorError(f"key_by {out.keys}: no column {missing}; available: {df.columns}") from None
            raise


@dataclass
class StatefulStage:
    phase = "window_merge"
    op: OperatorSpec
    operator: Any  # one of STATEFUL_OPERATORS

    def run(self, spark, data) -> pa.Table | None:
        if not isinstance(data, pa.Table):
            data = _to_arrow(spark, data, self.op.name)
        return self.call(self.operator.process, data)

    def call(self, method: Callable, *args) -> pa.Table | None:
        """One of the operator's methods; its errors (and its user function's) come back naming the operator."""
        try:
            return method(*args)
        except KeyError as err:
            raise OperatorError(f"operator '{self.op.name}': input has no column {err}") from None
        except (UserFunctionError, OutputRowError, PythonFunctionError) as err:
            raise OperatorError(f"operator '{self.op.name}': {err}") from None

    @property
    def watermark_delay(self) -> int:
        """Microseconds by which the operator holds back the watermark it passes on (0 for most)."""
        return getattr(self.operator, "watermark_delay", 0)

    def processing_timer_delay(self) -> float | None:
        """Seconds until the operator's next processing-time timer; None if it has none (or no such timers)."""
        delay = getattr(self.operator, "processing_timer_delay", None)
        return delay() if delay is not None else None


@dataclass
class OperatorChain:
    stages: list = field(default_factory=list)
    assigner: BoundedOutOfOrderness | None = None
    phases: PhaseTimes = field(default_factory=PhaseTimes)  # the task's, once it runs the chain

    @classmethod
    def build(cls, ops: list[OperatorSpec], outputs: list[OutputDescriptor], max_parallelism: int,
              environment: JobPythonEnvironment | None = None) -> OperatorChain:
        """The chain of ``ops``; ``environment``: the job's Python dependencies, which Spark stages ship to Spark's
        workers with the functions they hand them."""
        chain = cls()
        pending: list[OperatorSpec] = []

        def close_spark_stage():
            if pending:
                fns = [for_workers(load_udf(o), environment) for o in pending]
                chain.stages.append(SparkStage(fold_watermark(list(pending)), fns, max_parallelism=max_parallelism,
                                               environment=environment))
                pending.clear()

        for op in ops:
            if op.kind in ("source", "sink"):
                continue
            if op.kind in STATELESS_KINDS:
                pending.append(op)
                if op.kind == "watermark":
                    chain.assigner = BoundedOutOfOrderness(int(op.params.get("lag_us", 0)), op.params.get("idle_us"))
            elif op.kind in STATEFUL_KINDS:
                close_spark_stage()
                chain.stages.append(StatefulStage(op, STATEFUL_OPERATORS[op.kind](op.params, load_udf(op))))
            else:
                raise OperatorError(f"operator '{op.name}': kind {op.kind!r} is not supported")
        hash_out = next((o for o in outputs if o.partitioning == "hash"), None)
        if hash_out is not None and not pending and not (chain.stages and isinstance(chain.stages[-1], SparkStage)):
            pending.append(OperatorSpec("key-group", "KeyGroup", "union"))  # a Spark pass that adds key groups
        close_spark_stage()
        for stage in chain.stages:
            if isinstance(stage, SparkStage):
                stage.assigner = chain.assigner
        if hash_out is not None:
            chain.stages[-1].key_output = hash_out
        return chain

    @property
    def runs_in_spark(self) -> bool:
        return bool(self.stages)

    def process(self, spark, data, first_stage: int = 0) -> pa.Table | None:
        """Blocking: a bundle (Spark DataFrame or Arrow table) through the stages from ``first_stage``."""
        for stage in self.stages[first_stage:]:
            with self.phases.phase(stage.phase):
                data = stage.run(spark, data)
            if isinstance(stage, SparkStage):
                self.phases.add(DRIVER_PHASE, stage.driver_s)  # a part of the stage's phase, told apart
            if data is None or data.num_rows == 0:
                return None
        if data is not None and not isinstance(data, pa.Table):
            data = _to_arrow(spark, data, "output")
        return data

    def on_watermark(self, spark, watermark: int) -> list[pa.Table]:
        """Blocking: let every stateful stage fire for ``watermark`` (as held back by the stages before it);
        returns what reaches the output."""
        seen = self.stage_watermarks(watermark)
        return self._fire(spark, lambda stage: stage.call(stage.operator.on_watermark, seen[id(stage)]))

    def stage_watermarks(self, watermark: int) -> dict[int, int]:
        """The watermark each stateful stage sees (by ``id``): the input's, less every hold-back before it."""
        seen = {}
        for stage in self.stateful:
            seen[id(stage)] = watermark
            watermark = held_back(watermark, stage.watermark_delay)
        return seen

    def output_watermark(self, watermark: int) -> int:
        """The watermark the chain passes on for input ``watermark``: less what its stages hold back."""
        return held_back(watermark, sum(stage.watermark_delay for stage in self.stateful))

    def on_processing_time(self, spark) -> list[pa.Table]:
        """Blocking: fire the processing-time timers that are due; returns what reaches the output."""
        return self._fire(spark, lambda stage: stage.call(stage.operator.on_processing_time)
                          if stage.processing_timer_delay() is not None else None)

    def processing_timer_delay(self) -> float | None:
        """Seconds until the chain's earliest processing-time timer is due (<= 0: now); None if none is set."""
        return min((d for s in self.stateful if (d := s.processing_timer_delay()) is not None), default=None)

    def _fire(self, spark, fire: Callable[[StatefulStage], pa.Table | None]) -> list[pa.Table]:
        out = []
        for i, stage in enumerate(self.stages):
            if isinstance(stage, StatefulStage):
                with self.phases.phase("window_fire"):
                    fired = fire(stage)
                if fired is not None and fired.num_rows:
                    result = self.process(spark, fired, i + 1)
                    if result is not None:
                        out.append(result)
        return out

    @property
    def stateful(self) -> list[StatefulStage]:
        return [s for s in self.stages if isinstance(s, StatefulStage)]

    @property
    def late_records(self) -> int:
        return sum(s.operator.late_records for s in self.stateful)

    @property
    def state_rows(self) -> int:
        return sum(s.operator.state_rows for s in self.stateful)


def fold_watermark(ops: list[OperatorSpec]) -> list[OperatorSpec]:
    """A Spark stage's ``ops`` with the watermark's largest event time computed by the window pre-aggregate that
    ends them, where only SQL filters and plain column selections sit between the two (clicks; SQL's TUMBLE).

    Spark's ``Dataset.observe`` stops its whole-stage code generation: a clicks bundle took about a tenth
    longer with it. Folded, the watermark op marks each row's event time (and a keep flag), each filter turns
    into that flag, and the pre-aggregate takes ``max`` of the event time over every row while its partials
    count only the rows kept (``FILTER (WHERE keep)``): rows the filters drop still move the watermark, as
    they do in Flink. Any other shape comes back unchanged."""
    kinds = [op.kind for op in ops]
    if "watermark" not in kinds or kinds[-1] != "window_combine" or not pre_aggregates(ops[-1].params):
        return ops
    at = kinds.index("watermark")
    between = ops[at + 1:-1]
    if not all(_folds(op) for op in between):
        return ops
    keep = KEEP if any(op.kind == "filter" for op in between) else None
    hidden = {"event_column": EVENT_MICROS, "keep_column": keep}
    carried = [EVENT_MICROS] + ([KEEP] if keep else [])
    folded = [replace(op, params={**op.params, "into": KEEP} if op.kind == "filter"
                      else {**op.params, "exprs": [*op.params["exprs"], *carried]}) for op in between]
    return [*ops[:at], replace(ops[at], params={**ops[at].params, **hidden}), *folded,
            replace(ops[-1], params={**ops[-1].params, **hidden})]


def _folds(op: OperatorSpec) -> bool:
    """Whether ``op`` can sit between a watermark and the pre-aggregate it folds into: a SQL filter, or a
    selection of columns by name (neither changes a column, so the event time read early is the one seen)."""
    if op.udf:
        return False
    return op.kind == "filter" or (op.kind == "select" and all(PLAIN_NAME.fullmatch(e) for e in op.params["exprs"]))


def held_back(watermark: int, delay: int) -> int:
    """``watermark`` less ``delay``; the end of time stays the end (every window fires at end of input)."""
    if delay <= 0 or watermark == END_OF_TIME:
        return watermark
    return max(BEFORE_TIME, watermark - delay)


def _to_arrow(spark, df, name: str) -> pa.Table:
    """Run the bundle's one action; Spark's errors come back naming the operator they belong to."""
    try:
        return spark.to_arrow(df)
    except Exception as err:  # noqa: BLE001 - translate Spark's analysis and Python worker errors
        kind = type(err).__name__
        if kind == "AnalysisException":
            raise OperatorError(f"operator '{name}': {str(err).splitlines()[0]}") from None
        if kind == "PythonException":
            line = failure_line(str(err))  # a SQL Python function's own error, in one line
            if line is not None:
                raise OperatorError(f"operator '{name}': {line}") from None
            raise OperatorError(f"operator '{name}': a Python function failed in Spark:\n{err}") from None
        raise

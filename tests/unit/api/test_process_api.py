"""KeyedStream.process on the client: what it adds to the JobGraph, and what it refuses at build time."""
import pytest

from runtime.api import KeyedProcessFunction, StreamExecutionEnvironment
from runtime.api.windows import WatermarkStrategy
from runtime.jobgraph import unpack_udf


class Count(KeyedProcessFunction):
    def process_element(self, row, ctx, out):
        out.collect((ctx.get_current_key(), 1))


def timestamped(env):
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_column("ts")
    return (env.from_collection([{"user": 1, "ms": 0}]).with_columns(ts="timestamp_millis(ms)")
            .assign_timestamps_and_watermarks(strategy))


def test_process_adds_a_keyed_operator_behind_a_hash_exchange():
    env = StreamExecutionEnvironment()
    env.set_parallelism(2)
    out = timestamped(env).key_by("user").process(Count(), schema="user BIGINT, n BIGINT")
    out.collect()
    graph = env.job_graph("process")
    op = graph.operator(out.op.id)
    assert (op.kind, op.name) == ("keyed_process", "KeyedProcess(Count)")
    assert op.params == {"keys": ["user"], "schema": "user BIGINT, n BIGINT", "ts_column": "ts"}
    assert isinstance(unpack_udf(op.udf), Count)
    [edge] = graph.inputs_of(op.id)
    assert (edge.partitioning, edge.keys) == ("hash", ["user"])
    assert out.timestamp_column is None, "the output schema has no 'ts'"
    assert "keyed_process-4 [keyed_process] 'KeyedProcess(Count)' x2 <- hash(user) from watermark-3" \
        in env.explain("process")


def test_the_event_time_column_survives_when_the_output_declares_it():
    env = StreamExecutionEnvironment()
    out = timestamped(env).key_by("user").process(Count(), schema="user BIGINT, ts TIMESTAMP")
    assert out.timestamp_column == "ts"


@pytest.mark.parametrize("build,error,message", [
    (lambda s: s.process(Count(), schema="user BIGINT"), TypeError, "call key_by\\(...\\) first"),
    (lambda s: s.rebalance().process(Count(), schema="user BIGINT"), TypeError, "call key_by\\(...\\) first"),
    (lambda s: s.key_by("user").process(Count()), TypeError, "needs the schema of the rows it emits"),
    (lambda s: s.key_by("user").process(lambda row: row, schema="user BIGINT"), TypeError,
     "instance of a KeyedProcessFunction subclass"),
    (lambda s: s.key_by("user").process(Count, schema="user BIGINT"), TypeError,
     "instance of a KeyedProcessFunction subclass"),
    (lambda s: s.key_by("user").process(Count(), schema="user BIGNUM"), ValueError, "found 'BIGNUM'"),
])
def test_process_is_refused_at_build_time_without_keys_schema_or_function(build, error, message):
    with pytest.raises(error, match=message):
        build(timestamped(StreamExecutionEnvironment()))

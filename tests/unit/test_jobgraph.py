import pytest

from runtime.jobgraph import EdgeSpec, JobGraph, JobGraphError, OperatorSpec, pack_udf, unpack_udf
from runtime.errors import SubmissionError


def ops(*specs):
    return [OperatorSpec(i, i, k, p) for i, k, p in specs]


@pytest.mark.parametrize("graph,message", [
    (JobGraph("g", []), "no operators"),
    (JobGraph("g", ops(("s", "source", 1))), "no sink"),
    (JobGraph("g", ops(("s", "source", 1), ("k", "sink", 1)), [EdgeSpec("s", "x")]), "unknown operator 'x'"),
    (JobGraph("g", ops(("s", "source", 1), ("k", "sink", 2)), [EdgeSpec("s", "k")]), "different parallelism"),
    (JobGraph("g", ops(("s", "source", 1), ("k", "sink", 1)), [EdgeSpec("s", "k", "hash")]), "needs key columns"),
    (JobGraph("g", ops(("s", "source", 1), ("k", "sink", 1)), [EdgeSpec("s", "k", "zigzag")]), "unknown partitioning"),
    (JobGraph("g", ops(("s", "source", 1), ("k", "sink", 1))), "'k' has no input"),
    (JobGraph("g", ops(("s", "source", 0), ("k", "sink", 1)), [EdgeSpec("s", "k")]), "positive integer"),
    (JobGraph("g", ops(("s", "source", 1), ("p", "keyed_process", 1), ("k", "sink", 1)),
              [EdgeSpec("s", "p", "rebalance"), EdgeSpec("p", "k")]), "keyed operator 'p' needs hash-partitioned"),
])
def test_invalid_graphs_are_rejected_with_the_reason(graph, message):
    with pytest.raises(JobGraphError, match=message):
        graph.validate(1)


def test_udfs_round_trip_and_bad_blobs_fail_readably():
    fn = unpack_udf(pack_udf(lambda x: x + 1))
    assert fn(1) == 2
    with pytest.raises(SubmissionError, match="cannot load user function"):
        unpack_udf("bm90IGEgcGlja2xl")

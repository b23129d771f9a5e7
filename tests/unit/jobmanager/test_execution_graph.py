from runtime.jobgraph import EdgeSpec, JobGraph, OperatorSpec
from runtime.chaining import vertex_id_for
from runtime.jobmanager.execution_graph import ExecutionGraph


def graph(*ops, edges):
    g = JobGraph("g", [OperatorSpec(i, i, k, p) for i, k, p in ops], [EdgeSpec(*e) for e in edges])
    g.validate(1)
    return g


def test_forward_edges_of_equal_parallelism_chain_into_one_task():
    g = graph(("src", "source", 2), ("m", "map", 2), ("f", "filter", 2), ("snk", "sink", 2),
              edges=[("src", "m"), ("m", "f"), ("f", "snk")])
    eg = ExecutionGraph(g)
    assert [[op.id for op in v.operators] for v in eg.vertices] == [["src", "m", "f", "snk"]]
    assert eg.max_parallelism == 2 and len(eg.vertices[0].subtasks) == 2


def test_keyed_and_rebalanced_edges_split_tasks_and_slots_follow_highest_parallelism():
    g = graph(("src", "source", 2), ("m", "map", 2), ("agg", "select", 3), ("snk", "sink", 1),
              edges=[("src", "m"), ("m", "agg", "hash", ["user"]), ("agg", "snk", "rebalance")])
    eg = ExecutionGraph(g)
    assert [[op.id for op in v.operators] for v in eg.vertices] == [["src", "m"], ["agg"], ["snk"]]
    assert eg.max_parallelism == 3
    plan = eg.plan()
    assert plan[1].inputs[0].ship_strategy == "HASH" and plan[1].inputs[0].keys == ("user",)
    assert eg.vertices[0].id == vertex_id_for("src")


def test_branching_stops_chaining():
    g = graph(("src", "source", 1), ("a", "sink", 1), ("b", "sink", 1), edges=[("src", "a"), ("src", "b")])
    assert len(ExecutionGraph(g).vertices) == 3


def test_restart_gives_every_subtask_a_new_attempt():
    g = graph(("src", "source", 2), ("snk", "sink", 2), edges=[("src", "snk")])
    eg = ExecutionGraph(g)
    before = {ex.attempt_id for _, ex in eg.executions()}
    eg.attempt += 1
    eg.reset_attempts()
    after = [ex for _, ex in eg.executions()]
    assert before.isdisjoint({ex.attempt_id for ex in after}) and all(ex.attempt_number == 1 for ex in after)

"""The job graph without a browser: layout (layers, rows, crossings), Flink's colours, the bottleneck rule."""
from __future__ import annotations

import pytest

from runtime import events
from runtime.codec import to_plain
from runtime.messages import TaskMetrics
from runtime.views.columns import graph_of
from runtime.views.graph import (BOTTLENECK_BORDER, IDLE_FILL, PlanInput, PlanVertex, SubtaskFigures, blend,
                                 find_bottleneck, job_graph, node_colors, plan_from_json)
from runtime.views.layout import GAP_X, MARGIN, NODE_HEIGHT, NODE_WIDTH, layers, layout
from runtime.views.model import ClusterModel


def chain(*names: str, strategies: tuple[str, ...] = ()) -> list[PlanVertex]:
    """A straight pipeline of tasks a -> b -> c with the given exchange kinds."""
    vertices = []
    for i, name in enumerate(names):
        inputs = (PlanInput(names[i - 1], strategies[i - 1] if strategies else "HASH"),) if i else ()
        vertices.append(PlanVertex(name, name, 2, (name,), inputs))
    return vertices


def running(busy_ms: float = 0.0, backpressured_ms: float = 0.0, **metrics) -> list[SubtaskFigures]:
    m = {"busy_time_ms_per_s": busy_ms, "backpressured_time_ms_per_s": backpressured_ms,
         "idle_time_ms_per_s": 1000 - busy_ms - backpressured_ms, **metrics}
    return [SubtaskFigures(0, "RUNNING", 0, "tm-a", 0, m), SubtaskFigures(1, "RUNNING", 0, "tm-b", 1, dict(m))]


# -- layout -----------------------------------------------------------------------------------
def test_layers_are_longest_paths_so_every_edge_points_right():
    order = ["src", "a", "b", "join", "sink"]
    edges = [("src", "a"), ("a", "b"), ("src", "join"), ("b", "join"), ("join", "sink")]
    assert layers(order, edges) == {"src": 0, "a": 1, "b": 2, "join": 3, "sink": 4}


def test_branches_share_a_layer_one_row_each_centred_against_the_tallest():
    order = ["src", "left", "right", "sink"]
    placed = layout(order, [("src", "left"), ("src", "right"), ("left", "sink"), ("right", "sink")])
    boxes = placed.boxes
    assert [boxes[n].layer for n in order] == [0, 1, 1, 2]
    assert {boxes["left"].row, boxes["right"].row} == {0, 1}
    assert boxes["left"].x == boxes["right"].x == MARGIN + NODE_WIDTH + GAP_X
    assert boxes["src"].center[1] == boxes["sink"].center[1] == pytest.approx(
        (boxes["left"].center[1] + boxes["right"].center[1]) / 2)
    assert placed.width == 2 * MARGIN + 3 * NODE_WIDTH + 2 * GAP_X
    (x0, y0), (x1, y1) = placed.edge_points("src", "left")
    assert (x0, x1) == (boxes["src"].x + NODE_WIDTH, boxes["left"].x) and y1 == boxes["left"].y + NODE_HEIGHT / 2


def test_rows_follow_their_inputs_so_parallel_pipelines_do_not_cross():
    # two pipelines whose second stages are listed in the opposite order of their sources
    order = ["s1", "s2", "b2", "b1"]
    placed = layout(order, [("s1", "b1"), ("s2", "b2")])
    assert placed.boxes["s1"].row == placed.boxes["b1"].row
    assert placed.boxes["s2"].row == placed.boxes["b2"].row
    assert layout(order, [("s1", "b1"), ("s2", "b2")]) == placed  # deterministic


def test_an_edge_against_the_order_or_to_an_unknown_task_is_refused():
    with pytest.raises(ValueError, match="topological"):
        layers(["a", "b"], [("b", "a")])
    with pytest.raises(ValueError, match="not in the graph"):
        layers(["a"], [("a", "ghost")])


# -- colours ----------------------------------------------------------------------------------
def test_colours_run_from_blue_idle_to_red_busy_and_grey_backpressured():
    assert node_colors(0.0, 0.0) == (IDLE_FILL, "#1890ff")
    assert node_colors(1.0, 0.0) == ("#ee6464", "#ee2222")
    assert node_colors(0.0, 1.0) == ("#888888", "#000000")
    assert blend("#000000", "#ffffff", 0.5) == "#808080"
    half = node_colors(0.5, 0.0)[0]
    assert half not in (IDLE_FILL, "#ee6464") and int(half[1:3], 16) > int(IDLE_FILL[1:3], 16)


# -- the bottleneck rule ----------------------------------------------------------------------
def test_the_busy_task_nearest_the_sinks_that_is_not_backpressured_is_named():
    plan = chain("Source", "Map", "Window", "Sink")
    subs = {"Source": running(20, 950), "Map": running(990), "Window": running(100), "Sink": running(5)}
    graph = job_graph("j", plan, subs, now=0.0)
    assert graph.bottleneck == "Map"
    assert graph.hint == "Map (1/2) at 99 % busy limits this job"
    assert graph.node("Map").border == BOTTLENECK_BORDER
    assert graph.node("Map").busy == pytest.approx(0.99)


def test_the_hint_names_the_busiest_subtask_and_the_spark_stage_that_dominates_it():
    hot = {"dominant_plan": "Exchange > WholeStageCodegen (2)", "dominant_share": 0.83, "explained": 0.8}
    subs = running(990, accumulated_busy_ms=1000)
    subs[0].metrics["busy_time_ms_per_s"] = 300
    subs[1].metrics["spark"] = hot
    graph = job_graph("j", chain("Source", "Map"), {"Source": running(20, 950), "Map": subs})
    assert graph.hint == ("Map (2/2) at 99 % busy limits this job; "
                          "Spark stage Exchange > WholeStageCodegen (2) takes 83 % of its stage time")
    subs[1].metrics["spark"] = {**hot, "explained": 0.3}  # its stages took too little of its busy time lately
    assert job_graph("j", chain("Source", "Map"), {"Source": running(20, 950), "Map": subs}).hint.endswith("limits this job")


def test_the_hint_names_spark_s_driver_when_the_subtask_s_time_is_spent_there_outside_any_stage():
    subs = running(990, accumulated_busy_ms=1000)
    subs[0].metrics["busy_time_ms_per_s"] = 300
    subs[1].metrics["spark"] = {"dominant_plan": "LocalTableScan", "dominant_share": 1.0, "explained": 0.02,
                                "driver_share": 0.93}
    graph = job_graph("j", chain("Source", "Map"), {"Source": running(20, 950), "Map": subs})
    assert graph.hint == ("Map (2/2) at 99 % busy limits this job; "
                          "Spark's driver outside any stage (its optimizer, planning) takes 93 % of its busy time")
    subs[1].metrics["spark"]["driver_share"] = 0.2  # under half: neither part is named
    assert job_graph("j", chain("Source", "Map"), {"Source": running(20, 950), "Map": subs}).hint.endswith("limits this job")


def test_of_equally_busy_subtasks_the_one_with_the_most_input_is_named():
    subs = running(1000, records_in=10)
    subs[1].metrics["records_in"] = 80
    assert job_graph("j", chain("Source", "Map"), {"Source": running(20, 950), "Map": subs}).hint.startswith("Map (2/2)")


def test_a_backpressured_busy_task_is_passed_over():
    # B is busy but its outputs wait for credit 15 % of the time (above Flink's 10 % "OK"): it is not
    # what limits the job; A, busy and free to send, is named.
    graph = job_graph("j", chain("A", "B", "C"), {"A": running(900), "B": running(800, 150), "C": running(50)})
    assert graph.bottleneck == "A"
    assert find_bottleneck(graph.nodes, graph.edges) == "A"


def test_a_rate_limited_source_that_keeps_its_pace_limits_nothing_however_busy():
    # the README's clicks source on a machine short of CPU: each Spark action slow, the rows read as they fall due
    pacing = {"pending_records": 600, "records_in": 20_000, "bundles": 20}  # 1,000 rows a bundle, 600 due
    graph = job_graph("j", chain("Source", "Window"), {"Source": running(880, **pacing), "Window": running(40)})
    assert graph.node("Source").keeps_pace and graph.node("Source").busy == pytest.approx(0.88)
    assert graph.bottleneck is None and graph.hint == "", "the rate it asked for limits the job"
    assert graph.node("Source").fill == node_colors(0.88, 0.0)[0], "its colour still says how busy it is"


def test_a_rate_limited_source_whose_due_rows_pile_up_is_named():
    behind = {"pending_records": 9_000, "records_in": 20_000, "bundles": 20}  # nine bundles' rows due
    graph = job_graph("j", chain("Source", "Window"), {"Source": running(880, **behind), "Window": running(40)})
    assert not graph.node("Source").keeps_pace and graph.bottleneck == "Source"
    one_behind = running(880, pending_records=600, records_in=20_000, bundles=20)
    one_behind[1].metrics.update(pending_records=9_000)  # one subtask falls behind: the task does
    assert job_graph("j", chain("Source", "Window"), {"Source": one_behind, "Window": running(40)}).bottleneck == "Source"


def test_a_source_without_a_rate_is_named_when_busy():
    unpaced = {"pending_records": None, "records_in": 20_000, "bundles": 20}
    graph = job_graph("j", chain("Source", "Window"), {"Source": running(900, **unpaced), "Window": running(40)})
    assert graph.bottleneck == "Source" and not graph.node("Source").keeps_pace


def test_nearest_the_sinks_wins_over_busier_tasks_further_up():
    graph = job_graph("j", chain("A", "B", "C"), {"A": running(1000), "B": running(800), "C": running(50)})
    assert graph.bottleneck == "B"


def test_tasks_at_the_same_distance_compare_by_busy_time():
    plan = [PlanVertex("s1", "s1", 1), PlanVertex("s2", "s2", 1),
            PlanVertex("k1", "k1", 1, inputs=(PlanInput("s1", "FORWARD"),)),
            PlanVertex("k2", "k2", 1, inputs=(PlanInput("s2", "FORWARD"),))]
    graph = job_graph("j", plan, {"s1": running(10), "s2": running(10), "k1": running(800), "k2": running(950)})
    assert graph.bottleneck == "k2"


def test_no_hint_when_nothing_is_busy_or_the_job_is_not_running():
    assert job_graph("j", chain("A", "B"), {"A": running(300), "B": running(200)}).hint == ""
    finished = {"A": [SubtaskFigures(0, "FINISHED", metrics={"busy_time_ms_per_s": 1000})]}
    assert job_graph("j", chain("A", "B"), finished).bottleneck is None


# -- figures per node -------------------------------------------------------------------------
def test_node_figures_sum_rates_take_the_busiest_subtask_and_the_low_watermark():
    subs = [SubtaskFigures(0, "RUNNING", 0, "tm-a", 0, {"records_in_per_s": 100.0, "records_out_per_s": 90.0,
                                                       "busy_time_ms_per_s": 300, "watermark": 95.0,
                                                       "last_checkpoint_size": 1000, "last_checkpoint_duration_s": 0.2}),
            SubtaskFigures(1, "RUNNING", 0, "tm-b", 1, {"records_in_per_s": 50.0, "records_out_per_s": 40.0,
                                                       "busy_time_ms_per_s": 700, "watermark": 90.0,
                                                       "last_checkpoint_size": 500})]
    node = job_graph("j", chain("A"), {"A": subs}, now=100.0).nodes[0]
    assert (node.in_rate, node.out_rate, node.busy, node.watermark, node.watermark_lag_s, node.state_size) == \
        (150.0, 130.0, 0.7, 90.0, 10.0, 1500)
    assert [(s["taskmanager"], s["slot"], s["last_checkpoint_duration_s"]) for s in node.subtasks] == \
        [("tm-a", 0, 0.2), ("tm-b", 1, None)]


def test_edges_carry_the_exchange_kind_and_keys():
    plan = plan_from_json({"nodes": [
        {"id": "v1", "description": "Source: datagen -> Filter", "parallelism": 1,
         "operators": [{"id": "o1", "name": "Source: datagen"}, {"id": "o2", "name": "Filter"}], "inputs": []},
        {"id": "v2", "description": "Window(10 s)", "parallelism": 2,
         "inputs": [{"id": "v1", "ship_strategy": "HASH", "keys": ["user"]}]}]})
    graph = job_graph("j", plan, {})
    assert [(e.source, e.target, e.label) for e in graph.edges] == [("v1", "v2", "HASH (user)")]
    assert graph.nodes[0].operators == ["Source: datagen", "Filter"]
    assert graph.to_json()["edges"][0]["label"] == "HASH (user)"


def test_the_model_builds_the_graph_from_its_plan_and_live_metrics():
    model = ClusterModel()
    assert graph_of(model, "j") is None
    model.set_plan("j", chain("A", "B"))
    for vertex, busy in (("A", 100), ("B", 980)):
        for i in range(2):
            model.apply({**to_plain(events.TaskStatusChanged("j", vertex, vertex, i, f"{vertex}{i}", 0, "RUNNING",
                                                             "tm-a", i))})
            model.apply(to_plain(events.TaskMetricsReported("j", vertex, vertex, i, TaskMetrics(
                "j", f"{vertex}{i}", busy_time_ms_per_s=busy))))
    graph = graph_of(model, "j", now=0.0)
    assert [n.id for n in graph.nodes] == ["A", "B"] and graph.bottleneck == "B"

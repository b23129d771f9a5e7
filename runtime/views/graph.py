"""The job graph as every front draws it: tasks (chained operators) as nodes, exchanges as edges.

A node carries what Flink's job graph shows: parallelism, records in and out per second, the busiest
subtask's busy and backpressured time (as colour, on Flink's scale), the low watermark's lag, and
its subtasks (TaskManager and slot, records, state size, last checkpoint duration) for hover and
click. :func:`find_bottleneck` names the task that limits the job. Pure: no Bokeh, no I/O; built from
a plan (:class:`PlanVertex`) and the latest metrics of each subtask, laid out by runtime.views.layout.
The notebook and the dashboard draw :func:`graph_columns` with Bokeh; the side panel draws
:meth:`JobGraphView.to_json` as SVG.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from runtime.views import text
from runtime.views.layout import Layout, layout

BUSY_THRESHOLD = 0.75  # a task this busy (busiest subtask) is a bottleneck candidate
PACE_BUNDLES = 2  # a rate-limited source with at most this many bundles' rows due keeps its pace
BACKPRESSURE_OK = 0.10  # Flink's backpressure levels: OK up to 10 %, LOW up to 50 %, HIGH above
LIVE_STATES = ("RUNNING",)

# Flink's node colours: idle blue, blended towards red as the task gets busy, then towards grey as it
# is backpressured (its outputs wait for credit); borders likewise, from blue through red to black.
IDLE_FILL, BUSY_FILL, BACKPRESSURED_FILL = "#5db1ff", "#ee6464", "#888888"
IDLE_BORDER, BUSY_BORDER, BACKPRESSURED_BORDER = "#1890ff", "#ee2222", "#000000"
BOTTLENECK_BORDER = "#d4a017"
SPARK_SHARE_SHOWN = 0.5  # the hint names a subtask's dominant Spark stage when its stages explain this much of its busy time
TITLE_CHARS = 30


@dataclass(frozen=True)
class PlanInput:
    source: str  # the producing task's vertex id
    ship_strategy: str  # FORWARD, HASH, REBALANCE, BROADCAST
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanVertex:
    """One task of a job's plan: a chain of operators run together, and the exchanges feeding it."""
    id: str
    name: str
    parallelism: int
    operators: tuple[str, ...] = ()
    inputs: tuple[PlanInput, ...] = ()


@dataclass
class SubtaskFigures:
    index: int
    state: str = "CREATED"
    attempt: int = 0
    tm_id: str | None = None
    slot: int | None = None
    metrics: dict = field(default_factory=dict)


@dataclass
class GraphNode:
    id: str
    name: str
    operators: list[str]
    parallelism: int
    x: float
    y: float
    width: float
    height: float
    state: str
    records_in: int
    records_out: int
    in_rate: float
    out_rate: float
    busy: float  # 0..1, the busiest live subtask's share of time busy
    backpressure: float  # 0..1, the most backpressured live subtask's share of time waiting for credit
    watermark: float | None  # low watermark (seconds since the epoch), None before the first
    watermark_lag_s: float | None
    state_size: int  # bytes of the subtasks' parts of their latest checkpoints
    fill: str
    border: str
    subtasks: list[dict]
    busiest: int | None = None  # the index of its busiest live subtask
    spark_plan: str | None = None  # the Spark plan that dominates that subtask's recent stage time, if one does
    spark_share: float = 0.0
    driver_share: float = 0.0  # that subtask's time on Spark's driver outside any stage, over its busy time lately
    keeps_pace: bool = False  # a rate-limited source whose every live subtask reads its rows as they fall due


@dataclass
class GraphEdge:
    source: str
    target: str
    ship_strategy: str
    keys: list[str]
    points: tuple[tuple[float, float], tuple[float, float]]

    @property
    def label(self) -> str:
        return self.ship_strategy + (f" ({', '.join(self.keys)})" if self.keys else "")


@dataclass
class JobGraphView:
    job_id: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    width: float
    height: float
    bottleneck: str | None = None  # the node id the hint names
    hint: str = ""

    def node(self, node_id: str) -> GraphNode:
        return next(n for n in self.nodes if n.id == node_id)

    def to_json(self) -> dict:
        """Plain JSON for the side panel: the same positions, colours, figures and text the Bokeh views draw."""
        out = asdict(self)
        for edge, plain in zip(self.edges, out["edges"]):
            plain["label"] = edge.label
        for node, plain in zip(self.nodes, out["nodes"]):
            plain["title"], plain["lines"] = node_title(node), label_lines(node)
        return out


def node_title(node: GraphNode) -> str:
    return node.name if len(node.name) <= TITLE_CHARS else node.name[: TITLE_CHARS - 1] + "\u2026"


def label_lines(node: GraphNode) -> list[str]:
    """What is written inside a task's box, under its title, on every front."""
    lag = f"watermark lag {text.seconds(node.watermark_lag_s)}" if node.watermark_lag_s is not None else "no watermark"
    return [f"Parallelism: {node.parallelism}",
            f"in {text.rate(node.in_rate)} \u00b7 out {text.rate(node.out_rate)}",
            f"busy {text.percent(node.busy)} \u00b7 backpressured {text.percent(node.backpressure)}", lag]


# -- reading plans ----------------------------------------------------------------------------
def plan_from_json(plan: dict) -> list[PlanVertex]:
    """Flink's ``plan`` field (``GET /jobs/<id>``, ``/jobs/<id>/plan``), read leniently."""
    vertices = []
    for node in (plan or {}).get("nodes") or []:
        names = node.get("operators") or []
        operators = tuple(op.get("name", "") if isinstance(op, dict) else str(op) for op in names)
        name = node.get("description") or node.get("operator") or " -> ".join(operators) or node["id"]
        inputs = tuple(PlanInput(str(i["id"]), str(i.get("ship_strategy") or "FORWARD").upper(),
                                 tuple(i.get("keys") or ())) for i in node.get("inputs") or [])
        vertices.append(PlanVertex(str(node["id"]), name, int(node.get("parallelism") or 1),
                                   operators or tuple(name.split(" -> ")), inputs))
    return vertices


def plan_from_nodes(nodes: Iterable) -> list[PlanVertex]:
    """The Dispatcher's typed plan (runtime.snapshots.PlanNode)."""
    return [PlanVertex(str(n.vertex_id), n.description, n.parallelism, tuple(op[1] for op in n.operators),
                       tuple(PlanInput(str(i.vertex_id), i.ship_strategy.upper(), tuple(i.keys)) for i in n.inputs))
            for n in nodes]


def subtasks_from_details(details: dict) -> dict[str, list[SubtaskFigures]]:
    """Subtasks per vertex from ``GET /jobs/<id>`` (Flink's field names)."""
    return {str(v["id"]): [SubtaskFigures(int(s.get("subtask", 0)), s.get("status", "CREATED"),
                                          int(s.get("attempt") or 0), s.get("taskmanager-id"), s.get("slot"),
                                          dict(s.get("metrics") or {}))
                           for s in v.get("subtasks") or []]
            for v in details.get("vertices") or []}


# -- figures ----------------------------------------------------------------------------------
def busy_ratio(metrics: dict) -> float:
    return _ratio(metrics.get("busy_time_ms_per_s"))


def backpressure_ratio(metrics: dict) -> float:
    """Backpressured time per second; older TaskManagers report only the windowed ratio."""
    value = metrics.get("backpressured_time_ms_per_s")
    return _ratio(value) if value is not None else min(1.0, max(0.0, float(metrics.get("backpressure_ratio") or 0.0)))


def _ratio(ms_per_s) -> float:
    return min(1.0, max(0.0, float(ms_per_s or 0.0) / 1000.0))


def blend(start: str, end: str, share: float) -> str:
    """The colour ``share`` (0..1) of the way from ``start`` to ``end`` (``#rrggbb``)."""
    share = min(1.0, max(0.0, share))
    a = [int(start[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(end[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * share):02x}" for x, y in zip(a, b))


def node_colors(busy: float, backpressure: float) -> tuple[str, str]:
    """Fill and border on Flink's scale: blue idle, red busy, grey (black border) backpressured."""
    fill = blend(blend(IDLE_FILL, BUSY_FILL, busy), BACKPRESSURED_FILL, backpressure)
    border = blend(blend(IDLE_BORDER, BUSY_BORDER, busy), BACKPRESSURED_BORDER, backpressure)
    return fill, border


def keeps_pace(metrics: dict) -> bool:
    """A rate-limited source (it reports Flink's pendingRecords) that keeps its pace: no more rows due and unread
    than two of its bundles hold on average. It reads its rows as they fall due, so the job runs at the rate
    it asked for; one that falls behind has its due rows pile up past that."""
    pending, bundles = metrics.get("pending_records"), int(metrics.get("bundles") or 0)
    return pending is not None and bundles > 0 and pending <= PACE_BUNDLES * float(metrics.get("records_in") or 0) / bundles


def _subtask_row(sub: SubtaskFigures) -> dict:
    m = sub.metrics
    return {"subtask": sub.index, "state": sub.state, "attempt": sub.attempt, "taskmanager": sub.tm_id or "",
            "slot": sub.slot, "records_in": int(m.get("records_in") or 0), "records_out": int(m.get("records_out") or 0),
            "busy": busy_ratio(m), "backpressure": backpressure_ratio(m),
            "state_size": m.get("last_checkpoint_size"), "state_rows": int(m.get("state_rows") or 0),
            "last_checkpoint_id": m.get("last_checkpoint_id"),
            "last_checkpoint_duration_s": m.get("last_checkpoint_duration_s")}


def _node(vertex: PlanVertex, subtasks: Sequence[SubtaskFigures], box, now: float) -> GraphNode:
    live = [s for s in subtasks if s.state in LIVE_STATES]
    busy = max((busy_ratio(s.metrics) for s in live), default=0.0)
    backpressure = max((backpressure_ratio(s.metrics) for s in live), default=0.0)
    marks = [float(s.metrics["watermark"]) for s in subtasks if s.metrics.get("watermark") is not None]
    watermark = min(marks) if marks and len(marks) == len(subtasks) else None
    fill, border = node_colors(busy, backpressure)
    busiest = max(live, key=lambda s: (round(busy_ratio(s.metrics), 2), float(s.metrics.get("records_in") or 0)),
                  default=None)  # equally busy (a starved machine): the one with the most input
    spark = spark_focus(busiest.metrics) if busiest is not None else {}
    return GraphNode(vertex.id, vertex.name, list(vertex.operators), vertex.parallelism, box.x, box.y, box.width,
                     box.height, task_state(subtasks), int(_sum(subtasks, "records_in")),
                     int(_sum(subtasks, "records_out")), _sum(live, "records_in_per_s"), _sum(live, "records_out_per_s"),
                     busy, backpressure, watermark, None if watermark is None else max(0.0, now - watermark),
                     int(_sum(subtasks, "last_checkpoint_size")), fill, border,
                     [_subtask_row(s) for s in sorted(subtasks, key=lambda s: s.index)],
                     busiest.index if busiest is not None else None, spark.get("dominant_plan"),
                     float(spark.get("dominant_share") or 0.0), driver_share(busiest.metrics) if busiest else 0.0,
                     bool(live) and all(keeps_pace(s.metrics) for s in live))


def spark_focus(metrics: dict) -> dict:
    """A subtask's dominant Spark plan, if its Spark stages took SPARK_SHARE_SHOWN of its busy time or more lately
    (a downstream task's bundle may be evaluated by Spark's optimizer on the driver, outside any stage: its
    stages then explain little of its time, and naming one would mislead); else nothing."""
    spark = metrics.get("spark") or {}
    return spark if spark.get("dominant_plan") and float(spark.get("explained") or 0.0) >= SPARK_SHARE_SHOWN else {}


def driver_share(metrics: dict) -> float:
    """A subtask's time on Spark's driver outside any stage over its busy time lately, when SPARK_SHARE_SHOWN or
    more (its optimizer computing a bundle's projection itself: ConvertToLocalRelation); else 0."""
    share = float((metrics.get("spark") or {}).get("driver_share") or 0.0)
    return share if share >= SPARK_SHARE_SHOWN else 0.0


def _sum(subtasks: Sequence[SubtaskFigures], key: str) -> float:
    return sum(float(s.metrics.get(key) or 0.0) for s in subtasks)


def task_state(subtasks: Sequence[SubtaskFigures]) -> str:
    """One state for a task, the least advanced live one, as Flink's vertex status reads."""
    states = {s.state for s in subtasks}
    for state in ("FAILED", "CANCELING", "CANCELED", "CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING",
                  "RUNNING"):
        if state in states:
            return state
    return "FINISHED" if states else "CREATED"


# -- the graph --------------------------------------------------------------------------------
def job_graph(job_id: str, plan: Sequence[PlanVertex], subtasks: dict[str, list[SubtaskFigures]],
              now: float | None = None) -> JobGraphView:
    """The drawn graph of a job: positions from the plan, figures from its subtasks' metrics."""
    now = time.time() if now is None else now
    order = [v.id for v in plan]
    pairs = [(i.source, v.id) for v in plan for i in v.inputs]
    placed: Layout = layout(order, pairs)
    nodes = [_node(v, subtasks.get(v.id, []), placed.boxes[v.id], now) for v in plan]
    edges = [GraphEdge(i.source, v.id, i.ship_strategy, list(i.keys), placed.edge_points(i.source, v.id))
             for v in plan for i in v.inputs]
    graph = JobGraphView(job_id, nodes, edges, placed.width, placed.height)
    graph.bottleneck = find_bottleneck(nodes, edges)
    if graph.bottleneck is not None:
        slow = graph.node(graph.bottleneck)
        slow.border = BOTTLENECK_BORDER
        graph.hint = bottleneck_hint(slow)
    return graph


def find_bottleneck(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge]) -> str | None:
    """The first task, walking from the sinks upstream, that is busy and not backpressured.

    A busy task whose outputs are not held back is the one the job waits for: everything upstream of
    it is backpressured by it, everything downstream idles. Tasks at the same distance from the sinks
    are compared by how busy they are. None when no running task qualifies."""
    by_id = {n.id: n for n in nodes}
    producers: dict[str, list[str]] = {n.id: [] for n in nodes}
    has_output = set()
    for e in edges:
        producers[e.target].append(e.source)
        has_output.add(e.source)
    frontier = [n.id for n in nodes if n.id not in has_output]
    seen = set(frontier)
    while frontier:
        candidates = [by_id[i] for i in frontier if is_limiting(by_id[i])]
        if candidates:
            return max(candidates, key=lambda n: n.busy).id
        upstream = [p for i in frontier for p in producers[i] if p not in seen]
        frontier = list(dict.fromkeys(upstream))
        seen.update(frontier)
    return None


def is_limiting(node: GraphNode) -> bool:
    """Busy, free to send, and not a rate-limited source that keeps its pace: however busy its Spark actions
    keep such a source (a machine short of CPU makes each slower), the job runs at the rate it asked for, and
    that rate is what limits it; the node's colour still shows how busy it is."""
    return node.state == "RUNNING" and node.busy >= BUSY_THRESHOLD and node.backpressure <= BACKPRESSURE_OK \
        and not node.keeps_pace


def bottleneck_hint(node: GraphNode) -> str:
    """Names the task, and its busiest subtask when it has several; and the part of that subtask's time that
    dominates it when one does: Spark's driver outside any stage, or the Spark stage that takes most of its stage
    time (its plan, as its drill-down lists it)."""
    where = f" ({node.busiest + 1}/{node.parallelism})" if node.parallelism > 1 and node.busiest is not None else ""
    hint = f"{short_name(node.name)}{where} at {round(node.busy * 100)} % busy limits this job"
    if node.driver_share:
        hint += (f"; Spark's driver outside any stage (its optimizer, planning) takes {round(node.driver_share * 100)} "
                 "% of its busy time")
    elif node.spark_plan:
        hint += f"; Spark stage {short_name(node.spark_plan)} takes {round(node.spark_share * 100)} % of its stage time"
    return hint


def short_name(name: str, width: int = 60) -> str:
    return name if len(name) <= width else name[: width - 1] + "\u2026"

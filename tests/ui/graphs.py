"""The job the graph tests watch (a deliberately slow map between a source and a window), and how a test
reads a drawn graph back: the plan it must show, the nodes and edges a front drew, and the colour
actually painted inside a node."""
from __future__ import annotations

import io

from runtime.api.windows import TumblingEventTimeWindows, WatermarkStrategy, agg
from tests.helpers.clusters import wait_until

SLOW_MAP = "Slow map"
# Per row: the map needs 1.2 s for each second of the source's 2,000 rows, so it is busy and the source
# backpressured however the machine's load slows the source (with a fixed sleep per batch it is not: a
# slowed source sends fewer, larger batches and the map keeps up), while what waits in its input buffers
# ahead of a checkpoint barrier stays a few seconds of its work.
SLOW_S_PER_ROW = 0.0006

# The same pipeline as a %%flink cell body (the notebook and the panel tests submit it from a notebook).
SLOW_CELL_BODY = f"""\
import time
def slow_map(batch):
    time.sleep(len(batch) * {SLOW_S_PER_ROW})
    return batch
events = env.datagen("user INT, ts TIMESTAMP", rows_per_second=2000, realtime=True, fields={{"user": {{"min": 0, "max": 9}}}})
(events.assign_timestamps_and_watermarks(WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_column("ts"))
    .rebalance().map(slow_map, schema="user INT, ts TIMESTAMP").name("{SLOW_MAP}")
    .key_by("user").window(TumblingEventTimeWindows.of("2 s")).aggregate(clicks=agg.count())
    .collect())
"""


def build_slow_job(env) -> None:
    """Source -> (rebalance) -> Slow map -> (hash) -> Window -> Collect: three chained tasks."""
    def slow_map(batch):
        import time
        time.sleep(len(batch) * SLOW_S_PER_ROW)
        return batch

    events = env.datagen("user INT, ts TIMESTAMP", rows_per_second=2000, realtime=True,
                         fields={"user": {"min": 0, "max": 9}})
    (events.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_column("ts"))
        .rebalance().map(slow_map, schema="user INT, ts TIMESTAMP").name(SLOW_MAP)
        .key_by("user").window(TumblingEventTimeWindows.of("2 s")).aggregate(clicks=agg.count())
        .collect())


def expected_graph(client, job_id: str) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    """The job's tasks (vertex id -> name) and exchanges (source, target, kind) from its REST plan."""
    plan = client.get(f"/jobs/{job_id}/plan")["plan"]
    nodes = {n["id"]: n["description"] for n in plan["nodes"]}
    edges = {(i["id"], n["id"], i["ship_strategy"].upper()) for n in plan["nodes"] for i in n.get("inputs") or []}
    return nodes, edges


def drawn_graph(container) -> tuple[dict[str, dict], set[tuple[str, str, str]]]:
    """What a Bokeh front drew, read from its graph-as-text mirror under ``container``."""
    nodes = {}
    items = container.locator(".flinkbench-graph-text li[data-node-id]")
    for i in range(items.count()):
        item = items.nth(i)
        nodes[item.get_attribute("data-node-id")] = {
            k: item.get_attribute(f"data-{k}") for k in ("name", "busy", "backpressure", "fill", "x", "y", "width",
                                                         "height", "state")}
    edges = set()
    links = container.locator(".flinkbench-graph-text li[data-edge]")
    for i in range(links.count()):
        source, target = links.nth(i).get_attribute("data-edge").split("->")
        edges.add((source, target, links.nth(i).get_attribute("data-kind")))
    return nodes, edges


def slow_node_id(nodes: dict[str, str]) -> str:
    return next(vid for vid, name in nodes.items() if SLOW_MAP in name)


def wait_for_bottleneck(read, slow_id: str, timeout: float = 180.0) -> dict:
    """Wait until ``read()`` (-> nodes as drawn_graph gives them) shows the slow map busy (and redder)."""
    def busy():
        node = read().get(slow_id)
        return node if node and float(node["busy"]) >= 0.75 else None
    return wait_until(busy, timeout, "the slow map's node to turn busy")


def painted(image_bytes: bytes, x: float, y: float, width: float, height: float) -> tuple[int, int, int]:
    """The colour painted near the lower right inside a node's box (clear of its text and border)."""
    from PIL import Image

    image = Image.open(io.BytesIO(image_bytes)).convert("RGB")
    return image.getpixel((int(x + width - 12), int(y + height - 10)))


def is_busy_red(rgb: tuple[int, int, int]) -> bool:
    """Flink's busy end of the scale is red (#ee6464); idle is blue (#5db1ff)."""
    r, g, b = rgb
    return r > 200 and b < 150 and r - b > 80

"""Where each task of a job graph goes on the page: layers from left to right, as Flink draws its plans.

A task's layer is the length of the longest path from a source to it, so every edge points right.
Within a layer, tasks are ordered to keep edges from crossing: a few sweeps that sort each layer by
the mean position of its neighbours in the layer before (then after), ties kept in plan order. The
result is in page pixels, origin top left; the Bokeh figures, and the side panel's SVG through the
server extension, draw the same numbers, so all three fronts show the same picture.

Pure and deterministic: the same graph always gets the same positions.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

NODE_WIDTH = 230
NODE_HEIGHT = 92
GAP_X = 90  # room for an edge and its exchange label
GAP_Y = 28
MARGIN = 16
SWEEPS = 4


@dataclass(frozen=True)
class Box:
    """A task's place: its layer and row, and its rectangle in page pixels."""
    layer: int
    row: int
    x: float
    y: float
    width: float = NODE_WIDTH
    height: float = NODE_HEIGHT

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2


@dataclass(frozen=True)
class Layout:
    boxes: dict[str, Box]
    width: float
    height: float

    def edge_points(self, source: str, target: str) -> tuple[tuple[float, float], tuple[float, float]]:
        """From the right middle of ``source`` to the left middle of ``target``."""
        a, b = self.boxes[source], self.boxes[target]
        return (a.x + a.width, a.y + a.height / 2), (b.x, b.y + b.height / 2)


def layers(order: Sequence[str], edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Longest path from any source, for nodes given in topological ``order``.

    Raises ValueError on an edge to or from an unknown node, or one that points backwards in ``order``
    (the graph is not a DAG in that order)."""
    position = {node: i for i, node in enumerate(order)}
    inputs: dict[str, list[str]] = {node: [] for node in order}
    for source, target in edges:
        if source not in position or target not in position:
            raise ValueError(f"edge {source} -> {target} names a node that is not in the graph")
        if position[source] >= position[target]:
            raise ValueError(f"edge {source} -> {target} is not in topological order")
        inputs[target].append(source)
    layer: dict[str, int] = {}
    for node in order:  # topological order: every input's layer is final before its consumers'
        layer[node] = max((layer[source] + 1 for source in inputs[node]), default=0)
    return layer


def order_layers(order: Sequence[str], edges: Sequence[tuple[str, str]], layer: dict[str, int]) -> list[list[str]]:
    """Each layer's nodes, top to bottom, after barycentre sweeps (down, then up, alternating)."""
    count = max(layer.values(), default=-1) + 1
    rows: list[list[str]] = [[n for n in order if layer[n] == i] for i in range(count)]
    plan_pos = {node: i for i, node in enumerate(order)}
    preds = {n: [s for s, t in edges if t == n] for n in order}
    succs = {n: [t for s, t in edges if s == n] for n in order}
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, count) if downward else range(count - 2, -1, -1)
        for i in indices:
            ref = {n: k for k, n in enumerate(rows[i - 1 if downward else i + 1])}
            neighbours = preds if downward else succs
            now = {n: k for k, n in enumerate(rows[i])}
            rows[i] = sorted(rows[i], key=lambda n: (_barycentre(neighbours[n], ref, now[n]), plan_pos[n]))
    return rows


def _barycentre(neighbours: list[str], ref: dict[str, int], fallback: int) -> float:
    placed = [ref[n] for n in neighbours if n in ref]
    return sum(placed) / len(placed) if placed else float(fallback)


def layout(order: Sequence[str], edges: Sequence[tuple[str, str]]) -> Layout:
    """Boxes for nodes in topological ``order`` joined by ``edges`` (source, target)."""
    layer = layers(order, edges)
    rows = order_layers(order, edges, layer)
    tallest = max((len(r) for r in rows), default=0)
    boxes = {}
    for i, nodes in enumerate(rows):
        offset = (tallest - len(nodes)) / 2  # centre short layers against the tallest
        for row, node in enumerate(nodes):
            boxes[node] = Box(i, row, MARGIN + i * (NODE_WIDTH + GAP_X),
                              MARGIN + (row + offset) * (NODE_HEIGHT + GAP_Y))
    width = 2 * MARGIN + len(rows) * NODE_WIDTH + max(0, len(rows) - 1) * GAP_X
    height = 2 * MARGIN + tallest * NODE_HEIGHT + max(0, tallest - 1) * GAP_Y
    return Layout(boxes, width, height)

"""The teaching notebooks as they are committed: executed, with their outputs, and tidied of what only a live
kernel uses; and their fingerprint, the parts of the outputs that do not depend on timing, by which a fresh
run is compared with the committed copy (tests/notebooks/test_teaching_notebooks.py, ``make notebooks``).

Tidying drops the notebook's widget state and the outputs that load BokehJS for the live widgets (about
8 MB a notebook, and no use without a kernel: the widgets cannot render from a saved notebook, their
static copies can), and nbclient's per-cell timings.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import nbformat

BOKEHJS_LOAD = "application/vnd.bokehjs_load.v0+json"
DATAFRAME = re.compile(r"<table[^>]*class=\"dataframe")


def tidy(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The executed notebook as it is committed (changed in place, and returned)."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if BOKEHJS_LOAD not in o.get("data", {})]
    return nb


def fingerprint(nb: nbformat.NotebookNode) -> list[dict]:
    """Per cell: its type and source (a cell tagged 'parameters' stands as such: tests set it) and its outputs'
    kinds, with what of a static copy or a pandas table does not depend on timing."""
    cells = []
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        entry = {"type": cell.cell_type, "source": "<parameters>" if "parameters" in tags else cell.source}
        if cell.cell_type == "code":
            entry["outputs"] = _outputs(cell.outputs)
        cells.append(entry)
    return cells


def _outputs(outputs) -> list:
    """Kinds of output in order; consecutive stdout pieces are one (the kernel splits them as it flushes), and
    stderr is left out (warnings come and go with timing)."""
    found: list = []
    for out in outputs:
        if out.output_type == "stream":
            if out.name == "stdout" and found[-1:] != ["stdout"]:
                found.append("stdout")
        elif out.output_type == "error":
            found.append(f"error {out.ename}")
        else:
            found.append(_display(out))
    return found


def _display(out) -> dict:
    data = out.get("data", {})
    shown: dict = {"kind": out.output_type, "mime": sorted(data)}
    html = data.get("text/html", "")
    if "flinkbench-static'" in html:
        shown["static copy"] = static_copy(html)
    elif DATAFRAME.search(html):
        shown["columns"] = StaticCopyParser.parse(html).tables[0]["columns"]
    return shown


def static_copy(html: str) -> dict:
    """A static copy's parts that do not depend on timing: the job's end, its sections, the results' columns
    (and row count, for a job that finished), the tasks and the number of restarts."""
    parsed = StaticCopyParser.parse(html)
    tables = {t["class"]: t for t in parsed.tables}
    results = tables.get("flinkbench-static-results")
    shown = {"state": parsed.state, "sections": parsed.sections,
             "results": results["columns"] if results else None,
             "tasks": [row[0] for row in tables["flinkbench-static-tasks"]["rows"]]
             if "flinkbench-static-tasks" in tables else [],
             "restarts": len(tables["flinkbench-static-restarts"]["rows"]) if "flinkbench-static-restarts" in tables
             else 0}
    if results and parsed.state == "FINISHED":
        shown["rows"] = len(results["rows"])
    return shown


class StaticCopyParser(HTMLParser):
    """Tables (class, columns, rows of cell text), sections and the job's state, from a copy's or pandas' HTML."""

    def __init__(self):
        super().__init__()
        self.tables: list[dict] = []
        self.sections: list[str] = []
        self.state = ""
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_head = False

    @classmethod
    def parse(cls, html: str) -> StaticCopyParser:
        parser = cls()
        parser.feed(html)
        return parser

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and "flinkbench-static" == attrs.get("class"):
            self.state = attrs.get("data-state", "")
        elif tag == "section" and attrs.get("data-section"):
            self.sections.append(attrs["data-section"])
        elif tag == "table":
            self.tables.append({"class": (attrs.get("class") or "").strip(), "columns": [], "rows": []})
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            table = self.tables[-1]
            if self._in_head:
                table["columns"] += [c for c in self._row if c]
            else:
                table["rows"].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


FAILOVER_EVENTS = ("ClusterSnapshot", "JobStatusChanged", "TaskStatusChanged", "CheckpointCompleted", "TaskManagerLost",
                   "JobRestarting", "CheckpointRestored")


def recording_fingerprint(path) -> dict:
    """A recording's parts that do not depend on timing: its header's format and job, which of the events a
    failover makes it holds (a failed checkpoint, say, comes and goes with timing), how many rows, and how the
    job ended."""
    from runtime.views.recording import read

    recording = read(path)
    kinds = sorted({line["message"]["type"] for line in recording.lines if line["kind"] == "message"}
                   & set(FAILOVER_EVENTS))
    rows = sum(line["table"].num_rows for line in recording.lines if line["kind"] == "rows")
    end = recording.lines[-1] if recording.complete else {}
    return {"format": [recording.header["format"], recording.header["version"]], "job": recording.name,
            "view": json.dumps(recording.header.get("view"), sort_keys=True), "events": kinds, "rows": rows,
            "end": end.get("state")}

"""REST handlers for data in and out of a running job (Flinkbench's own): the collect sink's rows,
and rows pushed into push sources."""
from __future__ import annotations

import pyarrow as pa

from runtime.arrow_ipc import table_from_b64
from runtime.jobmanager.rest import convert
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, Query, operation

RESULT_PAGE_ROWS = 10_000


class JobResultsHandler(ApiHandler):
    @operation("Rows of the job's collect sink from offset: JSON records, or an Arrow IPC stream with "
               "format=arrow (then X-Next-Offset, X-Finished and X-Job-State headers say where to go on).",
               m.JobResultsPage, query=(Query("offset", "first row wanted", int),
                                        Query("limit", "at most this many rows", int),
                                        Query("format", "json (default) or arrow")))
    def get(self, jobid):
        offset = self.int_query("offset", 0)
        limit = min(self.int_query("limit", RESULT_PAGE_ROWS), RESULT_PAGE_ROWS * 10)
        form = self.get_query_argument("format", "json")
        if form not in ("json", "arrow"):
            raise HTTPError(400, f"query parameter 'format' must be json or arrow, got {form!r}")
        page = self.gateway.job_results(jobid, offset, limit)
        if form == "arrow":
            self._reply_arrow(page)
            return None
        table = page.table
        return m.JobResultsPage(
            offset=page.offset, next=page.next_offset, total=page.total, dropped=page.dropped, finished=page.finished,
            job_state=page.job_state.value,
            columns=table.column_names if table is not None else (page.schema.names if page.schema else []),
            rows=table.to_pylist() if table is not None else [])

    def _reply_arrow(self, page) -> None:
        schema = page.table.schema if page.table is not None else (page.schema or pa.schema([]))
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as writer:
            if page.table is not None:
                writer.write_table(page.table)
        self.set_header("Content-Type", "application/vnd.apache.arrow.stream")
        self.set_header("X-Next-Offset", str(page.next_offset))
        self.set_header("X-Finished", "true" if page.finished else "false")
        self.set_header("X-Job-State", page.job_state.value)
        self.finish(sink.getvalue().to_pybytes())


class PushSourcesHandler(ApiHandler):
    @operation("The job's push sources and how many rows each has taken.", m.PushSourcesInfo)
    def get(self, jobid):
        return m.PushSourcesInfo(sources=[convert.push_source(s) for s in self.gateway.push_sources(jobid)])


class PushRowsHandler(ApiHandler):
    @operation("Push rows into a push source (by name or operator id): all are taken, or none and the reply "
               "names what does not fit.", m.PushRowsResponseBody, request=m.PushRowsRequestBody)
    def post(self, jobid, source):
        accepted = self.gateway.push_rows(jobid, source, self._rows(), self.body(m.PushRowsRequestBody).push_id)
        return m.PushRowsResponseBody(source=accepted.source.source_id, name=accepted.source.name,
                                      rows=accepted.end - accepted.first, offsets=[accepted.first, accepted.end],
                                      total=accepted.source.rows)

    def _rows(self):
        body = self.body(m.PushRowsRequestBody)
        if (body.rows is None) == (body.arrow is None):
            raise HTTPError(400, "the body needs one of 'rows' (a list of objects) or 'arrow' "
                                 "(a base64 Arrow IPC stream)")
        if body.rows is not None:
            return body.rows
        try:
            return table_from_b64(body.arrow)
        except (TypeError, ValueError, pa.ArrowException) as err:
            raise HTTPError(400, f"'arrow' is not a base64 Arrow IPC stream: {err}") from None


class CloseSourceHandler(ApiHandler):
    @operation("No more rows for this push source: its subtasks finish once they read the rest.",
               m.SourceClosedResponseBody)
    def post(self, jobid, source):
        closed = self.gateway.close_push_source(jobid, source)
        return m.SourceClosedResponseBody(source=closed.source_id, name=closed.name, closed=True, total=closed.rows)

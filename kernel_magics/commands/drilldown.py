"""``%flink drilldown``: one subtask's Spark work in a notebook.

    %flink drilldown JOB                          the busiest subtask of the task the bottleneck hint names
    %flink drilldown JOB --task NAME --subtask N  another one (N counts from 1, as the graph writes it)

Its busy time in parts (its Spark stages, Spark's driver outside any stage, Arrow in and out, the TaskManager's own
work), its recent Spark stages slowest first, the stage time per plan, and the subtask's phase times beside
them (``GET /jobs/:jobid/vertices/:vertexid/subtasks/:subtaskindex/spark``), as the side panel and the
dashboard show them when a subtask of the job graph is opened.
"""
from __future__ import annotations

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kernel_magics import api_hints
from kernel_magics.commands.subcommand import subcommand
from kernel_magics.commands.cluster import show_api_option
from kernel_magics.commands.jobs import resolve_job
from kernel_magics.errors import FlinkError, translating
from runtime.views.drilldown import drilldown_html, pick
from runtime.views.graph import job_graph, plan_from_json, subtasks_from_details


class Drilldown:
    """The drill-down as HTML in the notebook; ``.info`` is the JobManager's answer."""

    def __init__(self, info: dict, task_name: str, parallelism: int):
        self.info, self.task_name, self.parallelism = info, task_name, parallelism

    def _repr_html_(self) -> str:
        return drilldown_html(self.info, self.task_name, self.parallelism)


@subcommand("drilldown")
@magic_arguments(name="flink drilldown")
@argument("job", help="the job (its id or the start of it)")
@argument("--task", metavar="NAME", help="the task: its name, the start of its name, or its vertex id")
@argument("--subtask", type=int, metavar="N", help="the subtask, counting from 1 (default: the task's busiest)")
@show_api_option
@translating("drill-down")
def drilldown(session, line: str):
    """One subtask's busy time in parts and its Spark stages, slowest first, beside its phase times."""
    args = parse_argstring(drilldown, line)
    client = session.require_client()
    job_id = resolve_job(client, args.job)
    details = client.get(f"/jobs/{job_id}")
    graph = job_graph(job_id, plan_from_json(details.get("plan") or {}), subtasks_from_details(details))
    try:
        vertex, index = pick(graph, args.task, args.subtask - 1 if args.subtask is not None else None)
    except ValueError as err:
        raise FlinkError(str(err)) from None
    path = f"/jobs/{job_id}/vertices/{vertex}/subtasks/{index}/spark"
    if args.show_api:
        api_hints.show(client.url, session.token_file, "GET", path, None)
    node = graph.node(vertex)
    return Drilldown(client.get(path), node.name, node.parallelism)

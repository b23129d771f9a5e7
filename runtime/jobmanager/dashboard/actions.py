"""Actions on the dashboard: a job's (cancel, savepoint, stop with savepoint) and a savepoint's (resume, dispose).

Each action is first described (what it does, the REST call and the ``flinkbench`` line that do the
same) and only done once confirmed; a savepoint's progress is then polled by its trigger id, as any
REST client would, until its location or failure is known. :class:`ActionPanel` is the Bokeh side;
the descriptions are plain data, so they are tested without a browser.
"""
from __future__ import annotations

import html
from collections.abc import Callable, Collection
from dataclasses import dataclass

from bokeh.layouts import column, row
from bokeh.models.widgets import Button, Div

from runtime.api_hints import cli_line, rest_lines
from runtime.jobmanager.dashboard.source import DashboardError, RestSource

POLL_MS = 500
DANGEROUS = ("cancel", "dispose")  # red buttons


@dataclass(frozen=True)
class JobAction:
    key: str
    label: str
    question: str
    method: str
    path: str
    body: dict | None
    cli: str
    polls: bool  # answered with a request id to poll

    def api_lines(self, url: str, token_file: str | None, cli_commands: Collection[str]) -> list[str]:
        """The REST call and the ``flinkbench`` line (``cli_commands``: the subcommands the CLI has)."""
        return rest_lines(url, token_file, self.method, self.path, self.body) + [
            cli_line(url, token_file, self.cli, cli_commands)]


def job_actions(job_id: str) -> list[JobAction]:
    return [
        JobAction("savepoint", "Savepoint", "Take a savepoint of this job? It keeps running.", "POST",
                  f"/jobs/{job_id}/savepoints", {"cancel-job": False}, f"savepoint {job_id}", True),
        JobAction("stop", "Stop with savepoint", "Stop this job with a savepoint? It ends once the savepoint is "
                  "complete and can resume from it with 'run -s PATH'.", "POST", f"/jobs/{job_id}/stop",
                  {"drain": False}, f"stop {job_id}", True),
        JobAction("cancel", "Cancel", "Cancel this job? Its state is not kept beyond its retained checkpoints.",
                  "PATCH", f"/jobs/{job_id}?mode=cancel", None, f"cancel {job_id}", False),
    ]


def outcome(status: dict) -> tuple[bool, str]:
    """(finished, text) from Flink's answer about an asynchronous operation (a savepoint's, with its location;
    a disposal's, with nothing but a failure cause when it failed)."""
    if (status.get("status") or {}).get("id") != "COMPLETED":
        return False, "in progress \u2026"
    operation = status.get("operation") or {}
    if operation.get("location"):
        return True, f"completed: {operation['location']}"
    cause = operation.get("failure-cause")
    if not cause:
        return True, "completed"
    return True, f"failed: {cause.get('stack-trace') or cause.get('class') or 'no cause given'}"


class ActionPanel:
    """Buttons for actions (a job's, a savepoint's), a confirmation showing the equivalent REST call and CLI
    line, and the result; an action answered with a request id is polled at ``status_path(request id)``.
    Callbacks run on the document's loop (the Bokeh server's)."""

    def __init__(self, doc, source: RestSource, actions: list[JobAction], token_file: str | None,
                 status_path: Callable[[str], str], cli_commands: Collection[str]):
        self.doc, self.source, self.token_file, self.status_path = doc, source, token_file, status_path
        self.cli_commands = cli_commands  # the flinkbench subcommands the hints may name
        self.actions = {a.key: a for a in actions}
        self.buttons = [Button(label=a.label, name=f"action-{a.key}", width=170,
                               button_type="danger" if a.key in DANGEROUS else "default")
                        for a in self.actions.values()]
        for button, key in zip(self.buttons, self.actions):
            button.on_click(lambda _event=None, key=key: self.ask(key))
        self.question = Div(text="", name="action-confirmation", sizing_mode="stretch_width")
        self.confirm = Button(label="Confirm", button_type="primary", name="action-confirm", visible=False, width=120)
        self.back = Button(label="Back", name="action-back", visible=False, width=120)
        self.status = Div(text="", name="action-status", sizing_mode="stretch_width")
        self.confirm.on_click(lambda _event=None: self.doc.add_next_tick_callback(self._confirmed))
        self.back.on_click(self._reset)
        self.pending: JobAction | None = None
        self._poll = None
        self.layout = column(row(*self.buttons), self.question, row(self.confirm, self.back), self.status,
                             sizing_mode="stretch_width")

    def show_buttons(self, running: bool) -> None:
        for button in self.buttons:
            if button.disabled == running:
                button.disabled = not running

    def ask(self, key: str) -> None:
        action = self.pending = self.actions[key]
        lines = "\n".join(action.api_lines(self.source.url, self.token_file, self.cli_commands))
        self.question.text = (f"<div data-action='{action.key}'><b>{html.escape(action.question)}</b>"
                              f"<pre class='fb-trace' data-name='api-lines'>{html.escape(lines)}</pre></div>")
        self.confirm.visible = self.back.visible = True

    def _reset(self, _event=None) -> None:
        self.pending = None
        self.question.text = ""
        self.confirm.visible = self.back.visible = False

    async def _confirmed(self) -> None:
        action = self.pending
        self._reset()
        if action is None:
            return
        try:
            answer = await self.source.call(action.method, action.path, action.body)
        except DashboardError as err:
            self._say(action, f"refused: {err}", "error")
            return
        if not action.polls:
            self._say(action, f"started job {answer['jobid']}" if answer.get("jobid") else "requested", "done")
            return
        trigger = answer.get("request-id", "")
        self._say(action, f"requested (trigger {trigger}); in progress \u2026", "pending")
        if self._poll is not None:
            self.doc.remove_periodic_callback(self._poll)
        self._poll = self.doc.add_periodic_callback(lambda: self._check(action, trigger), POLL_MS)

    async def _check(self, action: JobAction, trigger: str) -> None:
        try:
            finished, text = outcome(await self.source.get(self.status_path(trigger)))
        except DashboardError as err:
            finished, text = True, f"status unknown: {err}"
        self._say(action, text, ("error" if text.startswith(("failed", "status")) else "done") if finished else "pending")
        if finished and self._poll is not None:
            self.doc.remove_periodic_callback(self._poll)
            self._poll = None

    def _say(self, action: JobAction, text: str, outcome_name: str) -> None:
        color = {"error": "#c00", "done": "#2ca02c"}.get(outcome_name, "#555")
        self.status.text = (f"<div data-action='{action.key}' data-outcome='{outcome_name}' style='color:{color}'>"
                            f"<b>{html.escape(action.label)}</b>: {html.escape(text)}</div>")

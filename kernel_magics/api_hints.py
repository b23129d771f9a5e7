"""``--show-api``: the REST call and the ``flinkbench`` command that do what a magic just did
(the lines themselves come from runtime.api_hints, shared with the dashboard)."""
from __future__ import annotations

from runtime import api_hints
from runtime.api_hints import rest_lines
from runtime.cli.commands import COMMANDS

__all__ = ["cli_line", "rest_lines", "show"]


def cli_line(url: str, token_file: str | None, command: str | None) -> str:
    """The ``flinkbench`` line for ``command``, checked against the installed CLI's commands."""
    return api_hints.cli_line(url, token_file, command, COMMANDS)


def show(url: str, token_file: str | None, method: str, path: str, body=None, cli: str | None = None) -> None:
    print("\n".join(rest_lines(url, token_file, method, path, body) + [cli_line(url, token_file, cli)]))

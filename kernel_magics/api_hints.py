"""``--show-api``: the REST call and the ``flinkbench`` command that do what a magic just did
(the lines themselves come from runtime.api_hints, shared with the dashboard)."""
from __future__ import annotations

from runtime.api_hints import cli_commands, cli_line, rest_lines

__all__ = ["cli_commands", "cli_line", "rest_lines", "show"]


def show(url: str, token_file: str | None, method: str, path: str, body=None, cli: str | None = None) -> None:
    print("\n".join(rest_lines(url, token_file, method, path, body) + [cli_line(url, token_file, cli)]))

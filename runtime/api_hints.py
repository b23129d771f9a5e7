"""The REST call and the ``flinkbench`` command that do what a view or a magic just did, so what is
learnt in a notebook or on the dashboard carries over to operating a cluster from a shell.

The token itself is never printed (notebooks get saved and shared): the curl line reads it from the
token file, or from $FLINKBENCH_TOKEN when there is none. The CLI sits above everything that shows these
lines' callers, so a caller passes the CLI's command table (runtime.cli.commands.COMMANDS) in.
"""
from __future__ import annotations

import json
import shlex
from collections.abc import Collection


def rest_lines(url: str, token_file: str | None, method: str, path: str, body=None) -> list[str]:
    token = f"$(cat {shlex.quote(token_file)})" if token_file else "$FLINKBENCH_TOKEN"
    curl = f"curl -X {method} -H \"Authorization: Bearer {token}\""
    if body is not None:
        curl += f" -H 'Content-Type: application/json' -d {shlex.quote(json.dumps(body))}"
    return [f"REST: {method} {path}", f"  {curl} {url}{path}"]


def cli_line(url: str, token_file: str | None, command: str | None, commands: Collection[str]) -> str:
    """``command`` is the CLI's arguments after ``flinkbench``; its first word must be one of ``commands``,
    the subcommands the installed ``flinkbench`` has (it grows as the runtime does)."""
    if not command:
        return "CLI:  (no flinkbench command for this; use the REST call)"
    first = command.split()[0]
    if first not in commands:
        return f"CLI:  (this flinkbench has no '{first}' command yet; use the REST call)"
    rest = command[len(first):]
    if first == "cluster":  # starts its own cluster: no target
        return f"CLI:  flinkbench {command}"
    target = f" --jobmanager {url}" + (f" --token-file {shlex.quote(token_file)}" if token_file else "")
    return f"CLI:  flinkbench {first}{target}{rest}"

"""The README as the one list of commands a newcomer runs: its fenced code blocks, read by the tests that run
them, so a command shown there and a command tested cannot drift apart."""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def code_blocks(section: str | None = None) -> list[str]:
    """Every fenced code block of the README, or of the section whose heading contains ``section``."""
    text = README.read_text()
    if section is not None:
        text = _section(text, section)
    return [m.group(1) for m in FENCE.finditer(text)]


def command_lines(section: str | None = None) -> list[str]:
    """The command lines of the README's code blocks (or one section's), comments and blank lines dropped."""
    lines = []
    for block in code_blocks(section):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def _section(text: str, heading: str) -> str:
    """The text under the first heading that contains ``heading``, up to the next heading of its level or above."""
    match = re.search(rf"^(#+) [^\n]*{re.escape(heading)}[^\n]*\n", text, re.M)
    assert match, f"README has no heading containing {heading!r}"
    level = len(match.group(1))
    rest = text[match.end():]
    # headings only outside code blocks (a shell comment in a block starts with '#' too)
    body, depth = [], False
    for line in rest.splitlines(keepends=True):
        if line.startswith("```"):
            depth = not depth
        elif not depth and re.match(rf"^#{{1,{level}}} ", line):
            break
        body.append(line)
    return "".join(body)

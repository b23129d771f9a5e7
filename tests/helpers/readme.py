"""The README as the one list of commands a newcomer runs: its fenced code blocks, read by the tests that run
them, so a command shown there and a command tested cannot drift apart.

:func:`commands` lists every command the README shows (tests/helpers/readme_inventory.py says, for each, which
test runs it or why none can here); :func:`matches` tells whether a concrete command line is an instance of a
synopsis the README shows (``flinkbench savepoint JOB [DIR]``), so a test running the commands its own way still
runs them as shown.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)
CODE_LANGUAGES = ("python", "yaml")  # blocks of code or configuration, not commands
COMMAND_START = re.compile(r"^(sudo|pip|jupyter|make|flinkbench|curl|export|openssl|printf|chmod)\b|^[%$]|"
                           r"^(LocalCluster|env)\b")


def code_blocks(section: str | None = None) -> list[str]:
    """Every fenced code block of the README, or of the section whose heading contains ``section``."""
    return [text for _, text in _fenced(section)]


def command_lines(section: str | None = None) -> list[str]:
    """The command lines of the README's code blocks (or one section's), comments and blank lines dropped."""
    lines = []
    for block in code_blocks(section):
        for line in block.splitlines():
            command = _uncommented(line)
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def commands(section: str | None = None) -> list[str]:
    """Every command the README shows (or one section shows): each line of a block of commands, comments dropped
    and continued lines (ending in a backslash, or indented) joined to the line they continue; a block that starts
    with a ``%%`` cell magic is one command, the whole cell. Python and YAML blocks are code, and a block none of
    whose lines is a command (the architecture's picture) is a picture."""
    found: list[str] = []
    for lang, text in _fenced(section):
        if lang in CODE_LANGUAGES:
            continue
        if text.startswith("%%"):
            found.append(text.rstrip("\n"))
            continue
        found += _joined(text)
    return found


def _joined(text: str) -> list[str]:
    lines: list[str] = []
    continuing = False
    for raw in text.splitlines():
        line = _uncommented(raw)
        if not line or line.startswith("#"):
            continuing = False
            continue
        if (continuing or raw[:1].isspace()) and lines:
            lines[-1] = f"{lines[-1]} {line.removesuffix(chr(92)).strip()}"
        elif COMMAND_START.match(line):
            lines.append(line.removesuffix("\\").strip())
        continuing = raw.rstrip().endswith("\\")
    return lines


def _uncommented(line: str) -> str:
    return line.split("  #", 1)[0].rstrip()


def _fenced(section: str | None) -> list[tuple[str, str]]:
    text = README.read_text()
    if section is not None:
        text = _section(text, section)
    return [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]


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


# -- synopses ---------------------------------------------------------------------------------
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_:]*$")  # JOB, DIR, PATH, F, N, SAVEPOINT, HOST:PORT, URL
NAMED_PLACEHOLDERS = {"job.py": r".+\.py", "args": r".+", "conf.yaml": r".+", "key=value": r"[\w.-]+=.*"}
# The job commands' target, which the README gives once for all of them (-m host:port, --token-file F).
TARGET_FLAGS = ("-m", "--jobmanager", "--token-file")


@dataclass(frozen=True)
class _Optional:
    alternatives: tuple[tuple, ...]
    repeat: bool


def matches(synopsis: str, argv: list[str]) -> bool:
    """Whether ``argv`` (e.g. ``["flinkbench", "list", "-a"]``) is an instance of ``synopsis`` as the README writes
    it: ``[...]`` optional, ``a | b`` alternatives, ``...`` repeats, capitalised words and ``job.py``, ``args``,
    ``conf.yaml``, ``key=value`` stand for a value; the job commands' target flags may come anywhere."""
    argv = _without_target(argv)
    return any(_match(list(alternative), argv) for alternative in _alternatives(_without_target(_tokens(synopsis))))


def _without_target(argv: list[str]) -> list[str]:
    out, skip = [], False
    for token in argv:
        if skip:
            skip = False
        elif token in TARGET_FLAGS:
            skip = True
        else:
            out.append(token)
    return out


def _tokens(synopsis: str) -> list[str]:
    return shlex.split(synopsis.replace("[", " [ ").replace("]", " ] "))


def _alternatives(tokens: list[str]) -> list[tuple]:
    """The elements of each ``|``-separated alternative of ``tokens`` at this level of brackets."""
    alternatives: list[list] = [[]]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "|":
            alternatives.append([])
        elif token == "[":
            depth, j = 1, i + 1
            while depth:
                depth += {"[": 1, "]": -1}.get(tokens[j], 0)
                j += 1
            inner = tokens[i + 1:j - 1]
            repeat = bool(inner) and inner[-1] == "..."
            alternatives[-1].append(_Optional(tuple(_alternatives(inner[:-1] if repeat else inner)), repeat))
            i = j - 1
        elif token != "...":
            alternatives[-1].append(token)
        i += 1
    return [tuple(a) for a in alternatives]


def _match(elements: list, argv: list[str]) -> bool:
    if not elements:
        return not argv
    head, rest = elements[0], elements[1:]
    if isinstance(head, _Optional):
        again = [head] if head.repeat else []
        return _match(rest, argv) or any(_match(list(alt) + again + rest, argv) for alt in head.alternatives if alt)
    if not argv:
        return False
    pattern = NAMED_PLACEHOLDERS.get(head) or (r".+" if PLACEHOLDER.match(head) else re.escape(head))
    return re.fullmatch(pattern, argv[0], re.S) is not None and _match(rest, argv[1:])

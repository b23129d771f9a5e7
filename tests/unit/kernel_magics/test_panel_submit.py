"""The kernel side of the panel's "Submit cell as job" (kernel_magics.panel_submit), in a real IPython shell:
the call the panel sends loads the magics and leaves the user's namespace as it was; a connected panel
moves the kernel's session to its JobManager, one already there is left alone."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from IPython.core.interactiveshell import InteractiveShell

from kernel_magics.panel_submit import prepare
from kernel_magics.session import session_for

URL = "http://127.0.0.1:8081"
# What extension/src/submit.ts (preparationCode) sends, silently, before the cell.
PANEL_CALL = '__import__("kernel_magics.panel_submit").panel_submit.prepare({url}, {token_file})'


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    if "kernel_magics" in ip.extension_manager.loaded:
        ip.extension_manager.unload_extension("kernel_magics")
    ip.magics_manager.magics["cell"].pop("flink", None)
    yield ip
    if "kernel_magics" in ip.extension_manager.loaded:
        ip.extension_manager.unload_extension("kernel_magics")


@pytest.fixture
def connects(shell, monkeypatch):
    """The ``%flink`` lines the shell runs (none reaches a JobManager here)."""
    lines: list[str] = []
    monkeypatch.setattr(shell, "run_line_magic", lambda magic, line: lines.append(f"%{magic} {line}"))
    return lines


def test_the_panels_call_loads_the_magics_and_leaves_the_namespace_alone(shell):
    names = set(shell.user_ns)
    result = shell.run_cell(PANEL_CALL.format(url="None", token_file="None"), silent=True, store_history=False)
    assert result.success, result.error_in_exec
    assert "kernel_magics" in shell.extension_manager.loaded and "flink" in shell.magics_manager.magics["cell"]
    assert set(shell.user_ns) == names
    assert shell.run_cell(PANEL_CALL.format(url="None", token_file="None"), silent=True).success, "twice is fine"


def test_a_connected_panel_moves_the_kernels_session_to_its_jobmanager(shell, connects):
    prepare(URL, "/run/flink token", shell)
    assert connects == [f"%flink connect {URL} --token-file '/run/flink token'"]


def test_a_session_already_at_the_panels_jobmanager_is_left_alone(shell, connects):
    prepare(None, None, shell)
    session_for(shell).client = SimpleNamespace(url=URL + "/")
    try:
        prepare(URL, None, shell)
        assert connects == []
        prepare("http://127.0.0.2:8081", None, shell)
        assert connects == ["%flink connect http://127.0.0.2:8081"]
    finally:
        session_for(shell).client = None

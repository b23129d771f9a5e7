"""Where a view leaves its static copy: a placeholder with a display id, filled once, and sent once more from the
main thread when a thread filled it (nbclient records only the running cell's messages)."""
from __future__ import annotations

import threading

import pytest

from kernel_magics.widgets import static_output
from kernel_magics.widgets.static_output import PENDING, StaticOutput


@pytest.fixture
def sent(monkeypatch):
    messages = []
    monkeypatch.setattr(static_output, "display", lambda data, raw, display_id: messages.append(("show", data, display_id)))
    monkeypatch.setattr(static_output, "update_display",
                        lambda data, raw, display_id: messages.append(("update", data, display_id)))
    monkeypatch.setattr(static_output, "_bokehjs_sent", False)
    return messages


def test_the_copy_replaces_the_placeholder_once_and_only_the_first_carries_bokehjs(sent):
    first, second = StaticOutput(), StaticOutput()
    assert not first.fill(lambda bokehjs: "early", "x"), "nothing to fill before the view was shown"
    first.show()
    second.show()
    assert sent[0] == ("show", {"text/html": PENDING, "text/plain": ""}, first.display_id)
    carried = []
    assert first.fill(lambda bokehjs: carried.append(bokehjs) or "<div>one</div>", "one: FINISHED")
    assert not first.fill(lambda bokehjs: "<div>again</div>", "again"), "a copy is made once"
    assert second.fill(lambda bokehjs: carried.append(bokehjs) or "<div>two</div>", "two")
    assert carried == [True, False]
    assert sent[2] == ("update", {"text/html": "<div>one</div>", "text/plain": "one: FINISHED"}, first.display_id)
    first.resend()
    assert len(sent) == 4, "a copy made on the main thread is not sent again"


def test_a_copy_made_on_a_thread_is_sent_again_once_from_the_main_thread(sent):
    out = StaticOutput()
    out.show()
    worker = threading.Thread(target=out.fill, args=(lambda bokehjs: "<div>late</div>", "late"))
    worker.start()
    worker.join()
    out.resend()
    out.resend()
    assert [kind for kind, _, _ in sent] == ["show", "update", "update"]

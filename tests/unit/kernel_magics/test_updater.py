"""The kernel's one view-updater thread: throttled redraws, failing views dropped, flush."""
from __future__ import annotations

import threading
import time

from kernel_magics.widgets.updater import ViewUpdater


class CountingView:
    def __init__(self, keep=True, fail=False):
        self.calls: list[float] = []
        self.keep, self.fail = keep, fail

    def refresh(self) -> bool:
        self.calls.append(time.monotonic())
        if self.fail:
            raise RuntimeError("broken view")
        return self.keep


def test_redraws_stay_under_the_rate_however_often_poked():
    updater = ViewUpdater(interval=0.1)
    view = CountingView()
    updater.add(view)
    tick = threading.Event()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        updater.poke()
        tick.wait(0.001)
    updater.close()
    gaps = [b - a for a, b in zip(view.calls, view.calls[1:])]
    assert 5 <= len(view.calls) <= 12, view.calls
    assert min(gaps) >= 0.09, gaps


def test_a_failing_view_is_dropped_and_a_finished_one_removed_while_others_go_on():
    updater = ViewUpdater(interval=0.01)
    broken, done, live = CountingView(fail=True), CountingView(keep=False), CountingView()
    for view in (broken, done, live):
        updater.add(view)
    assert updater.flush(5)
    assert updater.flush(5)
    updater.close()
    assert len(broken.calls) == 1 and len(done.calls) == 1
    assert len(live.calls) >= 2
    assert updater.views() == [live]


def test_flush_waits_for_a_pass_that_started_after_it():
    updater = ViewUpdater(interval=0.05)
    view = CountingView()
    updater.add(view)
    asked = time.monotonic()
    assert updater.flush(5)
    updater.close()
    assert any(t >= asked for t in view.calls)


def test_a_flush_is_not_held_back_by_the_redraw_limit():
    updater = ViewUpdater(interval=5.0)  # a redraw limit far longer than the flush may take
    view = CountingView()
    updater.add(view)
    assert updater.flush(5)  # the first pass, then the limit would hold the next for 5 s
    asked = time.monotonic()
    assert updater.flush(2), "the passes a flush waits for run at once"
    updater.close()
    assert time.monotonic() - asked < 2 and len(view.calls) >= 3

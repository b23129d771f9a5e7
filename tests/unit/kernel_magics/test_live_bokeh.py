"""A live Bokeh view sends no document change before the page shows it (a view that started listening
mid-change would read every later one shifted and stay frozen), then the whole document and each change."""
from __future__ import annotations

from bokeh.layouts import column
from bokeh.models import Div

from kernel_magics.widgets.bokehjs import LiveBokeh


def test_changes_wait_for_the_first_view_which_gets_the_whole_document():
    text = Div(text="before")
    live = LiveBokeh(column(text))
    sent: list[dict] = []
    live.widget.send = lambda content, buffers=None: sent.append(content)
    text.text = "no view yet"
    assert sent == [], "a change before any view is kept back"
    first_bundle = live.widget.render_bundle
    live._views_changed({"new": 1})
    live.widget._view_count = 1
    live.resync_if_needed()
    assert live.widget.render_bundle != first_bundle and "no view yet" in str(live.widget.render_bundle)
    text.text = "shown"
    assert [m["msg"] for m in sent] == ["patch"] * 3 and "shown" in sent[-1]["payload"], sent

"""The Kung-Fu Zoo arena's clicks and drags as a notebook delivers them (issue 11: ``face=head`` logged).

In JupyterLab the browser sends what changed since its last message in one message: a face chosen just before a
drag arrives with the drag. Panel applies such a message with the document held, runs the Python callbacks of
Bokeh events at once and pushes after each, which drops the changes still held (Panel 1.9.4): the face never
reached the session and the flick was played from the head. The arena's gestures now come as a change of its
``gesture`` source, which is held and dispatched in order with the rest of the message.

These tests render the page for a notebook (a comm, as ``pn.extension`` in a kernel does) and apply the browser's
message the way Panel's notebook handler does (held document, ``apply_json_patch``, unhold).
"""

from __future__ import annotations

from typing import Any

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import RadioButtonGroup
from pyviz_comms import Comm

from apps.zoo import ZooPage
from apps.zoo import adapter as za
from engine.zoo.session import DRAG_MM_PER_M_S, ZooSession


@pytest.fixture
def notebook_page() -> tuple[ZooPage, Document, Any]:
    """A page rendered as in a notebook cell, C2 chosen to be flicked from the west dot."""
    s = ZooSession(seed=3, seats=["person", "person"], odds_workers=1)
    page = ZooPage(session=s, background=False)
    doc = Document()
    root = pn.panel(page).get_root(doc, Comm())
    doc.add_root(root)
    assert page.arena.tap(*za.bench_xy(s.state.to_move, 1)) and page.arena.tap(-10.0, 150.0), s.notice.text
    assert (s.die, s.spot, s.face) == ("C2", "W-dot", "head")
    face = next(m for m in root.select({"type": RadioButtonGroup}) if "back" in m.labels)
    return page, doc, face


def from_browser(doc: Document, *events: dict) -> None:
    """Apply one message of the browser as Panel's notebook handler does (``MimeRenderMixin._on_msg``)."""
    doc.hold()
    try:
        doc.apply_json_patch({"events": list(events)}, setter="browser")
    finally:
        doc.unhold()


def changed(model: Any, attr: str, new: Any) -> dict:
    return {"kind": "ModelChanged", "model": {"id": model.id}, "attr": attr, "new": new}


def gesture(page: ZooPage, kind: str, x0: float, y0: float, x1: float, y1: float, seq: int = 1) -> dict:
    """What the arena's JS writes for a click or a finished drag (``GESTURE_JS``)."""
    return changed(page.arena.sources["gesture"], "data",
                   {"kind": [kind], "x0": [x0], "y0": [y0], "x1": [x1], "y1": [y1], "seq": [seq]})


def test_a_face_chosen_with_the_drag_in_one_message_is_the_flicks_face(notebook_page):
    page, doc, face = notebook_page
    s = page.session
    length = 1.3 * DRAG_MM_PER_M_S
    from_browser(doc, changed(face, "active", face.labels.index("back")),
                 gesture(page, "drag", 9.5, 150.0, 9.5 + length, 150.0))
    assert page.flick.face.value == "back"
    assert s.face == "back"
    assert s.speed == pytest.approx(1.3) and s.direction == pytest.approx(0.0)
    assert "face=back" in s.notice.text, s.notice.text
    assert page.flick.commit_flick(), s.notice.text
    assert s.log[-1]["text"].startswith("flick C2 from W-dot face=back"), s.log[-1]["text"]


def test_a_click_in_one_message_with_a_widget_change_gets_both(notebook_page):
    """A click on the arena after a change of a widget, in one message: the change first, then the click."""
    page, doc, face = notebook_page
    s = page.session
    from_browser(doc, changed(face, "active", face.labels.index("tail")),
                 gesture(page, "tap", *za.bench_xy(s.state.to_move, 0), *za.bench_xy(s.state.to_move, 0)))
    assert s.face == "tail" and s.die == "C1"


def test_two_clicks_on_one_spot_are_two_clicks(notebook_page):
    """The same click twice (the seq tells them apart): choosing C1 twice keeps C1; a die then the dot."""
    page, doc, _face = notebook_page
    s = page.session
    c1 = za.bench_xy(s.state.to_move, 0)
    from_browser(doc, gesture(page, "tap", *c1, *c1, seq=1))
    from_browser(doc, gesture(page, "tap", -10.0, 150.0, -10.0, 150.0, seq=2))
    assert (s.die, s.spot) == ("C1", "W-dot")


def test_bokeh_event_callbacks_in_a_notebook_drop_a_change_of_the_same_message():
    """Why the arena does not use ``fig.on_event``: Panel's notebook push after a Bokeh event's Python callback
    drops a widget change held from the same message. If a Panel upgrade fixes it, this test says so."""
    from bokeh.events import PanStart
    from bokeh.plotting import figure

    seen: list[str] = []
    fig = figure(tools="pan")
    fig.on_event(PanStart, lambda _e: seen.append("panstart"))
    radio = pn.widgets.RadioButtonGroup(options=["head", "back"], value="head")
    doc = Document()
    root = pn.Column(pn.pane.Bokeh(fig), radio).get_root(doc, Comm())
    doc.add_root(root)
    button = next(m for m in root.select({"type": RadioButtonGroup}))
    press = {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {"type": "event", "name": "panstart",
             "values": {"type": "map", "entries": [["model", {"id": fig.id}], ["sx", 0.0], ["sy", 0.0], ["x", 1.0],
                                                    ["y", 1.0], ["modifiers", {"type": "map", "entries": []}]]}}}
    from_browser(doc, changed(button, "active", 1), press)
    assert seen == ["panstart"]
    assert radio.value == "head", "Panel now keeps the change: the arena could use fig.on_event again"


@pytest.mark.no_event_loop  # asyncio.run needs a thread without Playwright's running loop
def test_a_heat_map_click_in_one_message_with_a_widget_change_gets_both(notebook_page):
    """The expected-points map's clicks come the arena's way too: a face chosen and a cell of the map clicked, in
    one message, give the face and the aim of that cell (the map's nearest cell to the click)."""
    import asyncio

    page, doc, face = notebook_page
    s = page.session
    assert s.choose_die("C1") and s.launch_spot("S-dot") and s.propose_flick(0.0, 1.2), s.notice.text
    asyncio.run(page.odds._map())
    grid = page.odds.grid
    assert grid is not None and len(grid) > 0, page.odds.why_not
    k = len(grid) // 3
    cell = (float(grid["direction"][k]), float(grid["speed"][k]))
    assert cell != (s.direction, s.speed)
    click = changed(page.odds.heat_click, "data", {"kind": ["tap"], "x0": [cell[0] + 1.0], "y0": [cell[1] + 0.01],
                                                   "x1": [cell[0] + 1.0], "y1": [cell[1] + 0.01], "seq": [1]})
    from_browser(doc, changed(face, "active", face.labels.index("back")), click)
    assert s.face == "back"
    assert (s.direction, s.speed) == cell, s.notice.text

"""The heat map's title is shown whole: a caption over the map that wraps (a Bokeh title is one line, and a long
one, such as how far the mapping is, was cut off at the figure's edge)."""

from __future__ import annotations

from apps.zoo import ZooPage, views


def test_the_heat_maps_whole_title_is_in_its_caption_and_the_one_line_title_is_not_drawn() -> None:
    p = ZooPage(background=False)
    odds = p.odds
    odds.param.update(cells=66, mapped=2, why_not="")
    title = views.heat_title(odds.grid, "", 2, 66, odds.shown_measure())
    assert title == "Caging odds by aim: mapping… 2 of 66 cells"
    assert odds.heat.title.text == title and not odds.heat.title.visible
    assert f">{title}</div>" in odds.heat_caption.object
    odds.why_not = 'P2 <Elephant> & "co" is played by the computer: no odds are worked out for its flick.'
    assert "P2 &lt;Elephant&gt; &amp; &quot;co&quot; is played by the computer: no odds are worked out for its " \
           "flick." in odds.heat_caption.object  # whole, and escaped
    assert odds.heat_caption.width == odds.heat.width

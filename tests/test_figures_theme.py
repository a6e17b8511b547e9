"""Projector mode (``pvnviz.figures.theme.projector``): every text of a figure grows, not only its title and lines,
and a title wraps to lines a projected half-width figure holds."""

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pvnviz.figures import theme


def _figure() -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=["left", "right"])
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], name="a legend entry"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], name="another"), row=1, col=2)
    fig.update_xaxes(title_text="x")
    fig.update_yaxes(title_text="y")
    return theme.style(fig, "A title long enough that a projected half-width figure cannot hold it on one line")


def test_projector_scales_ticks_legend_and_axis_titles_of_every_axis():
    fig = theme.projector(_figure()).to_plotly_json()["layout"]
    scale = theme.PROJECTOR_SCALE
    for axis in ("xaxis", "xaxis2", "yaxis", "yaxis2"):
        assert fig[axis]["tickfont"]["size"] == theme.SMALL_PX * scale  # the page's 12 px ticks, scaled
        assert fig[axis]["title"]["font"]["size"] == theme.AXIS_TITLE_PX * scale
    assert fig["legend"]["font"]["size"] == theme.SMALL_PX * scale
    assert fig["title"]["font"]["size"] == theme.TITLE_PX * scale
    assert all(a["font"]["size"] >= theme.FONT["size"] * scale * 0.9 for a in fig["annotations"])  # panel titles


def test_projector_wraps_a_long_title_and_makes_room_for_it():
    plain = _figure().to_plotly_json()["layout"]
    big = theme.projector(_figure()).to_plotly_json()["layout"]
    lines = big["title"]["text"].split("<br>")
    assert len(lines) >= 3 and all(len(line) <= theme.TITLE_CHARS / theme.PROJECTOR_SCALE for line in lines)
    assert " ".join(lines) == plain["title"]["text"]
    line_px = theme.TITLE_LINE * theme.TITLE_PX * theme.PROJECTOR_SCALE
    assert big["margin"]["t"] >= plain["margin"]["t"] + (len(lines) - 1) * line_px
    assert big["height"] > plain["height"] * 1.25


def test_wrap_title_breaks_at_spaces_and_rewraps_breaks():
    assert theme.wrap_title("one two three", 7) == ["one two", "three"]
    assert theme.wrap_title("one<br>two three", 40) == ["one two three"]
    assert theme.wrap_title("unbreakable-word", 4) == ["unbreakable-word"]


def test_projector_leaves_room_for_panel_titles_under_the_title():
    """The title is centred in the top margin; panel titles sit at its bottom: the margin holds both."""
    big = theme.projector(_figure()).to_plotly_json()["layout"]
    lines = len(big["title"]["text"].split("<br>"))
    title_block = lines * theme.TITLE_LINE * big["title"]["font"]["size"]
    panel_titles = theme.TITLE_LINE * big["annotations"][0]["font"]["size"]
    assert big["margin"]["t"] >= title_block + 2 * panel_titles


def test_a_wide_figure_keeps_longer_projector_title_lines():
    fig = go.Figure()
    theme.style(fig, "Fig. 1: a Policy Evaluation Network with network fingerprinting", wide=True)
    lines = theme.projector(fig).layout.title.text.split("<br>")
    assert len(lines) == 2 and max(map(len, lines)) > theme.TITLE_CHARS / theme.PROJECTOR_SCALE

"""pvnviz.figures.frames: an animation sent as its first frame plus each frame's changes rebuilds every frame
exactly (the browser player applies the changes the same way: tests/conftest.frame_figures)."""

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest

from conftest import frame_figures
from pvnviz.figures.frames import animation

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it


def _frame(t: int) -> dict[str, go.Figure]:
    x = np.linspace(0, 1, 11)
    line = go.Figure([go.Scatter(x=x, y=np.sin(x + t), name="moving"), go.Scatter(x=[0, 1], y=[0, 1], name="still")])
    line.update_layout(title=f"step {t}", shapes=[dict(type="line", x0=t, x1=t, y0=0, y1=1)])
    if t == 2:
        line.data[1].update(marker=dict(color="red"))  # a property only one frame sets
    bars = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    return {"line": line, "bars": bars}


def _plain(fig: go.Figure) -> dict:
    return json.loads(plotly.io.json.to_json_plotly(fig.to_plotly_json()))


def test_every_frame_is_rebuilt_exactly_and_unchanged_figures_send_nothing():
    anim = animation(_frame, 4, labels=[f"s{t}" for t in range(4)])
    assert anim["labels"] == ["s0", "s1", "s2", "s3"] and anim["frames"][0] == {}
    player = {"animation": anim, "frame": 0}
    for t in range(4):
        rebuilt = frame_figures(player, t)
        for name, fig in _frame(t).items():
            want = _plain(fig)
            got = rebuilt[name]
            assert [{k: v for k, v in tr.items() if v is not None} for tr in got["data"]] == want["data"], (t, name)
            assert {k: v for k, v in got["layout"].items() if v is not None} == want["layout"], (t, name)
    assert all("bars" not in frame for frame in anim["frames"])  # the bars never change: never re-sent
    assert set(anim["frames"][1]["line"]["traces"]) == {"0"}  # only the moving trace
    assert anim["frames"][2]["line"]["traces"]["1"] == {"marker": {"color": "red"}}  # changes are against frame 0
    assert "1" not in anim["frames"][3]["line"]["traces"]


def test_frames_with_other_traces_or_figures_are_refused():
    with pytest.raises(ValueError, match="same traces"):
        animation(lambda t: {"f": go.Figure([go.Scatter(y=[1])] * (t + 1))}, 2)
    with pytest.raises(ValueError, match="draws"):
        animation(lambda t: {f"f{t}": go.Figure()}, 2)
    with pytest.raises(ValueError, match="labels"):
        animation(lambda t: {"f": go.Figure()}, 2, labels=["one"])

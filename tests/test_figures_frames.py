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


def test_distribution_frames_equal_one_distribution_figure_per_policy():
    """The validation player's frames, given as changes (no figure built per frame), draw what building each
    policy's distribution_figure would."""
    from conftest import array
    from pvnviz.core.histogram import ReturnBins
    from pvnviz.figures.experiment import distribution_figure, distribution_frames

    rng = np.random.default_rng(3)
    bins = ReturnBins(0.0, 100.0, 11)
    targets = rng.dirichlet(np.ones(11), size=5)
    predicted = {"fingerprint": rng.dirichlet(np.ones(11), size=5), "flattened": rng.dirichlet(np.ones(11), size=5)}
    numbers = [4, 9, 17, 30, 41]
    anim = distribution_frames(bins, targets, predicted, numbers, projector=False)
    assert anim["labels"] == [str(n) for n in numbers]
    for k, number in enumerate(numbers):
        shown = frame_figures({"animation": anim, "frame": k}, k)["policy"]
        built = _plain(distribution_figure(bins, targets[k], {m: p[k] for m, p in predicted.items()}, ""))
        assert shown["layout"]["title"]["text"] == f"Policy #{number}: return distribution"
        for drawn, expected in zip(shown["data"], built["data"], strict=True):
            assert drawn["name"] == expected["name"]
            assert array(drawn["y"]) == pytest.approx(array(expected["y"]), abs=1e-7)  # float32 after frame 0


@pytest.mark.parametrize("run", ["cartpole-quick", "swimmer-paper"])
def test_replay_frames_equal_a_replay_figure_per_time_step_for_every_start(run):
    """The replay player's frames, given as changes (no figure built per frame: 40x faster; the first frame built
    once and refilled for every other start), draw what building ``replay_figure`` at each of its time steps does,
    for every start; for CartPole's side-by-side panels and Swimmer's stacked ones (fitted aspect)."""
    from conftest import array
    from pvnviz.envs.registry import get_env
    from pvnviz.figures.replay import replay_figure, replay_steps, replay_variants
    from pvnviz.runs.files import load_result

    result = load_result(f"data/{run}")
    trace = next(iter(result.traces.values()))
    replays, titles = {}, {}
    for start in range(3):
        pair = np.stack([trace.params[0, start], trace.best_params[start]])
        replays[start] = get_env(result.config.env).replay(result.config.arch(), pair, result.config.horizon, 0)
        titles[start] = [f"before {start}", f"after {start}"]
    made = replay_variants(replays, titles, "r")
    for start, replay in replays.items():
        steps = replay_steps(replay)
        anim = made[start]
        assert anim["labels"] == [str(s) for s in steps] and len(steps) > 10
        for k, step in enumerate(steps):
            shown = frame_figures({"animation": anim, "frame": k}, k)["r"]
            built = _plain(replay_figure(replay, titles[start], frame=step))
            assert shown["layout"] == built["layout"], (start, step)
            for drawn, expected in zip(shown["data"], built["data"], strict=True):
                for key in set(drawn) | set(expected):
                    if key in ("x", "y"):
                        assert array(drawn[key]) == array(expected[key]), (start, step, key)
                    else:
                        assert drawn.get(key) == expected.get(key), (start, step, key)

"""The replay player's frames (``pvnviz.figures.replay.replay_variants``), given as changes against the first
frame, draw what ``replay_figure`` builds at each time step, for every start (tests/conftest.frame_figures
applies the changes as the browser player does)."""

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest

from conftest import frame_figures

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it


def _plain(fig: go.Figure) -> dict:
    return json.loads(plotly.io.json.to_json_plotly(fig.to_plotly_json()))


@pytest.mark.parametrize("run", ["cartpole-quick", "swimmer-budget-2000x5"])
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
        replays[start] = get_env(result.config.env_name).replay(result.config.arch(), pair, result.config.horizon, 0)
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

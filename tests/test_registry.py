"""A new environment is one module plus presets: the whole pipeline runs on it with no other edit.

tests/toy_env.py registers as "line"; the CLI runs Algorithms 1-3 on it, writes a run, and the run opens.
The references are the environment's own facts: a return is an episode's length, at most the horizon;
the dataset's env-step count is the sum of its returns; the ascent's scores re-measure on fresh episodes.
"""

import numpy as np
import pytest
import toy_env

from conftest import frame_figures, players
from pvnviz.cli.main import main
from pvnviz.envs import registry as envs
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import ExperimentConfig
from pvnviz.runs.presets import PRESETS

SETTINGS = dict(
    env_name="line",
    policy_hidden=(8,),
    num_policies=80,
    num_episodes=4,
    horizon=60,
    return_limit=None,
    num_bins=11,
    num_probes=4,
    train_steps=150,
    num_starts=2,
    ascent_steps=20,
    eval_every=10,
    eval_episodes=4,
    fresh_episodes=8,
)


@pytest.fixture
def line(monkeypatch):
    envs.register("line", toy_env.batched_env)
    monkeypatch.setitem(PRESETS, "line", {"paper": lambda: ExperimentConfig(**SETTINGS)})
    yield
    envs.unregister("line")


def test_a_registered_environment_runs_end_to_end_through_the_cli(line, tmp_path, capsys):
    out = tmp_path / "line-run"
    assert main(["run", "line", "--preset", "paper", "--seed", "3", "--out", str(out), "--quiet"]) == 0
    result = load_result(out, "line")
    returns = result.dataset.returns
    assert returns.shape == (80, 4) and returns.min() >= 1 and returns.max() <= 60
    assert result.dataset.num_env_steps == int(returns.sum())  # reward 1 per step: a return is a length
    for mode in ("fingerprint", "flattened"):
        trace = result.traces[mode]
        assert trace.true_returns.shape == (3, 2) and np.all((trace.fresh_returns >= 1) & (trace.fresh_returns <= 60))
        assert result.trained[mode].val_loss[-1] < result.trained[mode].val_loss[0]  # the PVN learned something


def test_an_unregistered_environment_is_refused_by_name(capsys):
    assert main(["run", "line", "--out", "/tmp/never-written"]) == 2
    assert "unknown experiment 'line'" in capsys.readouterr().err


def _results_page(path: str) -> None:
    from pathlib import Path

    from pvnviz.runs.files import load_result
    from ui.results import render_results

    render_results(load_result(Path(path), "line"), "note")


@pytest.mark.slow
def test_a_registered_environment_shows_its_own_replay_on_the_results_page(line, tmp_path):

    from streamlit.testing.v1 import AppTest

    out = tmp_path / "line-run"
    assert main(["run", "line", "--preset", "paper", "--seed", "3", "--out", str(out), "--quiet"]) == 0
    at = AppTest.from_function(_results_page, args=(str(out),), default_timeout=120).run()
    assert not at.exception and not at.error
    replay = players(at)["line_replay"]
    assert [c["label"] for c in replay["choices"]] == ["Ascent through", "Start"]  # switched in the page
    assert len(replay["animation"]["variants"]) == 2 * 2  # both PVNs' two starts, sent once
    assert all(len(variant["frames"]) > 1 for variant in replay["animation"]["variants"].values())
    title = frame_figures(replay)["line_replay"]["layout"]["title"]["text"]
    assert title == "Replay: the point on its rail (time step 0)"  # toy_env.replay, drawn by the generic figure
    assert any("The point stays between the walls" in m.value for m in at.markdown)

"""The line an ascent must beat: the best kept policy re-measured on fresh episodes (``pvnviz.runs.pipeline.
kept_best_fresh``), against the same policy played in plain gymnasium, and its place in summary.json, the saved run
and the CLI's headline. With one episode a policy (Pendulum), the dataset's best return is the luckiest of K and far
above what the same policy returns again: the winner's curse the fresh line removes."""

import dataclasses
import json

import gymnasium
import numpy as np
import pytest

from pvnviz.cli.main import main
from pvnviz.core.policies import forward_numpy
from pvnviz.envs.gym_id import box_actions
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import run_experiment
from pvnviz.runs.presets import presets_for
from pvnviz.runs.store import RunError

ENV = "gym:Pendulum-v1"


def small_config():
    quick = presets_for(ENV)["quick"]()
    return dataclasses.replace(quick, num_policies=300, train_steps=50, ascent_steps=20, eval_every=10,
                               inputs=("fingerprint",), fresh_episodes=20)  # fmt: skip


@pytest.fixture(scope="module")
def result():
    return run_experiment(small_config(), seed=3)


def gymnasium_returns(arch, params: np.ndarray, episodes: int, seed: int) -> np.ndarray:
    """The policy in plain gymnasium: its deterministic tanh outputs mapped into the Box (as every Box policy here
    acts), one episode per reset seed ``seed + e``."""
    env = gymnasium.make("Pendulum-v1")
    low, high = env.action_space.low, env.action_space.high
    weights = np.asarray(params, dtype=np.float32)[None]
    returns = []
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        total, done = 0.0, False
        while not done:
            action = box_actions(forward_numpy(arch, weights, obs[None, None].astype(np.float32))[0, 0], low, high)
            obs, reward, terminated, truncated, _ = env.step(action.astype(np.float32))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return np.asarray(returns)


def test_the_fresh_line_is_the_best_kept_policy_played_again(result):
    """The fresh return of the best kept policy agrees with 200 plain-gymnasium episodes of the same policy (within
    4 standard errors of the difference), and is far below its one lucky dataset episode."""
    summary = result.summary()
    fresh = summary["kept_best_fresh_return"]
    kept = np.flatnonzero(result.split.kept)
    best = kept[np.argmax(result.dataset.mean_returns[kept])]
    assert result.dataset.mean_returns[best] == summary["kept_best_mean_return"]
    played = gymnasium_returns(result.config.arch(), result.dataset.params[best], 200, seed=10_000)
    error = np.hypot(played.std() / np.sqrt(len(played)), played.std() / np.sqrt(result.config.fresh_episodes))
    print(f"dataset return {summary['kept_best_mean_return']:.1f}, fresh {fresh:.1f}, gymnasium {played.mean():.1f}")
    assert abs(fresh - played.mean()) < 4 * error
    assert summary["kept_best_mean_return"] > played.mean() + 4 * played.std() / np.sqrt(len(played))
    assert summary["kept_best_mean_return"] - played.mean() > 200  # docs/beyond.md: "by hundreds on Pendulum-v1"


def test_the_fresh_line_is_saved_loaded_and_printed(tmp_path, capsys):
    out = tmp_path / "run"
    sets = ["--set", "num_policies=300", "--set", "train_steps=50", "--set", "ascent_steps=20", "--set",
            "eval_every=10", "--set", "inputs=fingerprint", "--set", "fresh_episodes=20"]  # fmt: skip
    assert main(["run", ENV, "--preset", "quick", "--seed", "3", "--out", str(out), *sets]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    fresh = summary["kept_best_fresh_return"]
    assert f"({fresh:.1f} on fresh episodes)" in printed
    assert load_result(out).kept_best_fresh == fresh
    assert load_result(out).summary()["kept_best_fresh_return"] == fresh


def test_a_run_without_fresh_episodes_has_no_fresh_line():
    config = dataclasses.replace(small_config(), fresh_episodes=0)
    assert "kept_best_fresh_return" not in run_experiment(config, seed=3).summary()


def test_a_summary_whose_fresh_line_is_not_a_number_is_refused(tmp_path):
    out = tmp_path / "run"
    sets = ["--set", "num_policies=300", "--set", "train_steps=50", "--set", "ascent_steps=20", "--set",
            "eval_every=10", "--set", "inputs=fingerprint"]  # fmt: skip
    assert main(["run", ENV, "--preset", "quick", "--seed", "3", "--out", str(out), *sets]) == 0
    summary = json.loads((out / "summary.json").read_text())
    summary["kept_best_fresh_return"] = "high"
    (out / "summary.json").write_text(json.dumps(summary))
    from pvnviz.runs.store import write_manifest

    write_manifest(out)
    with pytest.raises(RunError, match="kept_best_fresh_return is not a number"):
        load_result(out)

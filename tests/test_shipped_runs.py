"""The runs shipped in ``data/``: each opens, matches its preset and its summary, has a manifest that checks out,
stays small; the CartPole beyond run's chosen policies score in plain gymnasium what the run says."""

import json
from pathlib import Path

import numpy as np
import pytest

from pvnviz.runs.budget import StepBudget
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.files import load_result
from pvnviz.runs.presets import PRESETS
from pvnviz.runs.store import MANIFEST, read_run

ROOT = Path(__file__).resolve().parents[1]
SWIMMER_SHIPPED = {
    "budget-2000x5": ROOT / "data" / "swimmer-budget-2000x5",
    "budget-10000x1": ROOT / "data" / "swimmer-budget-10000x1",
}


def test_shipped_paper_scale_swimmer_runs_are_small():
    size = sum(f.stat().st_size for run in SWIMMER_SHIPPED.values() for f in run.rglob("*") if f.is_file())
    assert size < 20 * 2**20, size


@pytest.mark.parametrize("preset", list(SWIMMER_SHIPPED))
def test_shipped_paper_scale_runs_open_and_match_their_presets(preset):
    result = load_result(SWIMMER_SHIPPED[preset], "swimmer")
    summary = json.loads((SWIMMER_SHIPPED[preset] / "summary.json").read_text())
    config = PRESETS["swimmer"][preset]()
    assert result.config == config
    assert result.dataset.returns.shape == (config.num_policies, config.num_episodes)
    assert summary["dataset_env_steps"] == 10_000_000  # the paper's environment budget
    np.testing.assert_allclose(
        result.traces["fingerprint"].best_returns.mean(),
        summary["inputs"]["fingerprint"]["best_mean_return"],
        rtol=1e-6,
    )


@pytest.mark.slow
def test_shipped_cartpole_beyond_run_checks_round_ends_until_the_cap_and_holds_in_gymnasium():
    """data/cartpole-beyond (seed 0): the current preset, 2 checks a round (its start and its end), rounds ended by
    the 25% cap; its chosen policies re-run in plain gymnasium score what the run says, and Algorithm 3's answer 90
    or more. The README and docs/beyond.md quote its two readings: the starts' fresh mean and the answer."""
    from gym_reference import cartpole_episode_returns

    folder = ROOT / "data" / "cartpole-beyond"
    result = load_result(folder, "cartpole")
    config = result.config
    assert config == PRESETS["cartpole"]["beyond"]()
    trace = result.traces["fingerprint"]
    rounds_run = len(trace.checked_steps) // 2
    ends = [[r * config.ascent_steps, (r + 1) * config.ascent_steps] for r in range(rounds_run)]
    np.testing.assert_array_equal(trace.checked_steps, np.ravel(ends))  # steps count on across rounds
    assert 10 < rounds_run < config.rounds  # the cap, not the round count, ended the rounds
    assert StepBudget(config).checks_per_round == 2
    # a CartPole return is its episode's length: the checks spent the sum of their returns times their episodes
    spent = round(trace.true_returns.sum() * config.eval_episodes) + trace.explore_env_steps
    cap = config.max_beyond_fraction * result.dataset.returns.sum()  # the dataset's steps, counted the same way
    # within the cap, and one more round at its most (2 checks a start, each episode the whole horizon) would not fit
    assert spent <= cap < spent + config.num_starts * 2 * config.eval_episodes * config.horizon
    episodes = 200
    gym = cartpole_episode_returns(config.arch(), trace.best_params, episodes, config.horizon, seed=11)
    error = np.sqrt(gym.var(axis=1, ddof=1) * (1 / config.fresh_episodes + 1 / episodes))
    assert np.all(np.abs(trace.fresh_returns - gym.mean(axis=1)) < 4 * error + 0.5), (trace.fresh_returns, gym.mean(1))
    k = trace.returned_start
    assert gym.mean(axis=1)[k] >= 90, (k, gym.mean(axis=1))
    starts, answer = float(np.mean(trace.fresh_returns)), float(trace.fresh_returns[k])
    (row,) = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| CartPole `beyond`")]
    assert f"seed 0 (the app's run): the 5 starts' {starts:.1f}, Algorithm 3's answer {answer:.1f}" in row
    text = " ".join((ROOT / "docs" / "beyond.md").read_text().split())
    each = ", ".join(f"{v:.1f}" for v in trace.fresh_returns)
    said = f"the 5 starts' fresh mean {starts:.1f} ({each}), Algorithm 3's answer {answer:.1f} (start {k + 1})"
    assert said in text
    others = np.delete(trace.true_returns[-2:], k, axis=1)  # the last round's two checks of the other starts
    assert f"ran {rounds_run} rounds" in text and others.max() < 100
    assert f"the other four starts were checked between {others.min():.1f} and {others.max():.1f}" in text
    flat = result.traces["flattened"]
    kf = flat.returned_start
    assert f"ends at {np.mean(flat.fresh_returns):.1f} (answer {flat.fresh_returns[kf]:.1f};" in text
    assert f"in plain gymnasium (200 episodes): {gym.mean():.1f} and {gym.mean(axis=1)[k]:.1f}" in text


def test_shipped_swimmer_beyond_run_opens_with_its_fresh_numbers():
    folder = ROOT / "data" / "swimmer-beyond"
    result = load_result(folder, "swimmer")
    summary = json.loads((folder / "summary.json").read_text())["inputs"]["fingerprint"]
    assert result.config == PRESETS["swimmer"]["beyond"]()
    trace = result.traces["fingerprint"]
    np.testing.assert_allclose(trace.fresh_returns, summary["fresh_return_per_start"], atol=1e-3)
    assert summary["check_env_steps"] <= 0.25 * 10_000_000
    assert trace.params.shape[:2] == trace.true_returns.shape  # re-runnable: (E, A, P) and (E, A)


@pytest.mark.slow
def test_shipped_runs_have_manifests_that_check_out():
    folders = [
        ROOT / "data" / n
        for n in ("cartpole-paper", "cartpole-quick", "swimmer-budget-2000x5", "swimmer-budget-10000x1")
    ]
    for folder in folders:
        info = read_run(folder)
        assert info.experiment in ("cartpole", "swimmer") and (folder / MANIFEST).is_file()


def test_saved_runs_in_data_still_load():
    for path in sorted((ROOT / "data").glob("*/dataset.npz")):
        dataset = PolicyDataset.load(path)
        assert dataset.params.shape[0] == dataset.returns.shape[0] > 0

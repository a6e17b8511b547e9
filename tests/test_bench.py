"""The benchmarks run and compare like with like (their speed numbers are printed, not asserted)."""

import numpy as np
import pytest

from pvnviz.bench import main
from pvnviz.bench.core import bench_cartpole, format_cartpole


@pytest.mark.slow
def test_cartpole_bench_measures_the_same_policies_on_both_sides():
    r = bench_cartpole(num_policies=200, num_episodes=20, horizon=100, baseline_episodes=10, pipeline=False)
    assert r["ours_env_steps"] > 0 and r["gymnasium_env_steps"] > 0
    # the same 200 policies: mean episode lengths agree within sampling noise
    assert abs(r["ours_mean_return"] - r["gymnasium_mean_return"]) < 0.1 * r["ours_mean_return"]
    assert "ratio ours/gymnasium" in format_cartpole(r)


def test_bench_cli_rejects_unknown_benchmarks(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["pong"])
    assert exit_info.value.code == 2


def test_bench_subcommands_refuse_bad_numbers_in_one_line(capsys):
    for argv in (["swimmer", "--num-policies", "0"], ["ray", "--horizon", "-1"],
                 ["cartpole", "--seed", "-2"], ["swimmer", "--num-episodes", "two"]):  # fmt: skip
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2, argv
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "error: argument --" in err, (argv, err)


def test_browser_benchmarks_run_as_their_own_program_and_refuse_bad_numbers_in_one_line(capfd):
    """``bench ui|load|redraw`` hand over to ``python -m browserbench`` (a child process): its status and one line."""
    for argv in (["ui", "--repeats", "0"], ["load", "--sessions", "0"], ["redraw", "--events", "0"]):
        assert main(argv) == 2, argv
        err = capfd.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "error: argument --" in err, (argv, err)


def test_swimmer_physics_limit_steps_gymnasiums_episodes():
    """The limit times the same physics as gymnasium: same resets, frame skip and episode length."""
    from gym_reference import swimmer as gymnasium_swimmer
    from pvnviz.bench.swimmer import physics_limit_steps_per_second

    weights = np.random.default_rng(5).normal(size=(2, 8))
    seen: list[np.ndarray] = []

    def control(step: int, observation: np.ndarray) -> np.ndarray:
        seen.append(observation.copy())
        return np.tanh(weights @ observation)

    physics_limit_steps_per_second(seconds=1e-9, control_fn=control, episode_length=4, seed=11)  # 10 steps
    env, expected = gymnasium_swimmer(), []
    observation, _ = env.reset(seed=11)
    for step in range(len(seen)):
        if step and step % 4 == 0:
            observation, _ = env.reset()  # the generator continues, as the limit's resets do
        expected.append(observation)
        observation = env.step(np.tanh(weights @ observation))[0]
    assert len(seen) == 10
    np.testing.assert_allclose(np.array(seen), np.array(expected), rtol=0, atol=1e-9)


@pytest.mark.slow
def test_swimmer_physics_limit_lies_between_gymnasium_and_four_times_it():
    """Per CPU second on one thread the bound beats gymnasium's loop (the same mj_step plus Python), but by
    less than the frame skip: counting mj_step calls as environment steps would put it 4x too high.
    Measured 1.6-2.0x on the 2-core dev machine; best of 3 each, alternating, so both see the same load."""
    import time

    from gym_reference import swimmer as gymnasium_swimmer
    from pvnviz.bench.swimmer import physics_limit_steps_per_second

    limits, gym_rates = [], []
    env = gymnasium_swimmer()
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _ in range(3):
        limits.append(physics_limit_steps_per_second(seconds=0.2, nthread=1))
        steps, started = 0, time.process_time()
        while time.process_time() - started < 0.2:
            terminated, truncated = env.step(rng.uniform(-1.0, 1.0, 2))[2:4]
            steps += 1
            if terminated or truncated:
                env.reset()
        gym_rates.append(steps / (time.process_time() - started))
    limit, gym = max(limits), max(gym_rates)
    assert gym < limit < 4 * gym, (limit, gym)


def test_load_ratios_compare_the_last_session_with_one_alone():
    """``bench load`` states "8 sessions on one seed in about one run's time" as the last of the 8 results against
    one session's; a session count with a timed-out session, or without one session measured, has no ratio."""
    from browserbench.loadstats import LoadResult, last_result, median_lines, ratio_lines, ratios

    one, eight = LoadResult(1, True, times=[10.0]), LoadResult(8, True, times=[11.0, 12.5, 11.5])
    timed_out = LoadResult(4, True, times=[9.0, None])
    assert last_result(eight) == 12.5 and last_result(timed_out) is None
    assert ratios({1: one, 4: timed_out, 8: eight}) == {8: pytest.approx(1.25)}
    assert ratios({8: eight}) == {} and ratios({1: LoadResult(1, True, times=[None]), 8: eight}) == {}
    assert last_result(LoadResult(8, True)) is None  # nothing measured
    lines, found = ratio_lines("run 1", {1: one, 4: timed_out, 8: eight})
    assert found == {8: pytest.approx(1.25)}
    assert lines == [
        "run 1: the last of 8 sessions at 1.25 times one session's",
        "run 1: no ratio for 4 sessions (a session timed out)",
    ]
    assert ratio_lines("run 2", {8: eight})[0] == ["run 2: no ratio for 8 sessions (one session was not measured)"]
    medians = median_lines("this checkout", [{8: 1.5}, {8: 1.1}, {}, {8: 1.6}])
    assert medians == [
        "this checkout: the last of 8 sessions at 1.50 times one session's (median of 3 of 4 runs: 1.10, 1.50, 1.60)"
    ]


def test_load_main_prints_each_runs_ratio_and_their_median(monkeypatch, capsys, tmp_path):
    """``bench load --sessions 1 8 --same-seed --repeat 3 --baseline DIR``: both checkouts in every run, the baseline
    first in every other run, each run's ratio per checkout and, over the runs, each checkout's median."""
    from browserbench import load
    from browserbench.loadstats import LoadResult

    lasts = iter([8.0, 8.0, 12.0, 16.0, 10.0, 10.0, 11.0, 12.0, 8.0, 9.0, 13.0, 9.0])  # in the order measured
    order = []

    def measure(root, sessions, same_seed, timeout_s):
        order.append((root.name, sessions))
        return LoadResult(sessions, same_seed, times=[next(lasts)] * sessions)

    monkeypatch.setattr(load, "measure", measure)
    monkeypatch.setattr(load, "report", lambda label, result, timeout_s: f"report {label} {result.sessions}")
    assert load.main(["--sessions", "1", "8", "--same-seed", "--repeat", "3", "--baseline", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    base, this = tmp_path.name, load.ROOT.name
    assert order == [(this, 1), (base, 1), (this, 8), (base, 8)] + [(base, 1), (this, 1), (base, 8), (this, 8)] + [
        (this, 1), (base, 1), (this, 8), (base, 8)
    ]
    assert "this checkout, run 1: the last of 8 sessions at 1.50 times one session's" in out
    assert "baseline, run 2: the last of 8 sessions at 1.10 times one session's" in out  # 11 / 10, measured first
    assert out[-2:] == [
        "this checkout: the last of 8 sessions at 1.50 times one session's (median of 3 of 3 runs: 1.20, 1.50, 1.62)",
        "baseline: the last of 8 sessions at 1.10 times one session's (median of 3 of 3 runs: 1.00, 1.10, 2.00)",
    ]

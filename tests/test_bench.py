"""The benchmarks run and compare like with like (their speed numbers are printed, not asserted)."""

from pvnviz.bench import bench_cartpole, format_cartpole, main


def test_cartpole_bench_measures_the_same_policies_on_both_sides():
    r = bench_cartpole(num_policies=200, num_episodes=20, horizon=100, baseline_episodes=10, pipeline=False)
    assert r["ours_env_steps"] > 0 and r["gymnasium_env_steps"] > 0
    # the same 200 policies: mean episode lengths agree within sampling noise
    assert abs(r["ours_mean_return"] - r["gymnasium_mean_return"]) < 0.1 * r["ours_mean_return"]
    assert "ratio ours/gymnasium" in format_cartpole(r)


def test_bench_cli_rejects_unknown_benchmarks(capsys):
    import pytest

    with pytest.raises(SystemExit) as exit_info:
        main(["pong"])
    assert exit_info.value.code == 2

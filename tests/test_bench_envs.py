"""``python -m pvnviz.bench envs`` counts the steps each way really takes, with the same policies on every side."""

import numpy as np
import pytest

from pvnviz.bench import envs, main


def test_rows_count_every_step_of_an_environment_that_never_ends():
    """Pendulum never terminates: every way steps K x B x T times, and the rows say so."""
    row = envs.bench_env("gym:Pendulum-v1", sizes=(3, 2, 7))
    assert row.make_vec.env_steps == row.generic.env_steps == 3 * 2 * 7
    assert row.batched is not None and row.batched.env_steps == 3 * 2 * 7
    assert "Pendulum-v1" in envs.format_rows([row])


def test_make_vec_loop_counts_each_sub_environments_first_episode_only():
    """MountainCar's episodes last 200 steps (its time limit) when the car never reaches the goal: asked for 250,
    the loop counts 200 per episode and stops, as the pipeline's rollout does."""
    import gymnasium

    from pvnviz.envs.families import generic_env
    from pvnviz.envs.gym_id import parse_env_name

    env = generic_env(parse_env_name("gym:MountainCar-v0?goal_velocity=0"))
    params = np.zeros((1, envs._arch(env).num_params), dtype=np.float32)  # softmax of zeros: uniform actions
    timed = envs.time_make_vec("gym:MountainCar-v0?goal_velocity=0", env, params, (1, 3, 250), seed=4)
    assert gymnasium.make("MountainCar-v0").spec.max_episode_steps == 200
    assert timed.env_steps == 3 * 200
    assert envs.time_pipeline(env, params, (1, 3, 250), seed=4).env_steps == 3 * 200


def test_bench_envs_refuses_an_environment_that_does_not_qualify_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["envs", "--steps", "0"])
    assert exit_info.value.code == 2
    assert main(["envs", "--ids", "NoSuchEnv-v9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "NoSuchEnv-v9" in err[-1], err


def test_each_way_keeps_its_fastest_repeat(monkeypatch):
    """Repeats are timed in turn and the fastest of each way is kept: a repeat slowed by the machine is dropped."""
    slow_then_fast = iter([envs.Timing(100, 2.0), envs.Timing(100, 1.0), envs.Timing(100, 4.0)])
    monkeypatch.setattr(envs, "time_make_vec", lambda *a, **k: next(slow_then_fast))
    row = envs.bench_env("gym:Pendulum-v1", sizes=(2, 1, 3), repeat=3)
    assert row.make_vec == envs.Timing(100, 1.0)
    assert envs.fastest([envs.Timing(10, 1.0), envs.Timing(30, 2.0)]) == envs.Timing(30, 2.0)


def speed_section() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "environments.md").read_text()
    start = text.index("## Speed")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_the_speed_table_is_one_run_of_the_benchmark_and_its_words_follow_it():
    """docs/environments.md's Speed table, as `python -m pvnviz.bench envs` prints it: every environment the
    benchmark runs by default, in its order and sizes, each ratio its row's rates divided; and the sentences
    under it quote the table's own ranges (rates are the machine's: measured, not re-derived here)."""
    section = speed_section()
    assert "`python -m pvnviz.bench envs`" in section
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ") and "-v" in line]
    assert [r[0].strip() for r in rows] == list(envs.DEFAULT_IDS)
    number = lambda cell: float(cell.split("(")[0].replace(",", ""))  # noqa: E731
    printed = lambda cell: cell.split("(")[1].rstrip("x) ")  # noqa: E731
    ratio = lambda cell: float(printed(cell))  # noqa: E731
    generic, batched = {}, {}
    for name, sizes, make_vec, gen, bat in ([c.strip() for c in r] for r in rows):
        k, b, t = envs.SIZES["classic" if name in envs.CLASSIC else "mujoco"]
        assert sizes == f"{k} x {b} x {t}", name
        for cell, into in ((gen, generic), (bat, batched)):
            decimals = len(printed(cell).split(".")[1])  # as the benchmark prints it: 2 for generic, 1 for batched
            assert f"{number(cell) / number(make_vec):.{decimals}f}" == printed(cell), (name, cell)
            into[name] = ratio(cell)
    assert f"{min(generic.values()):.2f}-{max(generic.values()):.2f}x of `make_vec` here" in section
    classic = [batched[n] for n in envs.CLASSIC]
    assert f"classic control families {min(classic):.0f}-{max(classic):.0f}x" in " ".join(section.split())
    if min(batched.values()) >= 3:
        assert "Every batched family is 3x gymnasium's vector environment or more in this run" in section

"""``python -m pvnviz.cli.compare``: the same environment-step budget for random search and the PVN:
a damaged comparison file is named by its line; a saved dataset is checked as the CLI does."""

from pathlib import Path

import pytest


def test_a_damaged_comparison_file_names_its_line(tmp_path):
    from pvnviz.baselines.compare import load_rows

    path = tmp_path / "rows.jsonl"
    path.write_text('{"method": "A", "seed": 1, "env_steps": 5, "fresh_mean": 1.0}\n{"method": "B"}\n')
    with pytest.raises(ValueError, match="line 2"):
        load_rows(path)


def test_compare_checks_a_saved_dataset_as_the_cli_does(monkeypatch, capsys):
    from pvnviz.cli import compare

    folder = str(Path(__file__).resolve().parents[1] / "data" / "swimmer-budget-10000x1")  # seed 0's dataset
    monkeypatch.setattr("sys.argv", ["compare", "--env", "swimmer", "--seed", "1", "--dataset-from", folder])
    with pytest.raises(SystemExit) as stop:
        compare.main()
    assert stop.value.code == 2 and "pass --seed 0" in capsys.readouterr().err


def test_compare_refuses_an_unknown_beyond_preset_in_one_line(capsys):
    from pvnviz.cli import compare

    with pytest.raises(SystemExit) as stop:
        compare.main(["--env", "swimmer", "--beyond", "nope", "--seed", "1"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--beyond" in err and "budget-ars" in err and len(err.strip().splitlines()) == 1


def test_compare_with_beyond_runs_that_preset_alone_and_ars_with_its_policy_shape(monkeypatch):
    """``beyond=PRESET``: best-of-random and that PVN preset (no zero-shot), then ARS given the PVN's env steps with
    the preset's linear policies: every Swimmer episode runs its whole horizon, so ARS stops at the first whole
    iteration (2 x 8 directions x horizon steps) at or past the PVN's budget."""
    import dataclasses

    from conftest import TINY_SWIMMER
    from pvnviz.baselines import compare as comparison
    from pvnviz.runs.presets import PRESETS

    tiny = dataclasses.replace(TINY_SWIMMER, policy_hidden=(), start_from="dataset", rounds=2, fresh_episodes=2)
    monkeypatch.setitem(PRESETS["swimmer"], "tiny-linear", lambda: tiny)
    rows = comparison.compare(3, "swimmer", beyond="tiny-linear", ars=("V1-t",))
    assert [r["method"] for r in rows] == ["PVN tiny-linear", "best of random policies", "ARS V1-t"]
    assert {r["policy"] for r in rows} == {"linear"}
    pvn, _, ars = rows
    per_iteration = 2 * comparison.SETTINGS["swimmer"].directions * tiny.horizon
    assert pvn["env_steps"] <= ars["env_steps"] < pvn["env_steps"] + per_iteration
    assert ars["env_steps"] % per_iteration == 0


def test_compare_set_overrides_the_pvn_preset_and_names_it_in_its_row(monkeypatch):
    """``--set KEY=VALUE`` reaches the PVN run (its checks then count as the override says) and the PVN row's
    method names it; a setting the presets refuse is one line on stderr, exit 2."""
    import dataclasses

    from conftest import TINY_SWIMMER
    from pvnviz.baselines import compare as comparison
    from pvnviz.runs.presets import PRESETS

    tiny = dataclasses.replace(TINY_SWIMMER, policy_hidden=(), start_from="dataset", rounds=1, fresh_episodes=2)
    monkeypatch.setitem(PRESETS["swimmer"], "tiny-linear", lambda: tiny)
    plain = comparison.compare(3, "swimmer", beyond="tiny-linear", ars=())
    more = comparison.compare(3, "swimmer", beyond="tiny-linear", ars=(), overrides=("eval_episodes=3",))
    assert [r["method"] for r in more] == ["PVN tiny-linear (eval_episodes=3)", "best of random policies"]
    dataset = plain[1]["env_steps"]  # every Swimmer episode runs the horizon: checks cost episodes x horizon
    assert (more[0]["env_steps"] - dataset) * tiny.eval_episodes == (plain[0]["env_steps"] - dataset) * 3
    assert plain[0]["method"] == "PVN tiny-linear"


def test_compare_refuses_a_setting_the_preset_refuses_in_one_line(capsys):
    from pvnviz.cli import compare

    with pytest.raises(SystemExit) as stop:
        compare.main(["--env", "swimmer", "--set", "round_budget=sometimes", "--seed", "1"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "round_budget must be one of at_most, measured" in err
    assert len(err.strip().splitlines()) == 1

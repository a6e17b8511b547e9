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

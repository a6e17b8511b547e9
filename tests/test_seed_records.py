"""``python -m pvnviz.runs.seed_records``: one record a seed of a preset run, with the settings it overrode."""

from __future__ import annotations

import numpy as np

from pvnviz.runs.seed_records import main, preset_config, read_records

SMALL = ["num_policies=40", "num_episodes=3", "train_steps=30", "ascent_steps=10", "eval_every=5", "num_starts=2"]


def test_set_overrides_the_preset_and_the_record_says_so(tmp_path):
    out = tmp_path / "records.jsonl"
    assert main(["cartpole", "quick", "3-4", "--inputs", "fingerprint", *sum((["--set", s] for s in SMALL), []),
                 "--out", str(out)]) == 0  # fmt: skip
    records = read_records(out)
    assert [r["seed"] for r in records] == [3, 4]
    assert all(r["preset"] == "quick" and r["set"] == SMALL and list(r["inputs"]) == ["fingerprint"] for r in records)
    chosen = np.array(records[0]["inputs"]["fingerprint"]["chosen_params"])
    config = preset_config("cartpole", "quick", ("fingerprint",), tuple(SMALL))
    assert chosen.shape == (2, config.arch().num_params) and config.num_policies == 40


def test_a_bad_setting_is_one_line_and_exit_2_before_any_run(tmp_path, capsys):
    out = tmp_path / "records.jsonl"
    assert main(["cartpole", "beyond", "0", "--set", "share_best=perhaps", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("--set: ") and "share_best" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()

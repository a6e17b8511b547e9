"""Fig. 5 at a glance (pvnviz/figures/starts.py): one column of start dots per run, its mean, the dataset's best
and the baselines, from the runs' summaries."""

import json
from pathlib import Path

import numpy as np

from pvnviz.figures.roles import roles
from pvnviz.figures.starts import StartsColumn, column_from_summary, starts_figure

ROOT = Path(__file__).resolve().parents[1]


def test_each_run_is_a_column_of_its_starts_with_its_mean_and_best():
    columns = [StartsColumn("a", np.array([1.0, 2.0, 6.0]), 5.0), StartsColumn("b", np.array([10.0, 20.0]))]
    fig = starts_figure(columns, {"DDPG 143": 143.0, "SAC 43": 43.0}, "title")
    found = roles(fig)
    assert list(found) == ["starts:0", "starts:1"]
    a, b = fig.data[found["starts:0"]], fig.data[found["starts:1"]]
    np.testing.assert_array_equal(a.y, [1.0, 2.0, 6.0])
    assert np.all(np.abs(np.asarray(a.x) - 0) < 0.5) and np.all(np.abs(np.asarray(b.x) - 1) < 0.5)  # own column
    means = [t for t in fig.data if t.name == "mean of the starts"]
    assert [t.y[0] for t in means] == [3.0, 15.0]
    bests = [t for t in fig.data if t.name == "best policy of the dataset"]
    assert [t.y[0] for t in bests] == [5.0]  # only the run that knows its dataset's best
    assert sorted(s.y0 for s in fig.layout.shapes) == [43.0, 143.0]
    assert {a.text for a in fig.layout.annotations} >= {"DDPG 143", "SAC 43"}
    assert list(fig.layout.xaxis.ticktext) == ["a", "b"]
    assert fig.layout.yaxis.title.text and fig.layout.title.text == "title"


def test_a_column_from_a_shipped_summary():
    summary = json.loads((ROOT / "data" / "swimmer-beyond" / "summary.json").read_text())
    column = column_from_summary("beyond", summary)
    np.testing.assert_array_equal(column.fresh_returns, summary["inputs"]["fingerprint"]["fresh_return_per_start"])
    assert column.best == summary["dataset_best_mean_return"]


def test_a_run_with_a_fresh_best_kept_draws_that_line_named_for_it():
    """Where a run re-measured its best kept policy, its column's line is that fresh value (what its fresh starts
    compare with), not the dataset return; a run without it keeps the dataset's best; each name once in the legend."""
    shipped = json.loads((ROOT / "data" / "swimmer-beyond" / "summary.json").read_text())
    fresh = {**shipped, "kept_best_fresh_return": shipped["kept_best_mean_return"] - 50.0}
    columns = [column_from_summary(label, s) for label, s in [("old", shipped), ("new", fresh), ("new2", fresh)]]
    assert columns[1].best == fresh["kept_best_fresh_return"] != shipped["dataset_best_mean_return"]
    assert columns[0].best_label == "best policy of the dataset"
    fig = starts_figure(columns, {}, "title")
    lines = {t.name: [] for t in fig.data if "best" in t.name}
    for t in fig.data:
        if t.name in lines:
            lines[t.name].append((t.y[0], t.showlegend))
    again = fresh["kept_best_fresh_return"]
    assert lines == {
        "best policy of the dataset": [(shipped["dataset_best_mean_return"], True)],
        "best kept policy, fresh episodes": [(again, True), (again, False)],
    }

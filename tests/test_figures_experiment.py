"""Figures of the environment experiments (pvnviz/figures/experiment.py, and its ascent figure,
pvnviz/figures/ascent.py): they find their traces by role
(plotly's ``meta``, pvnviz/figures/roles.py), so renaming a legend entry breaks nothing; the ascent figure's
baseline labels, the loss curve's log axis; the validation player's frames, given as changes, draw what
``distribution_figure`` builds (tests/conftest.frame_figures applies them as the browser player does)."""

import copy
import json
import math
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest

from conftest import frame_figures
from pvnviz.figures import ascent, theme
from pvnviz.figures import experiment as figs
from pvnviz.figures.roles import roles, trace_index
from pvnviz.runs.files import load_result

MODES = ("fingerprint", "flattened")


def _ascents(modes=MODES) -> dict:
    """What ``ascent_figure`` reads of an AscentTrace: 3 scored steps x 4 starts per PVN, all different."""
    rng = np.random.default_rng(0)
    steps = np.array([0, 50, 100])
    return {m: SimpleNamespace(checked_steps=steps, true_returns=rng.uniform(0, 100, (3, 4))) for m in modes}


def test_highlight_start_finds_its_lines_by_role_whatever_their_names():
    ascents = _ascents()
    fig = ascent.ascent_figure(ascents, return_limit=30.0)
    for trace in fig.data:
        trace.update(name="renamed", legendgroup="regrouped")  # legend text and groups are free to change
    ascent.highlight_start(fig, 2)
    lit = [i for i, trace in enumerate(fig.data) if trace.line.color == theme.HIGHLIGHT]
    assert lit == [trace_index(fig, ascent.start_role(mode, 2)) for mode in MODES]
    for index, mode in zip(lit, MODES):  # the replayed start's own returns, in each PVN's panel
        assert list(fig.data[index].y) == pytest.approx(ascents[mode].true_returns[:, 2])
        assert fig.data[index].name == "start 3 (replayed)"
    assert [fig.data[i].showlegend for i in lit] == [True, False]  # one legend entry


def test_highlight_start_on_plotly_json_equals_it_on_the_figure_and_leaves_the_json_as_it_was():
    ascents = _ascents()
    built = ascent.ascent_figure(ascents, return_limit=None)
    shared = ascent.ascent_figure(ascents, return_limit=None).to_plotly_json()  # as shared between sessions
    before = copy.deepcopy(shared)
    for start in (0, 2):
        fig = ascent.ascent_figure(ascents, return_limit=None)
        assert ascent.highlight_start(shared, start) == ascent.highlight_start(fig, start).to_plotly_json()
    assert shared == before == built.to_plotly_json()


def test_highlight_start_without_a_replay_or_with_one_pvn():
    fig = ascent.highlight_start(ascent.ascent_figure(_ascents(), return_limit=None), -1)
    assert not any(trace.line.color == theme.HIGHLIGHT for trace in fig.data)
    ascents = _ascents(("flattened",))
    fig = ascent.highlight_start(ascent.ascent_figure(ascents, return_limit=None), 0)
    (lit,) = [trace for trace in fig.data if trace.line.color == theme.HIGHLIGHT]
    assert list(lit.y) == pytest.approx(ascents["flattened"].true_returns[:, 0]) and lit.showlegend


def test_each_ascent_line_has_its_own_role():
    fig = ascent.ascent_figure(_ascents(), return_limit=30.0)
    found = roles(fig)
    assert len(found) == len(fig.data) == 2 * (4 + 2)  # 4 starts, the mean and the best so far, per PVN
    assert {f"mean:{mode}" for mode in MODES} | {f"best:{mode}" for mode in MODES} <= set(found)


def test_the_ascent_shows_the_best_check_so_far_which_never_falls():
    """A saw-tooth of checks reads as improvement through the mean over starts of each start's best so far."""
    checks = np.array([[10.0, 40.0], [30.0, 20.0], [5.0, 50.0], [20.0, 10.0]])  # (checks, starts)
    steps = np.array([0, 10, 20, 30])
    fig = ascent.ascent_figure({"fingerprint": SimpleNamespace(checked_steps=steps, true_returns=checks)}, None)
    best = fig.data[roles(fig)["best:fingerprint"]]
    assert list(best.y) == pytest.approx([25.0, 35.0, 40.0, 40.0])  # (10,40) (30,40) (30,50) (30,50), averaged
    assert best.line.shape == "hv" and "best check so far" in best.name and list(best.x) == list(steps)


def test_probes_frames_move_the_probing_states_found_by_role():
    snaps = np.random.default_rng(1).normal(size=(4, 3, 2))  # (S, n, obs_dim)
    trained = SimpleNamespace(probe_snapshots=snaps, snapshot_steps=[0, 10, 20, 30])
    env = SimpleNamespace(state_bounds=[(-1.0, 1.0), None], state_labels=["x", "v"], obs_dim=2)
    fig = figs.probes_animation(trained, env, (0, 1))
    now = trace_index(fig, figs.PROBES_NOW)
    assert list(fig.data[trace_index(fig, figs.PROBES_START)].x) == pytest.approx(snaps[0, :, 0])
    for s, frame in enumerate(fig.frames):
        assert frame.traces == (now,)
        assert list(frame.data[0].x) == pytest.approx(snaps[s, :, 0])
        assert list(frame.data[0].y) == pytest.approx(snaps[s, :, 1])


def test_distribution_frames_change_each_trace_by_role():
    from pvnviz.core.histogram import ReturnBins

    rng = np.random.default_rng(2)
    targets = rng.dirichlet(np.ones(5), size=3)
    predicted = {m: rng.dirichlet(np.ones(5), size=3) for m in ("flattened", "fingerprint")}  # any order
    anim = figs.distribution_frames(ReturnBins(0.0, 1.0, 5), targets, predicted, [7, 8, 9], projector=False)
    first = anim["figures"]["policy"]
    changed = anim["frames"][2]["policy"]["traces"]
    assert changed[str(trace_index(first, "empirical"))]["y"] == pytest.approx(targets[2])
    for mode, probs in predicted.items():
        assert changed[str(trace_index(first, f"predicted:{mode}"))]["y"] == pytest.approx(probs[2], abs=1e-7)


def test_a_role_names_one_trace():
    with pytest.raises(KeyError, match="'mean:fingerprint'"):
        trace_index({"data": [{"meta": "mean:flattened"}]}, "mean:fingerprint")
    with pytest.raises(ValueError, match="two traces"):
        roles({"data": [{"meta": "start"}, {"meta": "start"}]})


@pytest.fixture(scope="module")
def quick_run():
    return load_result("data/cartpole-quick", "cartpole")


@pytest.mark.slow
def test_ascent_figure_labels_neither_placeholder_nor_overlapping(quick_run):
    baselines = {"DDPG 143": 143.0, "PPO 117": 117.0, "TD3 91": 91.0, "VPG 52": 52.0, "SAC 43": 43.0}
    fig = ascent.ascent_figure(quick_run.traces, 30.0, 29.9, baselines, "Spinning Up baselines")
    texts = [a.text for a in fig.layout.annotations]
    assert "new text" not in texts  # plotly's placeholder for an annotation without text (flattened panel)
    labels = sorted((a.y, a.text) for a in fig.layout.annotations if a.text in baselines)
    assert [t for _, t in labels] == ["SAC 43", "VPG 52", "TD3 91", "PPO 117", "DDPG 143"]
    ys = [y for y, _ in labels]
    assert min(np.diff(ys)) >= 0.06 * (max(ys) - min(ys)) * 0.99  # at least one text line apart
    assert fig.layout.margin.r >= 80  # in the right margin, not clipped


@pytest.mark.slow
def test_ascent_figure_draws_each_reference_line_across_each_panel_as_add_hline_does(quick_run):
    """The reference lines are built as shapes directly (fig.add_hline copied every shape per call); checked
    against plotly's own add_hline on the same figure without them."""
    baselines = {"DDPG 143": 143.0, "SAC 43": 43.0}
    fig = ascent.ascent_figure(quick_run.traces, 30.0, 29.9, baselines, "Spinning Up baselines")
    bare = ascent.ascent_figure(quick_run.traces, None, None, None)
    assert len(quick_run.traces) == 2 and not bare.layout.shapes  # two panels, here with no lines
    for col in (1, 2):
        label = dict(annotation_text="training-set limit") if col == 1 else {}
        bare.add_hline(y=30.0, line=dict(color=theme.LIMIT, dash="dash", width=2), row=1, col=col, **label)
        label = dict(annotation_text="best kept policy", annotation_position="bottom right") if col == 1 else {}
        bare.add_hline(y=29.9, line=dict(color=theme.TRAIN, dash="dot", width=1.5), row=1, col=col, **label)
        for value in baselines.values():
            bare.add_hline(y=value, line=dict(color=theme.BASELINE, dash="dash", width=1), row=1, col=col)
    assert fig.to_plotly_json()["layout"]["shapes"] == bare.to_plotly_json()["layout"]["shapes"]
    notes = [a for a in fig.to_plotly_json()["layout"]["annotations"] if a["text"] not in baselines]
    assert notes == bare.to_plotly_json()["layout"]["annotations"]


@pytest.mark.slow
def test_loss_curve_uses_a_log_step_axis(quick_run):
    fig = figs.loss_figure(figs.trained_curves(quick_run.trained))
    assert fig.layout.xaxis.type == "log"
    assert min(min(t.x) for t in fig.data) >= 1


def _plain(fig: go.Figure) -> dict:
    return json.loads(plotly.io.json.to_json_plotly(fig.to_plotly_json()))


@pytest.mark.slow
def test_distribution_frames_equal_one_distribution_figure_per_policy():
    """The validation player's frames, given as changes (no figure built per frame), draw what building each
    policy's distribution_figure would."""
    from conftest import array
    from pvnviz.core.histogram import ReturnBins
    from pvnviz.figures.experiment import distribution_figure, distribution_frames

    rng = np.random.default_rng(3)
    bins = ReturnBins(0.0, 100.0, 11)
    targets = rng.dirichlet(np.ones(11), size=5)
    predicted = {"fingerprint": rng.dirichlet(np.ones(11), size=5), "flattened": rng.dirichlet(np.ones(11), size=5)}
    numbers = [4, 9, 17, 30, 41]
    anim = distribution_frames(bins, targets, predicted, numbers, projector=False)
    assert anim["labels"] == [str(n) for n in numbers]
    for k, number in enumerate(numbers):
        shown = frame_figures({"animation": anim, "frame": k}, k)["policy"]
        built = _plain(distribution_figure(bins, targets[k], {m: p[k] for m, p in predicted.items()}, ""))
        assert shown["layout"]["title"]["text"] == f"Policy #{number}: return distribution"
        for drawn, expected in zip(shown["data"], built["data"], strict=True):
            assert drawn["name"] == expected["name"]
            assert array(drawn["y"]) == pytest.approx(array(expected["y"]), abs=1e-7)  # float32 after frame 0


def test_the_returns_histogram_s_bins_hold_every_policy_the_best_included():
    """float32 mean returns (a gym: environment's) whose 40 bins of float32 width ended just short of the best policy:
    plotly drops a value past the bins' end, so the best policy, the one an ascent must beat, went missing."""
    means = np.array([-1.1870588, 71.74594, 128.8341, 222.51707] + [5.0] * 56, dtype=np.float32)
    dataset = SimpleNamespace(mean_returns=means)
    split = SimpleNamespace(kept=np.ones(len(means), bool))
    xbins = figs.returns_histogram(dataset, split, None).data[0].xbins
    last_edge = xbins.start + math.ceil((xbins.end - xbins.start) / xbins.size) * xbins.size  # plotly's bins' end
    assert xbins.start <= means.min() and float(means.max()) < last_edge

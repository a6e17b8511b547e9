"""Figures of the environment experiments (pvnviz/figures/experiment.py) find their traces by role (plotly's
``meta``, pvnviz/figures/roles.py), so renaming a legend entry breaks nothing."""

from types import SimpleNamespace

import numpy as np
import pytest

from pvnviz.figures import experiment as figs
from pvnviz.figures import theme
from pvnviz.figures.roles import roles, trace_index

MODES = ("fingerprint", "flattened")


def _ascents(modes=MODES) -> dict:
    """What ``ascent_figure`` reads of an AscentTrace: 3 scored steps x 4 starts per PVN, all different."""
    rng = np.random.default_rng(0)
    steps = np.array([0, 50, 100])
    return {m: SimpleNamespace(eval_steps=steps, true_returns=rng.uniform(0, 100, (3, 4))) for m in modes}


def test_highlight_start_finds_its_lines_by_role_whatever_their_names():
    ascents = _ascents()
    fig = figs.ascent_figure(ascents, return_limit=30.0)
    for trace in fig.data:
        trace.update(name="renamed", legendgroup="regrouped")  # legend text and groups are free to change
    figs.highlight_start(fig, 2)
    lit = [i for i, trace in enumerate(fig.data) if trace.line.color == theme.HIGHLIGHT]
    assert lit == [trace_index(fig, figs.start_role(mode, 2)) for mode in MODES]
    for index, mode in zip(lit, MODES):  # the replayed start's own returns, in each PVN's panel
        assert list(fig.data[index].y) == pytest.approx(ascents[mode].true_returns[:, 2])
        assert fig.data[index].name == "start 3 (replayed)"
    assert [fig.data[i].showlegend for i in lit] == [True, False]  # one legend entry


def test_highlight_start_without_a_replay_or_with_one_pvn():
    fig = figs.highlight_start(figs.ascent_figure(_ascents(), return_limit=None), -1)
    assert not any(trace.line.color == theme.HIGHLIGHT for trace in fig.data)
    ascents = _ascents(("flattened",))
    fig = figs.highlight_start(figs.ascent_figure(ascents, return_limit=None), 0)
    (lit,) = [trace for trace in fig.data if trace.line.color == theme.HIGHLIGHT]
    assert list(lit.y) == pytest.approx(ascents["flattened"].true_returns[:, 0]) and lit.showlegend


def test_each_ascent_line_has_its_own_role():
    fig = figs.ascent_figure(_ascents(), return_limit=30.0)
    found = roles(fig)
    assert len(found) == len(fig.data) == 2 * (4 + 1)  # 4 starts and the mean, per PVN
    assert {f"mean:{mode}" for mode in MODES} <= set(found)


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

"""Figures beyond zero-shot ascent (``pvnviz.figures.beyond``): the ensemble's disagreement at each start's
chosen iterate, first checks against fresh numbers, the budget comparison."""

import numpy as np


def test_beyond_figures_draw_the_trace_and_the_budget():
    from pvnviz.core.ascent import AscentTrace
    from pvnviz.figures.beyond import budget_figure, disagreement_figure, fresh_figure

    trace = AscentTrace(
        "fingerprint",
        np.array([0, 2, 4]),
        np.array([[10.0, 20.0], [30.0, 25.0], [28.0, 40.0]]),
        np.zeros((5, 2)),
        np.zeros((3, 2, 3)),
        0.0,
        np.array([29.0, 38.0]),
        np.abs(np.arange(10.0).reshape(5, 2)),
    )
    fig = disagreement_figure(trace, 1.5)
    chosen = fig.data[-1]
    assert list(chosen.x) == [2, 4] and list(chosen.y) == [4.0, 9.0]  # spread at each start's chosen iterate
    bars = fresh_figure(trace).data
    assert list(bars[0].y) == [10.0, 20.0]  # each start's own first check
    assert list(bars[1].y) == [30.0, 40.0] and list(bars[2].y) == [29.0, 38.0]
    rows = [dict(method="ARS V1-t", seed=0, env_steps=10, fresh_mean=5.0)]
    assert list(budget_figure(rows).data[0].x) == [10]


def test_fresh_figures_of_two_pvns_have_distinct_titles_that_fit_a_half_width_figure():
    from pvnviz.core.ascent import AscentTrace
    from pvnviz.figures import theme
    from pvnviz.figures.beyond import fresh_figure
    from pvnviz.figures.experiment import MODE_LABEL

    trace = AscentTrace(
        "fingerprint", np.array([0, 2]), np.ones((2, 2)), np.zeros((3, 2)), np.zeros((2, 2, 3)), 0.0, np.ones(2), None
    )
    titles = [fresh_figure(trace, label).layout.title.text for label in MODE_LABEL.values()]
    assert len(set(titles)) == len(titles)
    assert all(label in title for label, title in zip(MODE_LABEL.values(), titles))
    assert all(len(title) <= theme.TITLE_CHARS for title in titles)  # one line in half a 1280 px page

"""The player's in-place moves give exactly the figure a fresh build of the target iterate gives."""

import dataclasses
import json

import pytest

from pvnviz.figures import polytope as figs
from pvnviz.figures import polytope_ascent as ascent_figs
from pvnviz.polytope import PolytopeConfig, exact_view, learned_view, train_polytope_pvn


@pytest.fixture(scope="module")
def views():
    config = dataclasses.replace(PolytopeConfig(), train_steps=300)
    trained = train_polytope_pvn(config, 0)
    other = dataclasses.replace(config, ascent_start=(0.3, 0.2), ascent_steps=40)
    return [(exact_view(c, 0), learned_view(c, trained)) for c in (config, other)]


def spec(fig) -> dict:
    return json.loads(fig.to_json())


def test_moving_a_frame_equals_building_it(views):
    (exact, learned), (exact2, learned2) = views
    fig = ascent_figs.ascent_frame(exact, learned, 10)
    ascent_figs.move_ascent_frame(fig, exact2, learned2, 30)  # another iterate of another ascent
    assert spec(fig) == spec(ascent_figs.ascent_frame(exact2, learned2, 30))
    fig = figs.ascent_returns_figure(exact, learned, highlight=10)
    ascent_figs.move_returns_highlight(fig, exact, learned, 55)
    assert spec(fig) == spec(figs.ascent_returns_figure(exact, learned, highlight=55))


def test_the_ring_sits_on_iterate_t_in_both_panels(views):
    exact, learned = views[0]
    fig = ascent_figs.ascent_frame(exact, learned, 7)
    by_meta = {t.meta: t for t in fig.data if t.meta}
    for name, path in (("exact ascent", exact.ascent), ("learned ascent", learned.ascent)):
        assert tuple(by_meta[f"ring:{name}:1"].x) == (path.policies[7, 0],)
        assert tuple(by_meta[f"ring:{name}:2"].y) == (path.values[7, 1],)
        assert len(by_meta[f"upto:{name}:1"].x) == 8

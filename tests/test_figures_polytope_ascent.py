"""The ascent figure at iterate t rings iterate t in both panels (the template of the polytope instrument)."""

import dataclasses

import pytest

from pvnviz.figures import polytope_ascent as ascent_figs
from pvnviz.polytope.experiment import PolytopeConfig, exact_view, learned_view, train_polytope_pvn


@pytest.fixture(scope="module")
def views():
    config = dataclasses.replace(PolytopeConfig(), train_steps=300)
    trained = train_polytope_pvn(config, 0)
    other = dataclasses.replace(config, ascent_start=(0.3, 0.2), ascent_steps=40)
    return [(exact_view(c, 0), learned_view(c, trained)) for c in (config, other)]


def test_the_ring_sits_on_iterate_t_in_both_panels(views):
    exact, learned = views[0]
    fig = ascent_figs.ascent_frame(exact, learned, 7)
    by_meta = {t.meta: t for t in fig.data if t.meta}
    for name, path in (("exact ascent", exact.ascent), ("learned ascent", learned.ascent)):
        assert tuple(by_meta[f"ring:{name}:1"].x) == (path.policies[7, 0],)
        assert tuple(by_meta[f"ring:{name}:2"].y) == (path.values[7, 1],)
        assert len(by_meta[f"upto:{name}:1"].x) == 8

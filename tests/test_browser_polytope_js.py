"""The polytope instrument's PVN in headless Chromium equals the Python reference (``learned_view``).

``components/polytope_views.js`` evaluates a PVN the server trained (``TinyMLP``'s weights, sent once) for the
learned gradient field and the ascent through the PVN, with the PVN's own estimate Ĵ and the exact J of each
iterate. The module, as the page loads it (``ui.components.js_module``: prelude, mdp.js, the instrument), is imported
into a blank page with every network request refused, and compared with
``pvnviz.polytope.experiment.learned_view`` on PVNs
trained on 12 MDPs (the paper's, random ones, gamma 0.99, deterministic transitions), 100 ascent steps each from
random starts and step sizes. Tolerance as tests/test_browser_mdp_js.py: |js - py| <= 1e-9 * max(1, |py|).
"""

import json

import numpy as np
import pytest
from test_browser_mdp_js import LOAD

from browserbench.browser import launch
from conftest import require_chromium
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope.experiment import PolytopeConfig, learned_view, train_polytope_pvn
from ui.components import js_module
from ui.polytope_instrument import MODULES

pytestmark = pytest.mark.browser

MODULE = MODULES  # as the page loads it

RUN = """(text) => JSON.stringify(JSON.parse(text).map((k) => {
  const M = window.MDP, A = (a) => Array.from(a);
  const net = {W1: k.W1, b1: k.b1, W2: k.W2, b2: k.b2, hidden: k.hidden};
  const m = M.mdpFromFlat(k.rewards, k.transitions, k.gamma, k.d0);
  const v = M.learnedView(net, m, k.grid, k.start, k.lr, k.steps);
  return {field: A(v.field), x: A(v.x), V: A(v.V), J: A(v.J), predicted: A(v.predicted)};
}))"""


def configs(rng: np.random.Generator) -> list[PolytopeConfig]:
    out = [PolytopeConfig(train_steps=2000)]
    for n in range(11):
        gamma = [0.99, 0.5, 0.9, 0.0][n % 4]
        m = mdp_lib.random_mdp(rng, gamma=gamma)
        P = np.eye(2)[rng.integers(0, 2, size=(2, 2))] if n % 3 == 0 else m.transitions  # deterministic
        out.append(
            PolytopeConfig(
                gamma=gamma,
                rewards=tuple(m.rewards.reshape(4).tolist()),
                transitions=tuple(tuple(row) for row in P.reshape(4, 2).tolist()),
                d0=tuple(rng.dirichlet([1.0, 1.0]).tolist()),
                train_steps=500,
            )
        )
    return [
        c.__class__(
            **{
                **c.__dict__,
                "ascent_start": tuple(rng.uniform(0, 1, 2).tolist()),
                "ascent_learning_rate": float(10 ** rng.uniform(-2, 0.3)),
                "ascent_steps": 100,
            }
        )
        for c in out
    ]


def worst(js, py) -> float:
    js, py = np.asarray(js, dtype=float).reshape(-1), np.asarray(py, dtype=float).reshape(-1)
    assert js.shape == py.shape, f"{js.shape} != {py.shape}"
    return float(np.max(np.abs(js - py) / np.maximum(1.0, np.abs(py)), initial=0.0))


def test_learned_field_and_ascent_match_python():
    require_chromium()
    from playwright.sync_api import sync_playwright

    rng = np.random.default_rng(20200305)
    cases, refs = [], []
    for seed, config in enumerate(configs(rng)):
        trained = train_polytope_pvn(config, seed)
        view = learned_view(config, trained)
        net = trained.net
        cases.append(
            {
                "W1": net.W1.reshape(-1).tolist(),
                "b1": net.b1.tolist(),
                "W2": net.W2.reshape(-1).tolist(),
                "b2": net.b2.tolist(),
                "hidden": int(net.W1.shape[1]),
                "rewards": list(config.rewards),
                "transitions": [list(r) for r in config.transitions],
                "gamma": config.gamma,
                "d0": list(config.d0),
                "grid": config.grid_size,
                "start": list(config.ascent_start),
                "lr": config.ascent_learning_rate,
                "steps": config.ascent_steps,
            }
        )
        refs.append(view)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        requests = []
        page.route("**/*", lambda route: (requests.append(route.request.url), route.abort()))
        page.set_content("<!doctype html><title>polytope.js</title>")
        exports = page.evaluate(LOAD, js_module(*MODULE))
        out = json.loads(page.evaluate(RUN, json.dumps(cases)))
        browser.close()
    assert "learnedView" in exports and "default" in exports and requests == []
    errors = {}
    for k, (js, view) in enumerate(zip(out, refs)):
        errors[k] = max(
            worst(js["field"], view.field),  # (G, G, 2), row-major: the layout mdp.js's field uses
            worst(js["x"], view.ascent.policies),
            worst(js["V"], view.ascent.values),
            worst(js["J"], view.ascent.exact_J),
            worst(js["predicted"], view.ascent.predicted_J),
        )
    print("worst relative difference per PVN:", {k: f"{e:.1e}" for k, e in errors.items()})
    assert max(errors.values()) <= 1e-9, errors
    moved = [np.abs(v.ascent.policies[-1] - v.ascent.policies[0]).max() for v in refs]
    assert sum(m > 0.05 for m in moved) >= 6  # the ascents go somewhere: the comparison is not of still points

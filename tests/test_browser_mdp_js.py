"""components/mdp.js in headless Chromium equals the Python reference.

(pvnviz.polytope.mdp, pvnviz.polytope.experiment)

The module is imported into a blank page (a blob: URL, every network request refused), and one ``page.evaluate``
runs it on 100 MDPs: random ones (``random_mdp``, some with gamma 0.99 or 0), hand-built ones (deterministic 0/1
transitions, rewards of magnitude 100, all-zero rewards so every corner ties, rows summing to 1 +- 5e-10 as
TabularMDP allows) and the paper's (``paper_mdp``), all with random d0. Each is compared with ``exact_view``
(cloud, edges, corners, optimum, 20x20 field, 100-step ascent from a random start with a random step size) and with
``values``, ``objective``, ``occupancy``, ``gradient`` and ``q_values`` of pvnviz.polytope.mdp.

Tolerance: |js - py| <= 1e-9 * max(1, |py|). Both sides solve a 2x2 system in float64; the discrepancy is
bounded by numpy's LU rounding, about cond(I - gamma P_pi) * eps * |V| <= (2 / (1 - gamma)) * 2.2e-16 * |V|,
i.e. ~5e-14 |V| at gamma 0.99 (measured: under 1e-12 relative). The relative part is needed because |V| and
|dJ/dx| exceed 1e3 here (rewards 100, gamma 0.99); 1e-9 is 3-4 orders above the rounding and far below any
formula slip (a wrong index or sign changes results by O(0.01) or more).
"""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from browserbench.browser import launch
from conftest import require_chromium
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope.experiment import PolytopeConfig, exact_view

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "components" / "mdp.js"
TOL = 1e-9
CLOUD = 200  # cloud policies per MDP (exact_view's minimum is 10)
SCALAR = 10  # policies per MDP for the one-policy functions

LOAD = """async (source) => {
  const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  window.MDP = await import(url);
  return Object.keys(window.MDP).sort();
}"""

RUN = """(text) => {  // JSON text both ways: exact for doubles, and far quicker than Playwright's serializer
  const M = window.MDP, A = (a) => Array.from(a);
  return JSON.stringify(JSON.parse(text).map((k) => {
    const m = M.mdpFromFlat(k.rewards, k.transitions, k.gamma, k.d0);
    const cl = M.cloud(m, Float64Array.from(k.cloud)), f = M.field(m, 20), best = M.optimum(m);
    const co = M.corners(m), as = M.ascent(m, k.start, k.lr, 100);
    const one = (fn) => k.scalar.map(([x1, x2]) => fn(m, x1, x2));
    return {
      P: m.P, r: m.r, gamma: m.gamma, d0: m.d0,
      cloudV: A(cl.V), cloudJ: A(cl.J), grid: A(f.grid), field: A(f.field), edges: M.edges(m).map(A),
      cornerX: A(co.x), cornerV: A(co.V), cornerJ: A(co.J), best: best,
      ascentX: A(as.x), ascentV: A(as.V), ascentJ: A(as.J),
      values: one(M.values), objective: one(M.objective), occupancy: one(M.occupancy),
      gradient: one(M.gradient), q: one((mm, x1, x2) => M.qValues(mm, M.values(mm, x1, x2))),
    };
  }));
}"""

@pytest.fixture(scope="module")
def page():
    """A blank Chromium page with the module's exports on window.MDP (no server, no network)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        pg = browser.new_page()
        requests = []
        pg.route("**/*", lambda route: (requests.append(route.request.url), route.abort()))
        pg.set_content("<!doctype html><title>mdp.js</title>")
        exports = pg.evaluate(LOAD, MODULE.read_text())
        yield SimpleNamespace(evaluate=pg.evaluate, exports=exports, requests=requests)
        browser.close()


def cases(rng: np.random.Generator) -> list[tuple[str, mdp_lib.TabularMDP]]:
    """100 MDPs: random (some gamma 0.99 or 0), deterministic, large or zero rewards, the paper's."""
    d0 = lambda: tuple(rng.dirichlet([1.0, 1.0]))  # noqa: E731
    out = [("paper", mdp_lib.paper_mdp()), ("paper d0=(1,0)", mdp_lib.paper_mdp((1.0, 0.0)))]
    out += [("paper", mdp_lib.paper_mdp(d0())) for _ in range(6)]
    for n in range(92):
        kind = ["random", "gamma 0.99", "gamma 0", "deterministic", "big rewards", "zero rewards", "rows off"][n % 7]
        gamma = {"gamma 0.99": 0.99, "gamma 0": 0.0}.get(kind, float(rng.choice([0.0, 0.5, 0.8, 0.9, 0.99])))
        m = mdp_lib.random_mdp(rng, gamma=gamma)
        P, r = m.transitions, m.rewards
        if kind == "deterministic":
            P = np.eye(2)[rng.integers(0, 2, size=(2, 2))]
        if kind == "big rewards":
            r = rng.uniform(-100, 100, size=(2, 2))
        if kind == "zero rewards":
            r = np.zeros((2, 2))
        if kind == "rows off":  # rows summing to 1 +- 5e-10, which TabularMDP accepts (atol 1e-9)
            P = P + rng.choice([-5e-10, 5e-10], size=(2, 2, 1)) * (P > 1e-9)
        out.append((f"{kind} gamma={gamma}", mdp_lib.TabularMDP(P, r, gamma, np.array(d0()))))
    return out


def reference(name: str, m: mdp_lib.TabularMDP, seed: int, rng: np.random.Generator) -> dict:
    """Everything the test compares, from pvnviz (exact_view and pvnviz.polytope.mdp)."""
    config = PolytopeConfig(
        gamma=m.gamma,
        rewards=tuple(m.rewards.reshape(4).tolist()),
        transitions=tuple(tuple(row) for row in m.transitions.reshape(4, 2).tolist()),
        d0=tuple(m.d0.tolist()),
        num_polytope_points=CLOUD,
        ascent_start=tuple(rng.uniform(0.0, 1.0, 2).tolist()),
        ascent_learning_rate=float(10 ** rng.uniform(-2, 0)),
        ascent_steps=100,
        grid_size=20,
    )
    view = exact_view(config, seed)
    flat = config.mdp()  # TabularMDP.from_flat, the convention mdpFromFlat must follow
    scalar = np.vstack([[0.0, 0.0], [1.0, 0.5], rng.uniform(0, 1, (SCALAR - 2, 2))])
    pi = mdp_lib.policy_matrix(scalar)
    return {
        "name": name,
        "send": {
            "rewards": list(config.rewards),
            "transitions": [list(row) for row in config.transitions],
            "gamma": config.gamma,
            "d0": list(config.d0),
            "cloud": view.cloud_policies.reshape(-1).tolist(),
            "start": list(config.ascent_start),
            "lr": config.ascent_learning_rate,
            "scalar": scalar.tolist(),
        },
        "P": flat.transitions,
        "r": flat.rewards,
        "gamma": flat.gamma,
        "d0": flat.d0,
        "cloudV": view.cloud_values,
        "cloudJ": view.cloud_J,
        "grid": view.grid,
        "field": view.field,
        "edges": np.array(view.edges),
        "cornerX": view.corner_policies,
        "cornerV": view.corner_values,
        "cornerJ": view.corner_J,
        "bestX": view.optimal_policy,
        "bestJ": view.optimal_J,
        "ascentX": view.ascent.policies,
        "ascentV": view.ascent.values,
        "ascentJ": view.ascent.exact_J,
        "values": mdp_lib.values(m, pi),
        "objective": mdp_lib.objective(m, pi),
        "occupancy": mdp_lib.occupancy(m, pi),
        "gradient": mdp_lib.gradient(m, scalar),
        "q": mdp_lib.q_values(m, mdp_lib.values(m, pi)),
    }


def worst(js, py) -> float:
    """Largest |js - py| / max(1, |py|); arrays must have the same number of entries."""
    js, py = np.asarray(js, dtype=float).reshape(-1), np.asarray(py, dtype=float).reshape(-1)
    assert js.shape == py.shape, f"{js.shape} != {py.shape}"
    return float(np.max(np.abs(js - py) / np.maximum(1.0, np.abs(py)), initial=0.0))


EXACT = ("P", "r", "gamma", "d0", "grid", "cornerX")  # inputs and layouts: equal bit for bit
CLOSE = tuple("cloudV cloudJ field edges cornerV cornerJ ascentX ascentV ascentJ".split())
CLOSE += ("values", "objective", "occupancy", "gradient", "q")  # the one-policy functions
API = "ascent cloud corners edges field gradient linspace mdpFromFlat objective occupancy optimum qValues values"


def test_module_loads_alone_and_exports_the_api(page):
    assert page.exports == API.split()  # sorted
    assert page.requests == []  # no imports, no fetches


def test_matches_python_on_100_mdps(page):
    rng = np.random.default_rng(20200304)
    refs = [reference(name, m, seed, rng) for seed, (name, m) in enumerate(cases(rng))]
    assert len(refs) == 100
    results = json.loads(page.evaluate(RUN, json.dumps([ref["send"] for ref in refs])))
    errors = {key: 0.0 for key in CLOSE}
    for ref, js in zip(refs, results, strict=True):
        where = f"{ref['name']}: {json.dumps(ref['send'])[:300]}"
        for key in EXACT:
            same = np.array_equal(np.asarray(js[key], dtype=float).reshape(-1), np.reshape(ref[key], -1))
            assert same, f"{key} differs for {where}"
        for key in CLOSE:
            err = worst(js[key], ref[key])
            errors[key] = max(errors[key], err)
            assert err <= TOL, f"{key} off by {err:.3g} (relative to max(1, |py|)) for {where}"
        best = js["best"]
        assert np.array_equal(best["x"], ref["bestX"]), f"optimum {best} != {ref['bestX']} for {where}"
        assert worst(best["J"], ref["bestJ"]) <= TOL
        assert js["cornerX"][2 * best["index"] : 2 * best["index"] + 2] == best["x"]
    print("largest relative discrepancy per quantity:", {k: f"{v:.2g}" for k, v in errors.items()})


"""Every page through Streamlit's AppTest: renders without exception, figures carry what they should."""

import pytest

from conftest import PAGES, figures, frame_figures, instrument, open_page, players, trace_names

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it


@pytest.mark.parametrize("page_path", PAGES)
def test_every_page_renders_on_defaults(page_path):
    at = open_page(page_path)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_polytope_page_figures():
    at = open_page("pages/polytope.py")
    sent = instrument(at)  # the exact views are computed and drawn in the browser (ui.polytope_instrument)
    figs = figures(at) + list(sent["figures"].values())
    assert len(figs) == 6  # the PVN's loss and predictions, drawn by the server; four in the instrument
    names = set().union(*(trace_names(f) for f in figs))
    for name in (
        "train policies",
        "test policies",
        "exact ascent",
        "learned ascent",
        "exact gradient field",
        "learned gradient field",
        "deterministic policies (corners)",
        "policies (coloured by J)",
    ):
        assert name in names, name
    assert sent["frame"] is None and sent["controls"]["ascent_steps"] == 100  # opens on the last iterate
    assert sent["learned"]["hidden"] == 50 and sent["learned"]["controls"]["gamma"] == 0.8  # Appendix B's PVN
    for f in figs:  # every axis has a title
        for key, axis in f["layout"].items():
            if key.startswith(("xaxis", "yaxis")):
                assert axis.get("title", {}).get("text"), key


def test_polytope_page_after_changing_controls():
    at = open_page("pages/polytope.py")
    for key, value in {"gamma": 0.9, "start1": 0.2, "r00": 0.3, "p10": 0.5}.items():
        at.session_state[key] = value  # what the browser's instrument sends on release
    at.slider(key="train_steps").set_value(2000)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    sent = instrument(at)
    assert sent["controls"]["start1"] == 0.2 and sent["controls"]["gamma"] == 0.9
    learned = sent["learned"]["controls"]  # the PVN was retrained on the new MDP
    assert learned["gamma"] == 0.9 and learned["r00"] == 0.3 and learned["p10"] == 0.5
    assert at.query_params["gamma"] == "0.9" and at.query_params["start1"] == "0.2"


def test_random_mdp_and_paper_buttons():
    at = open_page("pages/polytope.py")
    revision = instrument(at)["revision"]
    next(b for b in at.button if b.label == "Random MDP").click().run()
    assert not at.exception
    sent = instrument(at)
    assert sent["controls"]["r00"] != -0.45 and sent["revision"] > revision  # the browser takes the new MDP
    next(b for b in at.button if b.label == "Paper settings").click().run()
    assert instrument(at)["controls"]["r00"] == -0.45
    assert not at.exception


def test_validation_policies_switch_in_the_browser():
    """Issue 18, item 5: every validation policy's return distribution is sent once, to a browser player."""
    at = open_page("pages/cartpole.py")
    val = players(at)["cartpole_val"]
    labels = val["animation"]["labels"]
    assert len(labels) > 10 and labels == sorted(labels, key=int)  # the policies' dataset numbers
    for k in (0, len(labels) - 1):
        fig = frame_figures(val, k)["policy"]
        assert fig["layout"]["title"]["text"] == f"Policy #{labels[k]}: return distribution"
        assert "empirical (Monte Carlo)" in trace_names(fig) and len(fig["data"]) == 3  # and both PVNs


def test_cartpole_page_figures_and_bad_input():
    at = open_page("pages/cartpole.py")
    at.selectbox(key="cartpole_preset").set_value("quick").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="cartpole_num_policies").value == 300  # the preset filled the controls
    figs = {f["layout"]["title"]["text"]: f for f in figures(at)}
    hist = figs["The dataset: random policies' mean returns"]
    assert {t["type"] for t in hist["data"]} == {"histogram"}
    assert any("kept for training" in t["name"] for t in hist["data"])
    ascent = next(f for title, f in figs.items() if title.startswith("Zero-shot gradient ascent"))
    names = trace_names(ascent)
    assert {"mean: fingerprint PVN", "mean: flattened-weights PVN", "each start"} <= names
    played = players(at)  # the animations play in the browser (ui.browser_player)
    probes = frame_figures(played["cartpole_probes"])["cartpole_probes"]
    assert probes["layout"]["title"]["text"].startswith("Probing states through training: step")
    replay = frame_figures(played["cartpole_replay"])["cartpole_replay"]
    assert replay["layout"]["title"]["text"].startswith("Replay: the same start state, before and after ascent")
    assert played["cartpole_probes"]["animation"]["probes"]["shape"][0] > 1  # snapshots the page projects
    shown = played["cartpole_replay"]["choice"]
    assert len(played["cartpole_replay"]["animation"]["variants"][f"{shown['mode']}|{shown['start']}"]["frames"]) > 1
    before = len(figures(at))
    for key, bad in (("cartpole_num_bins", 0), ("cartpole_horizon", 0), ("cartpole_num_probes", 0)):
        at.number_input(key=key).set_value(bad).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.error and "Please change a setting" in at.error[0].value
        assert len(figures(at)) == before  # the last valid run is still on screen
        at.number_input(key=key).set_value(
            {"cartpole_num_bins": 41, "cartpole_horizon": 100, "cartpole_num_probes": 20}[key]
        ).run()
    at.text_input(key="cartpole_policy_hidden").set_value("abc").run()
    assert at.error and "layer sizes" in at.error[0].value


def test_cartpole_page_opens_a_saved_run(tmp_path, monkeypatch):
    """A run written by the CLI under the runs root is listed and opens; nothing outside the root can be named."""
    from pvnviz.cli.main import main

    root = tmp_path / "runs"
    monkeypatch.setenv("PVN_RUNS_ROOTS", str(root))
    assert (
        main(
            [
                "run",
                "cartpole",
                "--preset",
                "quick",
                "--out",
                str(root / "mine"),
                "--quiet",
                "--set",
                "num_policies=100",
                "--set",
                "train_steps=200",
                "--set",
                "ascent_steps=20",
            ]
        )
        == 0
    )
    at = open_page("pages/cartpole.py")
    assert at.selectbox(key="cartpole_run").options[1:] == ["runs/mine"]  # only runs under the root are listed
    at.selectbox(key="cartpole_run").set_value("runs/mine").run()
    assert not at.exception and not at.error
    assert any("Showing the saved run" in i.value for i in at.info)
    (root / "mine" / "split.json").write_text('{"train_idx": [99999], "val_idx": [], "bins": [0, 1, 41]}')
    at.selectbox(key="cartpole_run").set_value("runs/mine").run()  # damaged after listing: refused, nothing lost
    assert at.error and "Cannot open that run" in at.error[0].value and str(tmp_path) not in at.error[0].value
    assert not at.exception and len(figures(at)) > 0

"""What a link, the sidebar and an opened run say, through Streamlit's AppTest: every link value a page cannot use
is named in its warning (hostile values included, none breaks a section), a bad or missing seed falls back to the
page's own, a preset link opens that preset's shipped run, no widget is given a value twice, the page icons are
Material icons, and an uploaded run says what Run runs; the uploader states the real cap."""

import logging
from pathlib import Path

import pytest
from streamlit import config
from streamlit.elements.lib import policies

import ui.server.queue
from conftest import no_training, open_link, open_page, texts
from pvnviz.polytope.survey import PAPER_SURVEY
from pvnviz.runs import archive

pytestmark = pytest.mark.slow  # page runs: `make test` runs it

HOSTILE = [
    ("pages/polytope.py", "ascent", "²"),
    ("pages/polytope.py", "ascent", "-1"),
    ("pages/polytope.py", "ascent", "999999999999999999999999"),
    ("pages/polytope.py", "ascent", "7.5"),
    ("pages/cartpole.py", "cartpole_probe_x", "²"),
    ("pages/cartpole.py", "cartpole_replay_start", "²"),
    ("pages/cartpole.py", "cartpole_replay", "²"),
    ("pages/cartpole.py", "cartpole_probes", "²"),
    ("pages/cartpole.py", "cartpole_val", "²"),
    ("pages/cartpole.py", "cartpole_replay_start", "999999999999999999999999"),
    ("pages/swimmer.py", "swimmer_replay_start", "①"),
]


def _link_warning(at) -> str:
    return next((w.value for w in at.warning if "link holds values" in w.value), "")


@pytest.mark.parametrize("page, key, value", HOSTILE)
def test_a_link_value_the_page_cannot_use_is_named_and_breaks_nothing(monkeypatch, page, key, value):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_link({key: value}, page=page)
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    assert f"`{key}=" in _link_warning(at), (key, value, [w.value for w in at.warning])


def test_a_link_value_the_page_uses_is_not_named(monkeypatch):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_link({"cartpole_replay_start": "2", "cartpole_probe_x": "1"})
    assert _link_warning(at) == ""
    assert at.session_state["cartpole_replay_start"] == 2 and at.session_state["cartpole_probe_x"] == 1


@pytest.mark.parametrize("page", ["pages/cartpole.py", "pages/swimmer.py"])
@pytest.mark.parametrize("seed", ["-5", "²", "99999999999999999999", "x"])
def test_a_bad_seed_falls_back_to_the_page_s_own_and_is_named(monkeypatch, page, seed):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_link({"seed": seed}, page=page)
    assert at.session_state["seed"] == 0
    assert "`seed=" in _link_warning(at) and "**seed** is 0" in _link_warning(at)


def test_a_preset_link_without_a_seed_opens_the_preset_s_shipped_run(monkeypatch):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_link({"cartpole_preset": "quick"})
    assert at.session_state["seed"] == 0
    assert "Showing the shipped run `data/cartpole-quick`" in texts(at)
    assert "have not been run yet" not in texts(at)


@pytest.fixture()
def duplicated_value_warnings():
    """Streamlit's log of a widget given a default value and a Session State value (logged once per process)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger(policies.__name__)
    logger.addHandler(handler)
    policies._shown_default_value_warning = False
    option = "global.disableWidgetStateDuplicationWarning"  # the app's config turns it off for its reset buttons
    kept = config.get_option(option)
    config.set_option(option, False)
    yield records
    config.set_option(option, kept)
    logger.removeHandler(handler)


def test_opening_a_page_gives_no_widget_a_default_and_a_session_state_value(duplicated_value_warnings):
    """A page's first visit sets its seed with no default in that run; only the reset buttons set widgets back to
    their defaults through Session State, by design (the config's disableWidgetStateDuplicationWarning)."""
    for page in ("pages/cartpole.py", "pages/swimmer.py", "pages/polytope.py"):
        open_page(page)
        assert not duplicated_value_warnings, (page, duplicated_value_warnings[0].getMessage())


def test_the_reset_buttons_put_the_seed_back_and_out_of_the_url():
    at = open_page("pages/cartpole.py")
    at.session_state["seed"] = 7
    at.run()
    at.button(key="cartpole_reset").click().run()
    assert at.session_state["seed"] == 0
    at = open_page("pages/polytope.py")
    at.number_input(key="seed").set_value(7).run()
    next(b for b in at.button if b.label == "Paper settings").click().run()
    assert at.session_state["seed"] == PAPER_SURVEY.first_at_optimum


def test_the_seed_s_warning_would_be_caught(duplicated_value_warnings):
    """The fixture sees the warning when a widget is given both (so the test above can fail)."""
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        st.session_state["n"] = 3
        st.number_input("n", value=1, key="n")

    AppTest.from_function(script).run()
    assert duplicated_value_warnings


def test_page_icons_are_material_icons_and_the_tab_icon_an_image_of_the_app(monkeypatch):
    from PIL import Image
    from streamlit.string_util import is_emoji

    import ui.navigation

    made = []
    monkeypatch.setattr(ui.navigation.st, "Page", lambda page, **kwargs: made.append(kwargs))
    ui.navigation.app_pages()  # st.Page keeps its icon only in a script run: the arguments it was given
    assert len(made) == 5
    for page in made:
        icon = page["icon"]
        assert icon.startswith(":material/") and icon.endswith(":") and not is_emoji(icon), page
    app_icon = ui.navigation.app_icon
    assert isinstance(app_icon(), Image.Image)  # served by the app itself: no emoji, nothing fetched elsewhere
    source = (Path(__file__).resolve().parents[1] / "app.py").read_text()
    assert "ui_navigation.page_config()" in source and "page_icon" not in source


def test_the_uploader_states_the_real_cap_and_an_upload_says_what_run_runs(monkeypatch):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_page("pages/cartpole.py")
    uploader = at.get("file_uploader")[0]
    assert uploader.proto.max_upload_size_mb == archive.MAX_ZIP_BYTES // 2**20 == 50
    from pvnviz.runs.files import load_result

    zipped = archive.run_zip(load_result("data/cartpole-quick", "cartpole"))
    at.file_uploader(key="cartpole_upload").set_value(("run.zip", zipped, "application/zip")).run()
    shown = " ".join(i.value for i in at.info)
    assert "uploaded run `run.zip` (preset Quick, seed 0)" in shown
    assert "as uploaded" in shown and "Run" in shown and "preset Paper" in shown and "seed 0" in shown


def test_the_server_s_upload_cap_is_the_zip_reader_s():
    import tomllib

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == archive.MAX_ZIP_BYTES // 2**20


@pytest.fixture(scope="module")
def polytope_runs(tmp_path_factory):
    """Two polytope runs written by the CLI: one the page can hold (seed 3, γ 0.7, 500 training steps), one it
    cannot (a PVN of 20 hidden units; the page trains 50)."""
    from pvnviz.cli.main import main

    root = tmp_path_factory.mktemp("polytope") / "runs"
    for name, extra in (("mine", ["--set", "gamma=0.7"]), ("wide", ["--set", "hidden_size=20"])):
        argv = ["run", "polytope", "--seed", "3", "--out", str(root / name), "--quiet", "--set", "train_steps=500"]
        assert main(argv + extra) == 0
    return root


def test_the_polytope_page_opens_a_saved_run_as_its_own_settings(polytope_runs, monkeypatch):
    from conftest import instrument

    monkeypatch.setenv("PVN_RUNS_ROOTS", str(polytope_runs))
    at = open_page("pages/polytope.py")
    assert at.selectbox(key="polytope_run").options == ["— none —", "runs/mine", "runs/wide"]
    at.selectbox(key="polytope_run").set_value("runs/mine").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Opened the saved run `runs/mine` (seed 3)" in texts(at)
    assert at.session_state["seed"] == 3 and at.session_state["train_steps"] == 500
    assert instrument(at)["controls"]["gamma"] == pytest.approx(0.7)
    assert at.query_params["gamma"] == "0.7" and at.query_params["train_steps"] == "500"
    assert at.query_params["seed"] == "3"
    at.selectbox(key="polytope_run").set_value("runs/wide").run()
    assert any("Cannot open `runs/wide` here" in e.value and "hidden_size" in e.value for e in at.error)
    assert at.session_state["seed"] == 3  # nothing changed


def test_paper_settings_leaves_the_training_settings_it_did_not_change_out_of_the_url():
    at = open_page("pages/polytope.py")
    at.slider(key="train_steps").set_value(2000).run()
    next(b for b in at.button if b.label == "Paper settings").click().run()
    assert not at.exception
    assert "num_policies" not in at.query_params and "pvn_lr" not in at.query_params


def test_a_preset_change_puts_every_field_at_the_preset_and_out_of_the_url():
    """Choosing another preset (the box, Reset to the paper) puts every field at the preset's value, which the
    link does not repeat."""
    from pvnviz.runs.presets import PRESETS

    at = open_page("pages/cartpole.py")
    at.number_input(key="cartpole_num_policies").set_value(400).run()
    at.selectbox(key="cartpole_preset").set_value("quick").run()
    quick = PRESETS["cartpole"]["quick"]()
    assert at.number_input(key="cartpole_num_policies").value == quick.num_policies
    assert "cartpole_num_policies" not in at.query_params  # a preset's own value is not repeated in the link
    at.button(key="cartpole_reset").click().run()
    assert at.number_input(key="cartpole_num_policies").value == PRESETS["cartpole"]["paper"]().num_policies


def test_the_app_turns_off_streamlit_s_duplicate_value_warning_for_its_reset_buttons():
    import tomllib

    settings = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert settings["global"]["disableWidgetStateDuplicationWarning"] is True


def test_a_rerun_begun_from_an_older_url_gets_the_views_shown_written_back():
    """The browser sends its URL with every rerun, and the server starts from it: a rerun asked for before an
    earlier rerun's URL reached the browser starts from the older URL. Every rerun writes the views the page
    shows (the probing states' axes, the replay's start) where that URL differs, so none is undone."""
    at = open_link({"cartpole_probe_x": "2", "cartpole_probe_y": "0", "cartpole_replay_start": "3"})
    assert (at.query_params["cartpole_probe_x"], at.query_params["cartpole_probe_y"]) == ("2", "0")
    at.query_params["cartpole_probe_y"] = "3"  # the URL of a rerun asked for before the switch to 0 came back
    at.query_params["cartpole_replay_start"] = "1"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["cartpole_probe_y"] == "0" and at.query_params["cartpole_replay_start"] == "3"

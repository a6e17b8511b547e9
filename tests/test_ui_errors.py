"""The pages' error boundary (``ui/errors.py``): a page or fragment that raises shows one ``st.error`` with an
error id, the traceback goes to the ``pvnlab`` log under that id, Streamlit's own control flow passes through,
and Streamlit shows no error details in the browser (``.streamlit/config.toml``)."""

import logging
import re
import tomllib
from pathlib import Path

import pytest
from streamlit.errors import FragmentHandledException

from conftest import figures, open_page
from ui.errors import boundary

ROOT = Path(__file__).resolve().parents[1]
ERROR_ID = re.compile(r"error id `([0-9a-f]{8})`")


@pytest.mark.slow  # a page run
def test_a_raising_page_shows_an_error_id_and_logs_the_traceback(monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise RuntimeError("boom in /srv/secret/pvnviz/file.py")

    monkeypatch.setattr("ui.experiment.obtain_result", boom)
    with caplog.at_level(logging.ERROR, logger="pvnlab"):
        at = open_page("pages/cartpole.py")
    assert not at.exception
    assert len(at.error) == 1 and "/srv/secret" not in at.error[0].value and "boom" not in at.error[0].value
    error_id = ERROR_ID.search(at.error[0].value).group(1)
    records = [r for r in caplog.records if r.name == "pvnlab" and error_id in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info[0] is RuntimeError
    assert "boom in /srv/secret" in caplog.text and "Traceback" in caplog.text
    assert at.number_input(key="seed").value is not None  # app.py's sidebar is still drawn


@pytest.mark.slow  # a page run
def test_a_raising_fragment_shows_an_error_id_and_the_rest_of_the_page(monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise ValueError("fragment failed")

    monkeypatch.setattr("ui.run_panel.job_panel", boom)  # the body of the CartPole page's job fragment
    with caplog.at_level(logging.ERROR, logger="pvnlab"):
        at = open_page("pages/cartpole.py")
    assert not at.exception
    error_id = ERROR_ID.search(" ".join(e.value for e in at.error)).group(1)
    assert any(error_id in r.getMessage() and r.exc_info[0] is ValueError for r in caplog.records)
    assert len(figures(at)) >= 2  # the rest of the page is drawn


def test_streamlit_control_flow_passes_through_the_boundary():
    with pytest.raises(FragmentHandledException), boundary():
        raise FragmentHandledException(RuntimeError("shown already"))


def _stops_inside_the_boundary():
    import streamlit as st

    from ui.errors import boundary

    with boundary():
        st.stop()
    st.write("after the stop")


def test_st_stop_inside_the_boundary_stops_the_script_with_no_error():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_stops_inside_the_boundary).run()
    assert not at.exception and not at.error
    assert "after the stop" not in [m.value for m in at.markdown]


def test_streamlit_shows_no_error_details_in_the_browser():
    from streamlit.config import ShowErrorDetailsConfigOptions

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == ShowErrorDetailsConfigOptions.NONE

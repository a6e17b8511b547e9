"""ui/components.py without a browser: the modules' text, and what ``plotly_view`` sends to the browser (the
browser side is tests/test_browser_components.py)."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from ui import components


def test_modules_start_with_the_shared_prelude():
    text = components.js_module("figure.js")
    assert text.startswith(components.PRELUDE.read_text())
    assert "export default function plotlyView" in text
    assert text.count("globalThis.pvnPlotly ??=") == 1


def _script():
    import numpy as np
    import plotly.graph_objects as go
    import streamlit as st

    from ui.components import plotly_view

    st.session_state.figure_format = "SVG"
    fig = go.Figure(go.Scatter(x=np.arange(4.0), y=np.arange(4.0) ** 2, name="squares"))
    raw = {"data": [{"type": "scatter", "y": np.arange(3)}], "layout": {"height": 300}}  # numpy in a plain dict
    plotly_view(fig.to_plotly_json(), key="squares", name="squares")
    plotly_view(raw, key="raw", name="raw", container=st.container())


def test_plotly_view_sends_plain_json_with_the_apps_config(tmp_path):
    at = AppTest.from_function(_script, default_timeout=60)
    at.run()
    assert not at.exception
    sent = [json.loads(element.proto.json) for element in at.get("bidi_component")]
    assert [data["key"] for data in sent] == ["squares", "raw"]
    squares, raw = sent
    assert squares["figure"]["data"][0]["y"]["dtype"] == "f8"  # plotly's typed array (base64), decoded by plotly.js
    assert raw["figure"]["data"][0]["y"] == [0, 1, 2]
    assert squares["config"] == {
        "toImageButtonOptions": {"format": "svg", "filename": "squares", "scale": 1},
        "displaylogo": False,
    }
    assert squares["plotly"].startswith("/pvn/plotly.min.js?v=")  # the server's route (ui.server.routes)


def test_a_result_figure_is_encoded_once_and_sent_as_it_is(monkeypatch):
    """``result_figure``: a figure that every tab of a class draws for one result is made and encoded once; what
    ``figure_data`` sends for it equals what it sends for the figure itself."""
    import numpy as np
    import plotly.graph_objects as go

    class Result:  # a result object, as the shared cache holds one
        pass

    result, made, encoded = Result(), [], []
    real = components.plotly.io.json.to_json_plotly
    monkeypatch.setattr(components.plotly.io.json, "to_json_plotly", lambda f: encoded.append(1) or real(f))
    monkeypatch.setattr(components, "plotly_js_url", lambda: "/pvn/plotly.min.js")
    monkeypatch.setattr(components, "chart_config", lambda name: {"name": name})
    monkeypatch.setattr(components.st, "session_state", {})

    def make():
        made.append(1)
        return go.Figure(go.Scatter(x=np.arange(3.0), y=np.arange(3.0) ** 2, name="squares"))

    first = components.result_figure(result, "squares", make)
    assert components.result_figure(result, "squares", make) is first and len(made) == len(encoded) == 1
    sent = components.figure_data(first, "k", "squares")
    assert sent["figure"] is first and len(encoded) == 1  # sent as it is: not encoded again
    assert sent == components.figure_data(make().to_plotly_json(), "k", "squares")  # the same as encoding it here
    assert first["data"][0]["y"]["dtype"] == "f8"


def test_per_result_makes_a_value_once_per_result_object_and_forgets_it_with_the_result():
    import gc

    import ui

    class Result:  # a result object of the shared cache, as the pages hold it
        pass

    made = []

    def make(tag):
        made.append(tag)
        return {"figure": tag}

    first, second = Result(), Result()
    assert ui.per_result(first, "a", lambda: make(1)) == {"figure": 1}
    assert ui.per_result(first, "a", lambda: make(2)) is ui.per_result(first, "a", lambda: make(3))
    assert ui.per_result(first, "b", lambda: make(4)) == {"figure": 4}  # another key: made
    assert ui.per_result(second, "a", lambda: make(5)) == {"figure": 5}  # another result: made
    assert made == [1, 4, 5]
    ident = id(first)
    assert ident in ui._PER_RESULT
    del first
    gc.collect()
    assert ident not in ui._PER_RESULT  # gone with its result


def test_per_result_sessions_asking_at_once_wait_for_one_make():
    """Eight tabs rerun together when the run they shared ends: each figure is made once, not eight times."""
    import time

    import ui
    from conftest import at_once

    class Result:
        pass

    result, made = Result(), []

    def make():
        made.append(1)
        time.sleep(0.2)  # a figure's plotly JSON takes a while: the other sessions arrive meanwhile
        return {"figure": len(made)}

    out = at_once(lambda: ui.per_result(result, "ascent", make))
    assert made == [1] and all(o is out[0] for o in out)

    def fails():
        raise RuntimeError("a figure that cannot be made")

    with pytest.raises(RuntimeError):
        ui.per_result(result, "bad", fails)
    assert ui.per_result(result, "bad", lambda: "made on the next try") == "made on the next try"

"""Shared test fixtures: paths, and a Streamlit AppTest factory."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))


def open_page(page: str, timeout: float = 300) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    if page != "pages/home.py":
        at.switch_page(page)
        at.run()
    return at


def figures(at: AppTest) -> list[dict]:
    """The plotly figures on the page, as JSON dicts."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def trace_names(fig: dict) -> set[str]:
    return {t.get("name") for t in fig.get("data", [])}


@pytest.fixture
def page():
    return open_page


def array(value) -> list:
    """A plotly data array as a list: plain JSON lists, or plotly's typed arrays {dtype, bdata}."""
    import base64

    import numpy as np

    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:
            data = data.reshape([int(n) for n in str(value["shape"]).split(",")])
        return data.tolist()
    return list(value)

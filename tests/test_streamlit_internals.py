"""``ui/server/streamlit_internals.py``, the one adapter to Streamlit's non-public modules: each name it relies on
still exists and behaves as it expects (a Streamlit upgrade that moves one fails here), and nothing else in the
app imports ``streamlit.runtime`` or ``streamlit.web``."""

import dataclasses
import inspect
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.server import streamlit_internals

ROOT = Path(__file__).resolve().parents[1]


def test_the_names_the_adapter_uses_exist():
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import ScriptRunContext, get_script_run_ctx
    from streamlit.web import cli

    fields = {f.name for f in dataclasses.fields(ScriptRunContext)}
    assert {"session_id", "fragment_ids_this_run"} <= fields
    assert callable(get_script_run_ctx) and get_script_run_ctx() is None  # outside a script run
    assert callable(Runtime.exists) and callable(Runtime.instance)
    assert list(inspect.signature(Runtime.is_active_session).parameters) == ["self", "session_id"]
    assert callable(cli.main)


def _script():
    import streamlit as st

    from ui.server import streamlit_internals

    st.session_state["seen"] = (streamlit_internals.session_id(), streamlit_internals.fragment_rerun())


def test_in_a_script_run_there_is_a_session_id_and_a_full_run_is_no_fragment_rerun():
    at = AppTest.from_function(_script)
    at.run()
    session, fragment = at.session_state["seen"]
    assert isinstance(session, str) and session and fragment is False
    assert streamlit_internals.session_id() is None and streamlit_internals.fragment_rerun() is False  # none here
    assert streamlit_internals.session_connected(session) is False  # no runtime in this process


def test_streamlit_run_finds_the_app_in_asgi_py():
    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(ROOT / "asgi.py")
    assert found.is_asgi_app and found.app_name == "app"


def test_no_other_module_of_the_app_imports_streamlit_s_internals():
    sources = [ROOT / "app.py", ROOT / "asgi.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py")]
    internal = re.compile(r"^\s*(from|import)\s+streamlit\.(runtime|web)\b", re.M)
    found = [p.relative_to(ROOT).as_posix() for p in sources if internal.search(p.read_text(encoding="utf-8"))]
    assert found == ["ui/server/streamlit_internals.py"]

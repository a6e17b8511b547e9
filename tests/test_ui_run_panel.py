"""ui/run_panel.py without a browser: when the page takes a job as ended (the browser's trigger, a panel rerun)."""

from dataclasses import dataclass

import pytest

from ui import run_panel
from ui.settings import state_key


@dataclass
class View:  # the fields of pvnviz.workers.jobqueue.JobView that _ended reads
    state: str
    error: str = ""

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")


@pytest.fixture
def session(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(run_panel.st, "session_state", state)
    return state


@pytest.mark.parametrize(
    ("view", "ended", "state"),
    [
        (View("running"), False, None),
        (View("queued"), False, None),
        (View("done"), True, "done"),
        (View("failed", "change a setting"), True, "failed"),
        (None, True, None),  # forgotten by the queue: the page stops waiting and draws what the cache holds
    ],
)
def test_a_job_ends_when_it_is_over_or_forgotten(monkeypatch, session, view, ended, state):
    monkeypatch.setattr(run_panel.server_queue, "view", lambda job_id: view if job_id == "j1" else None)
    session[state_key("cartpole", "job")] = "j1"
    assert run_panel._ended("cartpole") is ended
    assert session[state_key("cartpole", "job")] == (None if ended else "j1")
    if ended:
        assert session[state_key("cartpole", "ended")] == state
        assert session[state_key("cartpole", "error")] == (view.error if view else None)


def test_no_job_is_not_an_end(monkeypatch, session):
    monkeypatch.setattr(run_panel.server_queue, "view", lambda job_id: None)
    assert run_panel._ended("cartpole") is False
    assert state_key("cartpole", "ended") not in session

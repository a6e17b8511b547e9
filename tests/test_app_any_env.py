"""The Any environment page through Streamlit's AppTest: it opens on Pendulum-v1 with the quick preset and its
spaces, lists the qualifying IDs by family, refuses an environment that does not qualify in one st.error with no
job, runs and stops through the server's routes (the conftest's ``press_run``, ``press_stop``), draws the CartPole
page's results and a replay, and stops its job when the environment changes."""

import time

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

import ui.server.queue
from conftest import (
    ROOT,
    component_data,
    figures,
    no_training,
    open_link,
    open_page,
    players,
    press_run,
    press_stop,
    texts,
)
from pvnviz.envs.gym_id import qualifying_ids
from pvnviz.runs.files import load_result
from pvnviz.runs.presets import presets_for

PAGE = "pages/any_env.py"


class _Still(gymnasium.Env):
    """An environment that stands still: its first observation, reward 0, ending after one step."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, True, False, {}


class _DictObservation(_Still):
    observation_space = spaces.Dict({"position": spaces.Box(-1, 1, (2,))})
    action_space = spaces.Discrete(2)


class _MultiDiscreteAction(_Still):
    observation_space = spaces.Box(-1, 1, (3,))
    action_space = spaces.MultiDiscrete([2, 3])


for _id, _env in (("PvnTestDictObs-v0", _DictObservation), ("PvnTestMultiDiscrete-v0", _MultiDiscreteAction)):
    if _id not in gymnasium.registry:
        gymnasium.register(_id, entry_point=_env)


def _jobs_of(session_state, names: list[str]) -> list:
    return [session_state[f"{name}_job"] for name in names if f"{name}_job" in session_state]


def test_the_page_opens_on_pendulum_s_shipped_quick_run_with_its_spaces(monkeypatch):
    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_page(PAGE)
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert at.selectbox(key="anyenv_env").value == "Pendulum-v1"
    assert at.selectbox(key="gym:Pendulum-v1_preset").value == "quick"
    assert at.number_input(key="gym:Pendulum-v1_horizon").value == 200  # Pendulum-v1's own time limit
    shown = texts(at)
    assert "**Box(3,)**" in shown and "**Box(1,)** in [-2, 2]" in shown and "200 steps" in shown
    assert "shipped run `data/any-env-pendulum-quick`" in shown and at.session_state["seed"] == 10
    assert len(figures(at)) >= 4  # with zero clicks: the dataset, the PVN's training, the ascent, the predictions
    assert component_data(at)["run"]["disabled"] is False


def _comparison_titles(at) -> list[str]:
    return [f["layout"]["title"]["text"] for f in figures(at) if "Where the PVN works" in str(f["layout"].get("title"))]


def test_the_comparison_with_random_search_shows_each_seed_where_one_was_run(monkeypatch):
    """Pendulum-v1 is in data/envs-compare.jsonl: its panel holds a marker per seed for each method; so is
    InvertedPendulum-v5, shown before any run of it; MountainCar-v0 is not: no comparison, no heading."""
    from pvnviz.runs.env_results import shipped_env_results

    monkeypatch.setattr(ui.server.queue, "submit", no_training)
    at = open_page(PAGE)
    (fig,) = [f for f in figures(at) if "Where the PVN works" in str(f["layout"].get("title"))]
    seeds = {r.seed for r in shipped_env_results("gym:Pendulum-v1")}
    assert len(seeds) >= 3 and all(len(trace["y"]) == len(seeds) for trace in fig["data"])
    assert "Against random search at the same budget" in [h.value for h in at.subheader]
    unrun = open_link({"anyenv_env": "InvertedPendulum-v5"}, page=PAGE)  # no run of it yet: the comparison still
    assert len(_comparison_titles(unrun)) == 1
    assert "No result for these settings yet" in texts(unrun)
    other = open_link({"anyenv_env": "MountainCar-v0"}, page=PAGE)
    assert _comparison_titles(other) == []
    assert "Against random search at the same budget" not in [h.value for h in other.subheader]


def test_the_shipped_run_is_the_quick_preset_of_today():
    """The page opens on it only while it is the quick preset's run: remake it with the command in pages/any_env.py
    when the preset changes."""
    result = load_result(ROOT / "data" / "any-env-pendulum-quick", "gym:Pendulum-v1")
    assert result.config == presets_for("gym:Pendulum-v1")["quick"]() and result.seed == 10


def test_the_environment_box_lists_the_qualifying_ids_by_family():
    at = open_page(PAGE)
    box = at.selectbox(key="anyenv_env")
    listed = qualifying_ids()
    expected = [f"{i}  ·  {family}" for family, ids in listed.items() for i in ids]
    assert box.options == expected  # family by family, as qualifying_ids orders them
    for env_id, family in (("Pendulum-v1", "classic control"), ("Acrobot-v1", "classic control"),
                           ("Hopper-v5", "MuJoCo")):  # fmt: skip
        assert env_id in listed[family]


@pytest.mark.parametrize(
    "params, said",
    [
        ({"anyenv_env": "PvnTestDictObs-v0"}, "observes Dict"),
        ({"anyenv_env": "PvnTestMultiDiscrete-v0"}, "acts in MultiDiscrete"),
        ({"anyenv_env": "NoSuchEnvironment-v3"}, "doesn't exist"),
        ({"anyenv_env": "Pendulum-v1", "anyenv_kwargs": "gravity_constant=3"}, "refuses the keywords"),
        ({"anyenv_env": "Pendulum-v1", "anyenv_kwargs": "g"}, "is not key=value"),
    ],
)
def test_an_environment_that_does_not_qualify_is_one_error_and_no_job(params, said):
    at = open_link(params, page=PAGE, clean=False)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and said in at.error[0].value, [e.value for e in at.error]
    assert "Traceback" not in at.error[0].value and "\n" not in at.error[0].value.strip()
    assert not [e for e in at.get("bidi_component") if e.proto.component_name == "pvn_job_progress"]  # no Run
    assert not [k for k in at.session_state if str(k).endswith("_job")]


def _small(env: str) -> dict[str, str]:
    """A link to a live run of ``env`` small enough for a unit test (seconds), every stage included."""
    key = f"gym:{env}"
    return {
        "anyenv_env": env,
        f"{key}_num_policies": "40",
        f"{key}_horizon": "60",
        f"{key}_train_steps": "150",
        f"{key}_ascent_steps": "20",
        f"{key}_eval_every": "10",
        f"{key}_num_starts": "2",
    }


def _wait(at, job_key: str, seconds: float = 240):
    job_id = at.session_state[job_key]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = ui.server.queue.job_queue().view(job_id)
        if not job.active:
            at.run()
            return job
        at.run()
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} still running after {seconds} s")


@pytest.mark.slow
@pytest.mark.parametrize("env", ["Pendulum-v1", "Acrobot-v1", "Hopper-v5"])
def test_run_trains_in_a_worker_and_draws_the_cartpole_page_s_results_and_a_replay(env):
    at = open_link({**_small(env), "seed": "3"}, page=PAGE)
    press_run(at)
    at.run()
    job = _wait(at, f"gym:{env}_job")
    assert job.state == "done" and not job.error, job
    assert job.key[1].env_name == f"gym:{env}" and job.key[1].num_policies == 40 and job.key[2] == 3
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert "live run of these settings" in texts(at)
    names = [f.get("layout", {}).get("title", {}).get("text", "") for f in figures(at)]
    assert len(names) >= 4, names  # the dataset's returns, the PVN's training, the ascent, the predictions
    made = players(at)  # keyed by the end of each player's element id (the environment's name holds a "-")
    assert {"val", "probes", "replay"} <= {key.rsplit("_", 1)[-1] for key in made}, list(made)
    replay = next(data for key, data in made.items() if key.endswith("_replay"))["animation"]
    variant = next(iter(replay["variants"].values()))
    (figure,) = variant["figures"].values()
    moving = [t for t in figure["data"] if t.get("mode") == "lines+markers"]
    assert moving and len(variant["frames"]) > 1  # the policy's body moves over the episode


@pytest.mark.slow
def test_stop_cancels_the_run_and_keeps_the_page():
    at = open_link({**_small("Pendulum-v1"), "gym:Pendulum-v1_train_steps": "50000", "seed": "4"}, page=PAGE)
    press_run(at)
    at.run()
    job_id = at.session_state["gym:Pendulum-v1_job"]
    assert ui.server.queue.job_queue().view(job_id).active
    assert press_stop(component_data(at)["stopUrl"])
    at.run()
    deadline = time.monotonic() + 10
    while ui.server.queue.job_queue().view(job_id).active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ui.server.queue.job_queue().view(job_id).state == "cancelled"
    assert "Run stopped" in texts(at) and not at.exception


@pytest.mark.slow
def test_changing_the_environment_stops_this_session_s_run_there():
    at = open_link({**_small("Pendulum-v1"), "gym:Pendulum-v1_train_steps": "50000", "seed": "5"}, page=PAGE)
    press_run(at)
    at.run()
    job_id = at.session_state["gym:Pendulum-v1_job"]
    assert ui.server.queue.job_queue().view(job_id).active
    at.selectbox(key="anyenv_env").set_value("Acrobot-v1").run()
    assert not at.exception and not at.error
    deadline = time.monotonic() + 10
    while ui.server.queue.job_queue().view(job_id).active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ui.server.queue.job_queue().view(job_id).state == "cancelled"  # nobody else waited on it
    assert at.session_state["gym:Pendulum-v1_job"] is None


def test_keywords_in_the_link_name_the_environment_and_its_settings():
    at = open_link({"anyenv_env": "Pendulum-v1", "anyenv_kwargs": "g=5.5"}, page=PAGE)
    assert not at.error, [e.value for e in at.error]
    assert "`gym:Pendulum-v1?g=5.5`" in texts(at)
    assert at.selectbox(key="gym:Pendulum-v1?g=5.5_preset").value == "quick"
    assert at.query_params["gym:Pendulum-v1?g=5.5_preset"] == "quick"
    assert np.isclose(at.number_input(key="gym:Pendulum-v1?g=5.5_horizon").value, 200)

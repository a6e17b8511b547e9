"""``ui.result_choice.choose_result``: which result an environment page draws, decided without Streamlit.

Every branch, and the precedence between them: an upload over a saved run over the settings; for readable
settings a live run over a shipped run over the last result over a shipped fallback.
"""

import dataclasses

import pytest

from pvnviz.runs.presets import PRESETS
from ui.result_choice import ResultChoice, Source, choose_result

PAPER = PRESETS["cartpole"]["paper"]()
QUICK = PRESETS["cartpole"]["quick"]()
SHIPPED = {"paper": (PAPER, 0, "data/cartpole-paper"), "quick": (QUICK, 0, "data/cartpole-quick")}
LIVE, LAST = object(), object()  # stand-ins: the choice passes results through without looking into them


def choose(**changes) -> ResultChoice:
    """The choice for a page on the paper preset, seed 0, nothing opened, nothing live or remembered; ``changes``
    override those inputs."""
    inputs = dict(
        uploaded=False, run_dir="", config=PAPER, seed=0, live=None, shipped=SHIPPED, last=None, preset="paper"
    )
    return choose_result(**{**inputs, **changes})


def test_an_uploaded_zip_comes_first():
    assert choose(uploaded=True, run_dir="data/cartpole-quick", live=LIVE, last=LAST) == ResultChoice(Source.UPLOAD)


def test_a_saved_run_picked_in_the_sidebar_comes_before_the_settings():
    choice = choose(run_dir="runs/mine", live=LIVE, last=LAST)
    assert choice == ResultChoice(Source.SAVED_RUN, folder="runs/mine")


@pytest.mark.parametrize("last", [LAST, None])
def test_settings_that_cannot_be_read_show_the_last_result_if_any(last):
    assert choose(config=None, live=LIVE, last=last) == ResultChoice(Source.INVALID, result=last)


def test_a_finished_live_run_comes_before_a_shipped_run_of_the_same_settings():
    assert choose(live=LIVE, last=LAST) == ResultChoice(Source.LIVE, result=LIVE)


def test_a_shipped_run_of_exactly_these_settings_and_seed():
    assert choose(last=LAST) == ResultChoice(Source.SHIPPED, folder="data/cartpole-paper", preset="paper")
    assert choose(config=QUICK, preset="paper") == ResultChoice(
        Source.SHIPPED, folder="data/cartpole-quick", preset="quick"
    )


@pytest.mark.parametrize(
    "changes",
    [dict(seed=3), dict(config=dataclasses.replace(PAPER, train_steps=PAPER.train_steps + 1))],
    ids=["another seed", "another field"],
)
def test_settings_not_run_yet_show_the_last_result(changes):
    assert choose(last=LAST, **changes) == ResultChoice(Source.NOT_RUN, result=LAST)


def test_settings_not_run_yet_without_a_last_result_show_the_shipped_run_of_the_preset_in_force():
    assert choose(seed=3, preset="quick") == ResultChoice(Source.NOT_RUN, folder="data/cartpole-quick")
    # a preset without a shipped run (or none in force): the first shipped run
    assert choose(seed=3, preset="linear") == ResultChoice(Source.NOT_RUN, folder="data/cartpole-paper")
    assert choose(seed=3, preset=None) == ResultChoice(Source.NOT_RUN, folder="data/cartpole-paper")


def test_nothing_when_no_run_made_these_settings_and_none_is_shipped_or_remembered():
    assert choose(seed=3, shipped={}, preset=None) == ResultChoice(Source.NOTHING)
    assert choose(shipped={}, preset=None) == ResultChoice(Source.NOTHING)


"""The active rounds' animation (pvnviz.figures.polytope_rounds): its frames, the checks each shows, the zero-shot
ascent fixed in every frame, and the animation the player gets equal to the frames drawn one by one."""

import numpy as np
import pytest

from conftest import frame_figures
from pvnviz.figures import theme
from pvnviz.figures.polytope_rounds import (
    FRAMES_PER_ROUND,
    checks_at,
    frame_at,
    frame_labels,
    num_frames,
    rounds_animation,
    rounds_frame,
)
from pvnviz.figures.roles import trace_index
from pvnviz.polytope.experiment import exact_view, train_polytope_pvn
from pvnviz.polytope.rounds import PolytopeRoundsConfig, active_rounds

SEED = 3


@pytest.fixture(scope="module")
def made():
    config = PolytopeRoundsConfig()
    rounds = active_rounds(config, train_polytope_pvn(config, SEED), SEED)
    return config, rounds, exact_view(config, SEED), rounds_animation(rounds, exact_view(config, SEED), 20, SEED)


def shown(anim: dict, t: int) -> dict:
    return frame_figures({"animation": anim, "frame": t})["rounds"]


def points(fig: dict, role: str) -> np.ndarray:
    trace = fig["data"][trace_index(fig, role)]
    return np.stack([np.asarray(trace["x"], dtype=float), np.asarray(trace["y"], dtype=float)], axis=-1)


def test_one_frame_a_tenth_of_a_round_and_the_last_frame_of_each_round_its_whole_ascent(made):
    config, rounds, _, anim = made
    assert num_frames(rounds) == len(rounds.rounds) * FRAMES_PER_ROUND == len(anim["frames"]) == 70
    assert len(anim["labels"]) == 70
    for r in range(len(rounds.rounds)):
        assert frame_at(rounds, r * FRAMES_PER_ROUND + FRAMES_PER_ROUND - 1) == (r, config.ascent_steps)
    assert frame_at(rounds, 0) == (0, config.ascent_steps // FRAMES_PER_ROUND)


def test_the_checks_of_a_rounds_last_frame_are_exactly_the_checks_made_up_to_that_round(made):
    _, rounds, _, anim = made
    made_so_far = rounds.all_checks()
    for r, one in enumerate(rounds.rounds):
        fig = shown(anim, r * FRAMES_PER_ROUND + FRAMES_PER_ROUND - 1)
        n = one.checks_spent
        assert points(fig, "checks:1") == pytest.approx(made_so_far.policies[:n], abs=1e-4)
        assert points(fig, "checks:2") == pytest.approx(made_so_far.values[:n], abs=1e-4)
        best = int(np.argmax(made_so_far.J[:n]))
        trace = fig["data"][trace_index(fig, "checks:1")]
        ringed = [i for i, c in enumerate(trace["marker"]["line"]["color"]) if c != "white"]
        assert ringed == [best]  # Algorithm 3's choice so far, ringed
        assert f"checks: {n} of 20" in anim["labels"][r * FRAMES_PER_ROUND + FRAMES_PER_ROUND - 1]
        assert f"checks: {n} of 20" in fig["layout"]["title"]["text"]
    assert rounds.rounds[-1].checks_spent == 19  # docs/results.md: 19 checks on every seed


def test_a_rounds_perturbations_appear_before_its_ascent_and_an_iterate_once_reached(made):
    _, rounds, _, _ = made
    r = 2
    before = rounds.rounds[r - 1].checks_spent
    assert len(checks_at(rounds, r, 0).J) == before + len(rounds.rounds[r].perturbed.J)
    assert len(checks_at(rounds, r, 100).J) == rounds.rounds[r].checks_spent


def test_the_zero_shot_ascent_is_the_same_in_every_frame_and_the_field_is_the_rounds(made):
    _, rounds, exact, anim = made
    zero = rounds.rounds[0].ascent
    fields: dict[int, str] = {}
    for t in range(num_frames(rounds)):
        fig = shown(anim, t)
        assert points(fig, "zero-shot:1") == pytest.approx(zero.policies, abs=1e-4)
        assert points(fig, "zero-shot:2") == pytest.approx(zero.values, abs=1e-4)
        r, step = frame_at(rounds, t)
        assert len(points(fig, "current:1")) == step + 1
        (field,) = fig["layout"]["shapes"]  # the field, an SVG path on the policy square
        assert fields.setdefault(r, field["path"]) == field["path"]  # one field a round
    assert len(set(fields.values())) == len(rounds.rounds)  # and a new one every round


@pytest.mark.parametrize("t", [0, 13, 39, 69])
def test_the_animation_draws_what_each_frame_drawn_whole_draws(made, t):
    _, rounds, exact, anim = made
    from pvnviz.figures.frames import plain_json

    whole = plain_json(rounds_frame(rounds, exact, 20, t, SEED))
    played = shown(anim, t)
    assert played["layout"]["title"]["text"] == whole["layout"]["title"]["text"]
    assert len(played["data"]) == len(whole["data"])
    for a, b in zip(played["data"], whole["data"]):
        for key in ("x", "y", "marker", "text"):
            assert a.get(key) == b.get(key) or np.allclose(
                np.asarray(a.get(key), dtype=float), np.asarray(b.get(key), dtype=float), equal_nan=True
            ), (a.get("meta"), key)
    assert played["layout"]["shapes"][0]["path"] == whole["layout"]["shapes"][0]["path"]
    assert frame_labels(rounds, 20)[t] == anim["labels"][t]


def test_every_axis_has_a_title_and_the_traces_a_legend(made):
    _, rounds, exact, _ = made
    fig = rounds_frame(rounds, exact, 20, num_frames(rounds) - 1, SEED).to_plotly_json()
    for key, axis in fig["layout"].items():
        if key.startswith(("xaxis", "yaxis")):
            assert axis.get("title", {}).get("text"), key
    names = {t.get("name") for t in fig["data"] if t.get("showlegend", True) is not False}
    assert any("zero-shot" in n for n in names) and any("checked" in n for n in names)


def test_the_projector_look_enlarges_every_frames_checks(made):
    _, rounds, exact, anim = made
    big = rounds_animation(rounds, exact, 20, SEED, projector=True)
    for t in (0, 35, 69):
        normal, large = shown(anim, t), shown(big, t)
        for col in (1, 2):
            a = normal["data"][trace_index(normal, f"checks:{col}")]["marker"]["size"]
            b = large["data"][trace_index(large, f"checks:{col}")]["marker"]["size"]
            assert b == pytest.approx([v * theme.PROJECTOR_SCALE for v in a])
        assert "<br>" in large["layout"]["title"]["text"]  # wrapped to the projector's line


def test_the_seed_the_page_names_stalls_zero_shot_and_arrives_with_the_rounds():
    from pvnviz.polytope.experiment import PolytopeConfig, learned_view
    from pvnviz.polytope.survey import J_TOLERANCE
    from ui.polytope_rounds import STALLED_SEED

    config = PolytopeRoundsConfig()
    trained = train_polytope_pvn(config, STALLED_SEED)
    zero_shot = learned_view(PolytopeConfig(), trained).ascent
    rounds = active_rounds(config, trained, STALLED_SEED)
    assert zero_shot.policies[-1][0] < 0.2  # near the P(a1|s1) = 0 edge
    assert rounds.optimal_J - zero_shot.exact_J[-1] > 4 * J_TOLERANCE  # far below J*
    assert rounds.optimal_J - rounds.best_exact_J <= J_TOLERANCE

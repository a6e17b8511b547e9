"""Presets (pvnviz/runs/presets.py): Appendix B's numbers, ids that last, labels that say what the preset runs, and
old links' labels."""

import pytest

from pvnviz.runs.presets import LINK_LABELS_BEFORE_IDS, PRESET_LABELS, PRESETS, preset_from_link, preset_label

# What the pages' links held before they held ids (the pages' PRESET_NAMES: labels), written out here
# rather than read from the module: a link made then must open the same preset whatever the module says now.
OLD_LINKS = {
    "cartpole": {
        "Quick": "quick",
        "Paper (MLP [30])": "paper",
        "Paper (linear)": "paper-linear",
        "Beyond zero-shot (MLP [30])": "beyond",
        "Beyond zero-shot (linear)": "beyond-linear",
    },
    "swimmer": {
        "10 M steps: 10,000 policies x 1 rollout": "budget-10000x1",
        "10 M steps: 2000 policies x 5 rollouts": "budget-2000x5",
        "Beyond zero-shot: 10,000 x 1, best-policy starts, 6 active rounds": "beyond",
        "Paper (Appendix B: 2000 x 500 rollouts, 10^9 steps, hours)": "paper",
        "Quick (live, under a minute)": "quick",
    },
}


@pytest.mark.parametrize("env", ["cartpole", "swimmer"])
def test_every_preset_has_one_label_and_labels_differ(env):
    assert set(PRESET_LABELS[env]) == set(PRESETS[env])
    # the sidebar's closed box shows a label's first 24 characters or so: they tell the presets apart
    assert len({label[:24] for label in PRESET_LABELS[env].values()}) == len(PRESETS[env])


def test_the_gym_presets_labels_differ_where_the_closed_box_cuts_them():
    from pvnviz.runs.presets import GYM_PRESET_LABELS, presets_for

    for name in ("gym:Acrobot-v1", "gym:Pendulum-v1"):  # a Discrete and a Box action: every gym preset between them
        presets = presets_for(name)
        assert set(presets) <= set(GYM_PRESET_LABELS)
    assert len({label[:24] for label in GYM_PRESET_LABELS.values()}) == len(GYM_PRESET_LABELS)


@pytest.mark.parametrize("env", ["cartpole", "swimmer"])
def test_old_links_open_the_preset_they_named(env):
    for label, preset in OLD_LINKS[env].items():
        assert preset_from_link(env, label) == preset, label
    assert set(LINK_LABELS_BEFORE_IDS[env].values()) <= set(PRESETS[env])  # no alias points at a removed id


@pytest.mark.parametrize("env", ["cartpole", "swimmer"])
def test_links_take_ids_and_refuse_anything_else(env):
    for preset in PRESETS[env]:
        assert preset_from_link(env, preset) == preset
    for text in ("", "Mine", "QUICK", "quick ", "beyond-linear" if env == "swimmer" else "budget-2000x5"):
        assert preset_from_link(env, text) is None, text


def test_an_environment_without_labels_shows_its_ids():
    assert preset_label("line", "paper") == "paper"
    assert preset_from_link("line", "paper") is None  # no presets registered for it here


def test_labels_say_what_the_presets_run():
    """Each preset's label states what it runs (e.g. the Swimmer beyond preset's active rounds)."""
    swimmer = PRESETS["swimmer"]["beyond"]()
    assert f"{swimmer.rounds} active rounds" in preset_label("swimmer", "beyond")
    assert f"{swimmer.num_policies:,} x {swimmer.num_episodes}" in preset_label("swimmer", "beyond")
    for preset in ("budget-10000x1", "budget-2000x5"):
        config = PRESETS["swimmer"][preset]()
        steps = config.num_policies * config.num_episodes * config.horizon
        assert preset_label("swimmer", preset).startswith(f"{steps // 10**6} M steps"), preset
    for preset, make in PRESETS["cartpole"].items():
        linear = make().policy_hidden == ()
        assert ("linear" in preset_label("cartpole", preset)) == linear, preset


def test_defaults_are_the_papers_cartpole_mlp():
    c = PRESETS["cartpole"]["paper"]()
    assert (c.num_policies, c.num_episodes, c.horizon, c.return_limit, c.num_bins) == (1000, 100, 100, 30.0, 41)
    assert (c.num_probes, c.train_probes, c.pvn_hidden, c.temperature) == (20, True, (80,), 3.0)
    assert (c.learning_rate, c.train_steps, c.batch_size) == (0.003, 3000, 32)
    assert (c.num_starts, c.ascent_steps, c.ascent_learning_rate, c.policy_hidden) == (5, 400, 0.001, (30,))
    linear = PRESETS["cartpole"]["paper-linear"]()
    assert linear.policy_hidden == () and linear.ascent_steps == 100


def test_swimmer_paper_preset_is_appendix_b():
    c = PRESETS["swimmer"]["paper"]()
    assert (c.num_policies, c.num_episodes, c.num_bins, c.pvn_hidden, c.learning_rate, c.train_steps) == (
        2000, 500, 51, (80,), 0.003, 5000,
    )  # fmt: skip
    assert (c.batch_size, c.num_starts, c.ascent_learning_rate, c.ascent_steps, c.policy_hidden, c.horizon) == (
        32, 5, 0.002, 1000, (30,), 1000,
    )  # fmt: skip
    assert c.return_limit is None and c.num_probes == 20 and c.train_probes


@pytest.mark.parametrize("preset, policies, episodes", [("budget-2000x5", 2000, 5), ("budget-10000x1", 10_000, 1)])
def test_swimmer_budget_presets_spend_the_papers_10_million_steps(preset, policies, episodes):
    c = PRESETS["swimmer"][preset]()
    assert (c.num_policies, c.num_episodes) == (policies, episodes)
    assert c.num_policies * c.num_episodes * c.horizon == 10_000_000

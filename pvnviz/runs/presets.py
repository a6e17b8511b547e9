"""The named settings of every experiment: Appendix B's tables as presets, and this project's budgets.

``PRESETS[env][id]()`` builds an ``ExperimentConfig``. The id is a preset's name for good: the CLI's
``--preset``, the pages' links (``?cartpole_preset=quick``) and the shipped runs under ``data/`` use it.
``PRESET_LABELS[env][id]`` is what the pages' preset box shows, display text free to change; links made
before they held ids named presets by their labels of then (``LINK_LABELS_BEFORE_IDS``), and still open.
``paper`` is Appendix B exactly (Section 6.2 for CartPole, 6.3 for Swimmer); ``budget-*`` name what they
spend; ``beyond`` adds this project's active rounds (README, "Beyond zero-shot"); ``quick`` runs live in
under a minute.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pvnviz.runs.pipeline import ExperimentConfig

# Section 6.3 and Appendix B exactly: 2000 deterministic MLP [30] policies x 500 rollouts (10^9 env
# steps, about 8 hours of collection on 2 cores here; not run in this project), 51 bins, 5000 training
# steps, ascent Adam lr 0.002 for 1000 steps, no training-set limit.
SWIMMER_PAPER = ExperimentConfig(
    env_name="swimmer",
    policy_hidden=(30,),
    num_policies=2000,
    num_episodes=500,
    horizon=1000,
    return_limit=None,
    num_bins=51,
    train_steps=5000,
    inputs=("fingerprint",),
    ascent_steps=1000,
    ascent_learning_rate=0.002,
    eval_every=50,
    eval_episodes=5,
    log_every=50,
    fresh_episodes=10,
)

# The active rounds of a discrete-action beyond preset (docs/beyond.md): on the paper's dataset (1000 policies x
# 100 episodes), a faster ascent in rounds of 200 steps checked only at each round's two ends (20 episodes each),
# the checks added to the PVN's data, round after round (at most 60) until the next round could take the checks
# past 25% of the dataset's env steps. Each start's iterate is chosen on the mean of all checks of the same policy
# (a round's start is re-measured), so a lucky check cannot hold every later round at a policy it overstated.
DISCRETE_ROUNDS = ExperimentConfig(
    ascent_learning_rate=0.003,
    ascent_steps=200,
    eval_every=200,
    eval_episodes=20,
    rounds=60,
    max_beyond_fraction=0.25,
    pool_checks=True,
)

# CartPole beyond zero-shot: the same rounds with 10 episodes a check, at most 100 rounds. Checks of policies near
# the 100-step horizon cost most of a round; half the episodes buy up to twice the PVN's fine-tunings within the
# same 25%, and the cap, not the round count, ends the rounds. Pooled, a policy checked at both ends of a round is
# still measured on 20 episodes. The PVN reads log-probability fingerprints (a near-deterministic policy's
# probabilities all sit at 0 or 1, so the fingerprints of different policies look alike) through leaky ReLUs (on
# log-probabilities a ReLU PVN can go flat, gradient exactly 0, and the ascent stops): chosen on seeds 300-319.
CARTPOLE_BEYOND = dataclasses.replace(
    DISCRETE_ROUNDS,
    eval_episodes=10,
    rounds=100,
    fingerprint_outputs="log_probabilities",
    pvn_activation="leaky_relu",
)

# Swimmer beyond zero-shot: budget-10000x1, ascents starting from the dataset's 5 best policies, 10 active rounds
# of 1000 steps checked at steps 10, 25, 50, 100 and every 200: checks cost 25% of the dataset, the cap (README,
# "Beyond zero-shot").
SWIMMER_BEYOND = dataclasses.replace(
    SWIMMER_PAPER,
    num_policies=10000,
    num_episodes=1,
    start_from="dataset",
    rounds=10,
    eval_every=200,
    early_checks=(10, 25, 50, 100),
    max_beyond_fraction=0.25,
)

# Swimmer at ARS's budget, spent ARS's way (docs/random-search.md): linear policies, ARS's own; a dataset of
# 2500 x 1 (2.5 M env steps) and the other 10 M steps (4x the dataset's) in active rounds from the dataset's 5 best,
# each round as SWIMMER_BEYOND's: 40 rounds (the cap ends them, not the count), 12.5 M steps in all.
SWIMMER_BUDGET_ARS = dataclasses.replace(
    SWIMMER_BEYOND, policy_hidden=(), num_policies=2500, rounds=60, max_beyond_fraction=4.0
)

PRESETS: dict[str, dict[str, Callable[[], ExperimentConfig]]] = {
    "cartpole": {
        "paper": lambda: ExperimentConfig(),
        "paper-linear": lambda: ExperimentConfig(policy_hidden=(), ascent_steps=100),
        "beyond": lambda: CARTPOLE_BEYOND,
        # Linear policies keep the checks every 50 steps (at most 30 rounds), each check chosen on alone: the
        # settings they were chosen and tested with.
        "beyond-linear": lambda: dataclasses.replace(
            DISCRETE_ROUNDS, policy_hidden=(), ascent_learning_rate=0.1, eval_every=50, rounds=30, pool_checks=False
        ),
        "quick": lambda: ExperimentConfig(
            num_policies=300, num_episodes=30, train_steps=1500, ascent_steps=200, eval_episodes=30
        ),
    },
    "swimmer": {
        "paper": lambda: SWIMMER_PAPER,
        # Appendix B's 2000 policies with 5 rollouts each (10 M env steps, the paper's budget scaled down).
        "budget-2000x5": lambda: dataclasses.replace(SWIMMER_PAPER, num_episodes=5),
        # The same 10 M environment steps spent on 5x more policies, one rollout each:
        # with deterministic policies a second rollout adds little (README, Swimmer results).
        "budget-10000x1": lambda: dataclasses.replace(SWIMMER_PAPER, num_policies=10000, num_episodes=1),
        "beyond": lambda: SWIMMER_BEYOND,
        "budget-ars": lambda: SWIMMER_BUDGET_ARS,
        # budget-ars with shared restarts: each round the start whose best iterate is estimated lowest restarts
        # from the best iterate of the start estimated highest (docs/random-search.md, chosen on seed 140).
        "budget-ars-shared": lambda: dataclasses.replace(SWIMMER_BUDGET_ARS, share_best=True),
        "quick": lambda: dataclasses.replace(
            SWIMMER_PAPER,
            num_policies=300,
            num_episodes=1,  # one rollout, as in the paper-wide preset: under a minute on 2 shared cores
            train_steps=2000,
            ascent_steps=300,
            eval_every=50,
            eval_episodes=2,
        ),
    },
}

# What the pages' preset box shows for each id: display text, free to change (links and runs hold the id).
PRESET_LABELS: dict[str, dict[str, str]] = {
    "cartpole": {
        "paper": "Paper (MLP [30])",
        "paper-linear": "Paper (linear)",
        "beyond": "Beyond zero-shot (MLP [30])",
        "beyond-linear": "Beyond zero-shot (linear)",
        "quick": "Quick",
    },
    "swimmer": {
        "paper": "Paper (Appendix B: 2000 x 500 rollouts, 10^9 steps, hours)",
        "budget-2000x5": "10 M steps: 2000 policies x 5 rollouts",
        "budget-10000x1": "10 M steps: 10,000 policies x 1 rollout",
        "beyond": "Beyond zero-shot: 10,000 x 1, best-policy starts, 10 active rounds",
        "budget-ars": "ARS's 12.5 M steps: linear, 2500 x 1, then 40 active rounds",
        "budget-ars-shared": "Shared restarts, ARS's 12.5 M steps: linear, 2500 x 1, 40 rounds",
        "quick": "Quick (live, under a minute)",
    },
}

# The labels that links carried (``?cartpole_preset=Quick``) until links held ids, exactly as they were, so
# that those links still open their preset. Frozen: a label changed above is not changed here.
LINK_LABELS_BEFORE_IDS: dict[str, dict[str, str]] = {
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
        "Beyond zero-shot: 10,000 x 1, best-policy starts, 6 active rounds": "beyond",  # it ran 10 rounds
        "Paper (Appendix B: 2000 x 500 rollouts, 10^9 steps, hours)": "paper",
        "Quick (live, under a minute)": "quick",
    },
}


# gym:ID (pvnviz.envs.gym_id): the same shapes for any qualifying gymnasium environment, its horizon its own
# episode limit. Discrete actions take CartPole's Appendix B shape (stochastic softmax policies, 100 rollouts
# each), a Box takes the Swimmer's (deterministic tanh policies); neither filters returns, since a return limit
# is CartPole's alone. A Box also has the Swimmer's ``budget-10000x1``, whose dataset its ``beyond`` shares.
# ``quick`` is sized from the environment's measured speed to run in under a minute here.
GYM_PRESET_LABELS = {
    "paper": "Paper's sizes (CartPole's for Discrete actions, Swimmer's for a Box)",
    "budget-10000x1": "10,000 policies x 1 rollout (Box actions, as the Swimmer's)",
    "beyond": "Beyond zero-shot: the paper's sizes plus active rounds",
    "quick": "Quick (under a minute)",
    "beyond-1M": "Beyond zero-shot on a dataset of at most 1 M env steps",
}
GYM_SMALL_DATASET_STEPS = 1_000_000  # beyond-1M: the most env steps its dataset's episodes may take
GYM_DEFAULT_HORIZON = 1000  # for an environment without a time limit of its own
QUICK_SECONDS = 40.0  # the estimate (pvnviz.runs.sizing) a quick preset stays under, on one core
QUICK_COLLECT_SHARE = 0.6  # of which the dataset may take this share
QUICK_MAX_POLICIES = 1000
QUICK_MIN_HORIZON = 100  # a slow environment's quick preset may cut its episodes down to this


def gym_horizon(env_name: str) -> int:
    """The horizon of a gym: environment's presets: its own episode limit, else ``GYM_DEFAULT_HORIZON``."""
    from pvnviz.envs.gym_id import check_qualifies, parse_env_name

    return check_qualifies(parse_env_name(env_name)).max_episode_steps or GYM_DEFAULT_HORIZON


def _gym_discrete(env_name: str) -> bool:
    from pvnviz.envs.gym_id import check_qualifies, parse_env_name

    return check_qualifies(parse_env_name(env_name)).discrete


def gym_paper(env_name: str) -> ExperimentConfig:
    """Appendix B's sizes on a gym: environment: CartPole's for Discrete actions, the Swimmer's for a Box."""
    horizon = gym_horizon(env_name)
    if _gym_discrete(env_name):
        return ExperimentConfig(env_name=env_name, horizon=horizon, return_limit=None)
    return dataclasses.replace(SWIMMER_PAPER, env_name=env_name, horizon=horizon)


def gym_beyond(env_name: str) -> ExperimentConfig:
    """``gym_paper`` plus the active rounds of its action kind: ``DISCRETE_ROUNDS``, or the Swimmer's beyond
    preset's for a Box."""
    paper = gym_paper(env_name)
    if _gym_discrete(env_name):
        rounds = {f.name: getattr(DISCRETE_ROUNDS, f.name) for f in dataclasses.fields(DISCRETE_ROUNDS)}
        changed = {k: v for k, v in rounds.items() if v != getattr(ExperimentConfig(), k)}
        return dataclasses.replace(paper, **changed)
    swimmer = PRESETS["swimmer"]["beyond"]()
    changed = {f.name: getattr(swimmer, f.name) for f in dataclasses.fields(swimmer)}
    changed = {k: v for k, v in changed.items() if k != "env_name" and v != getattr(SWIMMER_PAPER, k)}
    return dataclasses.replace(paper, **changed)


def gym_beyond_small(env_name: str) -> ExperimentConfig:
    """``gym_beyond`` on a dataset whose episodes take at most ``GYM_SMALL_DATASET_STEPS`` env steps, where the
    paper-sized one does not fit the time a comparison has here (docs/env-results.md).

    A Box: one rollout a policy, as many policies as the steps allow (at least 1000). Discrete actions: 1000
    policies, as many rollouts each as the steps allow (at least 1). The rounds' cap stays a fraction of the
    dataset's steps, so a smaller dataset also buys fewer rounds."""
    config = gym_beyond(env_name)
    horizon = config.horizon
    if _gym_discrete(env_name):
        episodes = max(1, GYM_SMALL_DATASET_STEPS // (config.num_policies * horizon))
        return dataclasses.replace(config, num_episodes=min(config.num_episodes, episodes))
    policies = max(1000, GYM_SMALL_DATASET_STEPS // horizon)
    return dataclasses.replace(config, num_policies=min(config.num_policies, policies), num_episodes=1)


def gym_quick(env_name: str) -> ExperimentConfig:
    """A run of the whole pipeline in under a minute here: the paper's shape with both PVN inputs (fingerprint and
    flattened weights, whatever the action space), the dataset sized from the
    environment's measured steps per second (``BatchedEnv.steps_per_second``) so that the estimate stays under
    ``QUICK_SECONDS``; at least 40 policies. An environment too slow for that gets fewer checks of one episode
    each, then episodes cut to as few as ``QUICK_MIN_HORIZON`` steps."""
    from pvnviz.envs.registry import get_env
    from pvnviz.runs.sizing import estimate

    rate = get_env(env_name).steps_per_second
    horizon = gym_horizon(env_name)
    discrete = _gym_discrete(env_name)
    episodes = 5 if discrete else 1
    ascent = {"ascent_steps": 200, "eval_every": 50, "eval_episodes": 5 if discrete else 2, "fresh_episodes": 10}
    budget_steps = QUICK_SECONDS * QUICK_COLLECT_SHARE * rate
    policies = int(min(QUICK_MAX_POLICIES, max(40, budget_steps // (episodes * horizon))))
    config = dataclasses.replace(  # both inputs, as CartPole's: fingerprint against flattened weights
        gym_paper(env_name),
        num_policies=policies,
        num_episodes=episodes,
        train_steps=1500,
        inputs=("fingerprint", "flattened"),
        **ascent,
    )
    while estimate(config).seconds > QUICK_SECONDS and config.num_policies > 40:
        config = dataclasses.replace(config, num_policies=max(40, config.num_policies * 3 // 4))
    if estimate(config).seconds > QUICK_SECONDS:  # a slow environment: fewer checks, one episode each
        config = dataclasses.replace(config, eval_every=config.ascent_steps, eval_episodes=1, fresh_episodes=2)
    while estimate(config).seconds > QUICK_SECONDS and config.horizon > QUICK_MIN_HORIZON:  # then shorter episodes
        config = dataclasses.replace(config, horizon=max(QUICK_MIN_HORIZON, config.horizon // 2))
    return config


def presets_for(env_name: str) -> dict[str, Callable[[], ExperimentConfig]]:
    """The presets of an environment by name: ``PRESETS``' for a built-in one, ``paper``, ``beyond`` and
    ``quick`` for a gym: one (``pvnviz.envs.gym_id``; EnvRefused, one line, if it does not qualify)."""
    from pvnviz.envs.gym_id import check_qualifies, is_gym_name, parse_env_name

    if not is_gym_name(env_name):
        return PRESETS[env_name]
    name = parse_env_name(env_name).name
    check_qualifies(parse_env_name(name))
    presets = {"paper": lambda: gym_paper(name)}
    if not _gym_discrete(name):  # as the Swimmer's: the paper's 10 M-step budget, one rollout per policy
        presets["budget-10000x1"] = lambda: dataclasses.replace(gym_paper(name), num_policies=10000, num_episodes=1)
    presets["beyond"] = lambda: gym_beyond(name)
    presets["quick"] = lambda: gym_quick(name)
    presets["beyond-1M"] = lambda: gym_beyond_small(name)
    return presets


def preset_label(env_name: str, preset: str) -> str:
    """The preset box's text for a preset id (the id itself for an environment without labels)."""
    if env_name.startswith("gym:"):
        return GYM_PRESET_LABELS.get(preset, preset)
    return PRESET_LABELS.get(env_name, {}).get(preset, preset)


def preset_from_link(env_name: str, text: str) -> str | None:
    """The id of the preset a link's value names: an id, or a label that links carried before they held ids;
    None when it names no preset of this environment."""
    if text in PRESETS.get(env_name, {}) or (env_name.startswith("gym:") and text in GYM_PRESET_LABELS):
        return text
    return LINK_LABELS_BEFORE_IDS.get(env_name, {}).get(text)

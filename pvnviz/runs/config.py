"""The settings of a Section 6 experiment (Appendix B's hyperparameters): ``ExperimentConfig``.

One frozen dataclass for CartPole and Swimmer alike; its defaults are CartPole's MLP run (Section 6.2),
``pvnviz.runs.presets`` names the paper's and this project's other settings. Every field's help text is the
CLI's ``--help``, the page's tooltip and ``python -m pvnviz settings``. It validates on construction:
finite numbers, every count and layer within ``pvnviz.runs.sizing.LIMITS``, known names.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

from pvnviz.core.config_fields import ConfigError, check, check_finite, check_limits, param
from pvnviz.core.fingerprint import FINGERPRINT_OUTPUTS, PROBE_INITS
from pvnviz.core.policies import PolicyArch
from pvnviz.core.pvn import ACTIVATIONS, INPUT_MODES
from pvnviz.envs.gym_id import EnvRefused, check_qualifies, is_gym_name, parse_env_name
from pvnviz.envs.registry import ENVIRONMENTS, get_env
from pvnviz.runs.sizing import LIMITS

START_FROM = ("random", "dataset")  # where Algorithm 3's ascent starts (ExperimentConfig.start_from)
ROUND_BUDGETS = ("at_most", "measured")  # how a round is counted against the cap (ExperimentConfig.round_budget)


@dataclass(frozen=True)
class ExperimentConfig:
    """Settings of a PVN experiment on an environment; defaults are CartPole MLP (Appendix B)."""

    # saved name -> field: config.json of runs written with the setting ``env``, and ``--set env=``, still read
    RENAMED: ClassVar[dict[str, str]] = {"env": "env_name"}

    env_name: str = param(
        "cartpole",
        "Environment: cartpole, swimmer, or gym:ID for any gymnasium one with a flat Box observation and a "
        "Discrete or Box action (keywords: gym:Pendulum-v1?g=9.81).",
    )
    policy_hidden: tuple[int, ...] = param((30,), "Hidden layer sizes of the policies; () is a linear policy.")
    num_policies: int = param(1000, "Random policies in the dataset (K).")
    num_episodes: int = param(100, "Monte Carlo rollouts per policy (B).")
    horizon: int = param(100, "Episode length cap (CartPole: 100 as in the paper, 200 = v0, 500 = v1).")
    return_limit: float | None = param(30.0, "Training-set filter: drop policies whose mean return exceeds this.")
    num_bins: int = param(41, "Return-histogram bins m.")
    num_probes: int = param(20, "Probing states n of the fingerprint.")
    train_probes: bool = param(True, "Train the probing states jointly with the PVN (else frozen).")
    probe_init: str = param(
        "noise",
        "Probe initialisation: noise, visited (states seen in the environment), or bounds (uniform within the "
        "observation space's finite bounds, noise where a bound is infinite).",
    )
    fingerprint_outputs: str = param(
        "probabilities",
        "What the fingerprint reads at each probe for discrete actions: probabilities (the paper's), or "
        "log_probabilities, which keep telling policies apart where their probabilities are all near 0 or 1.",
    )
    pvn_hidden: tuple[int, ...] = param((80,), "Hidden layer sizes of the PVN.")
    pvn_activation: str = param(
        "relu",
        "The PVN's hidden activation: relu (the paper's) or leaky_relu, whose slope below zero keeps the ascent's "
        "gradient where every ReLU would be off.",
    )
    temperature: float = param(3.0, "Softmax temperature of the PVN's output.")
    learning_rate: float = param(0.003, "Adam learning rate of the PVN (and probes).")
    train_steps: int = param(3000, "PVN training steps.")
    batch_size: int = param(32, "PVN minibatch size.")
    val_fraction: float = param(0.1, "Share of kept policies held out for validation.")
    inputs: tuple[str, ...] = param(INPUT_MODES, "PVN inputs to compare: fingerprint and/or flattened.")
    num_starts: int = param(5, "Starting policies of the ascent (the same for every input).")
    start_from: str = param(
        "random",
        "Ascent starts: random (Glorot, Algorithm 3) or dataset (the best training policies of the dataset, "
        "by their measured returns: no environment step spent).",
    )
    ascent_steps: int = param(400, "Gradient ascent steps (paper: linear 100, MLP 400, Swimmer 1000).")
    ascent_learning_rate: float = param(0.001, "Adam learning rate of the ascent.")
    eval_every: int = param(20, "Score the ascent's iterates by Monte Carlo every this many steps.")
    eval_episodes: int = param(100, "Rollouts per scored iterate.")
    early_checks: tuple[int, ...] = param(
        (), "Further ascent steps (of each round) whose iterates are scored too, e.g. 10,25,50 (blank: none)."
    )
    log_every: int = param(50, "Record losses and probe positions every this many training steps.")
    keep_best: bool = param(False, "Early stopping: keep the PVN of the recorded step with the lowest validation KL.")
    ensemble_size: int = param(1, "PVNs trained at once on bootstrap resamples (1: a single PVN, the paper's).")
    pessimism: float = param(0.0, "kappa: an ensemble's ascent climbs mean - kappa * std of J_hat across members.")
    rounds: int = param(
        1, "Active rounds: ascend, fine-tune the PVN on the checked iterates, ascend on (1: zero-shot)."
    )
    round_train_steps: int = param(300, "PVN fine-tuning steps between two active rounds.")
    pool_checks: bool = param(
        False,
        "Algorithm 3 chooses each start's iterate on the mean of all its checks of the same policy (active rounds "
        "re-measure each round's start), not on its luckiest check.",
    )
    share_best: bool = param(
        False,
        "Active rounds: the start whose best iterate is estimated lowest restarts from the start estimated "
        "highest (the others from their own best), so a start stalled where the PVN is wrong moves on.",
    )
    check_histograms: bool = param(
        False,
        "Active rounds fine-tune the PVN on each check's histogram of episode returns, as the dataset's policies "
        "are given, instead of a point mass at the check's mean.",
    )
    trust_radius: float = param(
        0.0,
        "Active rounds: each start ascends within this L2 distance of where its round began, the distance doubled "
        "after a round whose end beat its start's estimate and halved after one that did not (0: no bound).",
    )
    round_perturbations: int = param(
        0,
        "Active rounds: antithetic pairs of perturbations of each start's best iterate measured "
        "(eval_episodes each) and added to the PVN's data before each fine-tuning (0: none).",
    )
    perturbation_std: float = param(0.03, "Standard deviation of those perturbations, per policy parameter.")
    max_beyond_fraction: float = param(
        0.0,
        "Active rounds end before one could take the env steps spent beyond the dataset (checks, perturbations) "
        "past this fraction of the dataset's env steps (0: no cap).",
    )
    round_budget: str = param(
        "at_most",
        "How another active round is counted against max_beyond_fraction: at_most (every measured episode running "
        "the whole horizon: the cap is never passed) or measured (each measured policy at the most steps a measured "
        "policy took so far: more rounds where episodes end early; a round whose episodes run longer than any "
        "before can pass the cap, and the run reports what it spent).",
    )
    fresh_episodes: int = param(
        100, "Rollouts re-measuring each start's chosen iterate on fresh episodes (0: skip); the headline number."
    )

    # The fields that name one of a fixed set of choices, and those choices.
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "start_from": START_FROM,
        "round_budget": ROUND_BUDGETS,
        "probe_init": PROBE_INITS,
        "fingerprint_outputs": FINGERPRINT_OUTPUTS,
        "pvn_activation": tuple(ACTIVATIONS),
    }

    def __post_init__(self) -> None:
        check_finite(self)
        check_limits(self, LIMITS)  # every count and layer size within pvnviz.runs.sizing.LIMITS
        if is_gym_name(self.env_name):
            self._check_gym()
        else:
            check(
                self.env_name in ENVIRONMENTS,
                f"env_name must be one of {', '.join(ENVIRONMENTS)}, or gym:ID; got {self.env_name!r}.",
            )
        for name in (
            "num_policies",
            "num_episodes",
            "num_starts",
            "train_steps",
            "batch_size",
            "eval_every",
            "eval_episodes",
            "log_every",
        ):
            check(getattr(self, name) >= 1, f"{name} must be at least 1; got {getattr(self, name)}.")
        check(self.horizon >= 1, f"horizon must be at least 1 step; got {self.horizon}.")
        check(self.num_bins >= 2, f"num_bins must be at least 2; got {self.num_bins}.")
        check(self.num_probes >= 1, f"num_probes must be at least 1; got {self.num_probes}.")
        check(self.ascent_steps >= 0, "ascent_steps must be 0 or more.")
        check(self.ensemble_size >= 1, f"ensemble_size must be at least 1; got {self.ensemble_size}.")
        check(self.pessimism >= 0, f"pessimism must be 0 or more; got {self.pessimism}.")
        check(self.rounds >= 1, f"rounds must be at least 1; got {self.rounds}.")
        check(self.round_train_steps >= 1, f"round_train_steps must be at least 1; got {self.round_train_steps}.")
        check(
            all(0 < e < max(self.ascent_steps, 1) for e in self.early_checks) and len(self.early_checks) <= 100,
            f"early_checks must be at most 100 steps between 0 and ascent_steps ({self.ascent_steps}); "
            f"got {self.early_checks}.",
        )
        check(self.max_beyond_fraction >= 0, f"max_beyond_fraction must be 0 or more; got {self.max_beyond_fraction}.")
        check(self.trust_radius >= 0, f"trust_radius must be 0 (no bound) or positive; got {self.trust_radius}.")
        check(self.perturbation_std > 0, f"perturbation_std must be positive; got {self.perturbation_std}.")
        check(self.fresh_episodes >= 0, f"fresh_episodes must be 0 or more; got {self.fresh_episodes}.")
        check(all(h >= 1 for h in self.policy_hidden + self.pvn_hidden), "layer sizes must be positive.")
        check(self.temperature > 0, "temperature must be positive.")
        check(self.learning_rate > 0 and self.ascent_learning_rate > 0, "learning rates must be positive.")
        check(
            len(self.inputs) >= 1 and all(i in INPUT_MODES for i in self.inputs),
            f"inputs must be a non-empty subset of {INPUT_MODES}; got {self.inputs}.",
        )
        check(len(set(self.inputs)) == len(self.inputs), f"inputs must name each PVN input once; got {self.inputs}.")
        self._check_choices()
        self._check_split()

    def _check_choices(self) -> None:
        """Each field of ``CHOICES`` holds one of its choices."""
        for name, choices in self.CHOICES.items():
            value = getattr(self, name)
            check(value in choices, f"{name} must be one of {', '.join(choices)}; got {value!r}.")

    def _check_gym(self) -> None:
        """A ``gym:`` name: canonical (keys sorted), qualifying, and a horizon within its own episode limit."""
        try:
            gym_id = parse_env_name(self.env_name)
            spaces = check_qualifies(gym_id)
        except EnvRefused as err:
            raise ConfigError(str(err)) from None
        object.__setattr__(self, "env_name", gym_id.name)  # one spelling per environment: caches, runs, links
        limit = spaces.max_episode_steps
        check(
            limit is None or self.horizon <= limit,
            f"horizon must be at most {limit} for {gym_id.name}, whose own time limit ends every episode there; "
            f"got {self.horizon}.",
        )

    def _check_split(self) -> None:
        """Combinations that would fail only after the collection: no validation policy, too few starts."""
        check(
            0.0 < self.val_fraction < 1.0,
            f"val_fraction must be above 0 (the PVN is validated on held-out policies) and below 1, e.g. 0.1; "
            f"got {self.val_fraction}.",
        )
        k = self.num_policies
        check(k >= 2, f"num_policies must be at least 2 (one to train on, one to validate); got {k}.")
        if num_validation(self.val_fraction, k) < 1:
            fraction, policies = _least_split(self.val_fraction, k)
            raise ConfigError(
                f"val_fraction={self.val_fraction} of num_policies={k} holds out no validation policy "
                f"({self.val_fraction} x {k} rounds to 0), so the PVN could not be validated; raise val_fraction "
                f"to at least {fraction:g} or num_policies to at least {policies}."
            )
        num_train = k - num_validation(self.val_fraction, k)
        check(
            self.start_from != "dataset" or self.num_starts <= num_train,
            f"start_from=dataset takes the num_starts={self.num_starts} best training policies, but "
            f"num_policies={k} with val_fraction={self.val_fraction} leaves {num_train}; lower num_starts "
            "or val_fraction, or raise num_policies.",
        )

    def arch(self) -> PolicyArch:
        env = get_env(self.env_name)
        return PolicyArch(env.obs_dim, env.act_dim, tuple(self.policy_hidden), env.discrete)


def num_validation(val_fraction: float, num_kept: int) -> int:
    """Validation policies held out of ``num_kept`` (Stage 2's split); at least one is left to train on."""
    return max(min(int(round(val_fraction * num_kept)), num_kept - 1), 0)


def _least_split(val_fraction: float, num_policies: int) -> tuple[float, int]:
    """The least val_fraction (in hundredths) and the least num_policies that hold out one validation policy."""
    fraction = math.floor(50 / num_policies) / 100 + 0.01
    while num_validation(fraction, num_policies) < 1:
        fraction = round(fraction + 0.01, 2)
    policies = math.floor(0.5 / val_fraction) + 1
    while num_validation(val_fraction, policies) < 1:
        policies += 1
    return fraction, policies


DATASET_FIELDS = ("env_name", "policy_hidden", "num_policies", "num_episodes", "horizon")


def dataset_config(config: ExperimentConfig) -> ExperimentConfig:
    """The config with every field the dataset does not depend on reset to its default (a cache key)."""
    fields = {f: getattr(config, f) for f in DATASET_FIELDS}
    if num_validation(ExperimentConfig.val_fraction, config.num_policies) < 1:  # a few policies: the default holds none
        fields["val_fraction"] = 0.5  # still a function of the dataset fields alone
    return dataclasses.replace(ExperimentConfig(), **fields)

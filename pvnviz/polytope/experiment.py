"""The value-polytope experiment of Section 6.1 and Appendix A, exact and learned.

Pipeline (Figs. 2 and 3 and the Appendix A figure):
1. Exact view: the value polytope (many policies mapped to (V(s1), V(s2))), its
   corners (deterministic policies), the optimum, the exact gradient field of J on
   the policy square and gradient ascent on the exact J.
2. PVN: sample policies uniformly on the square (paper 40), split train/test (20/20),
   regress the exact state values with an MLP [50] (MSE, RMSProp lr 0.01, 20,000 steps,
   batch 32; Appendix B), with the fused trainer ``tiny_mlp.train_rmsprop``. J_hat = d0 . PVN(x).
3. Learned view: the gradient field of J_hat on the same grid, and gradient ascent
   through the PVN (SGD lr 0.1, 100 steps, policies clipped to [0, 1]) evaluated with
   the exact J at every step.

Policies are x = [P(a1|s1), P(a1|s2)] (shape (K, 2)); values V[k, s] (K, 2).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from pvnviz.core.config_fields import check, check_finite, check_limits, param
from pvnviz.core.progress import ProgressFn, Report, Stage, no_progress
from pvnviz.polytope import mdp as mdp_lib
from pvnviz.polytope.tiny_mlp import TinyMLP, train_rmsprop

# (lowest, highest) of every count of ``PolytopeConfig``, for the CLI, the page and the URL alike
POLYTOPE_LIMITS: dict[str, tuple[int, int]] = {
    "num_policies": (2, 100_000),
    "hidden_size": (1, 1024),
    "train_steps": (1, 1_000_000),
    "batch_size": (1, 65_536),
    "log_every": (1, 1_000_000),
    "ascent_steps": (0, 100_000),
    "grid_size": (1, 200),
    "num_polytope_points": (10, 1_000_000),
}


@dataclass(frozen=True)
class PolytopeConfig:
    """Settings of the polytope experiment; defaults are the paper's (Appendix A and B)."""

    RENAMED: ClassVar[dict[str, str]] = {"eval_every": "log_every"}  # before log_every had one meaning

    gamma: float = param(mdp_lib.PAPER_GAMMA, "Discount factor gamma, in [0, 1).")
    rewards: tuple[float, float, float, float] = param(
        mdp_lib.PAPER_REWARDS, "r_hat = [r(s1,a1), r(s1,a2), r(s2,a1), r(s2,a2)] (Appendix A)."
    )
    transitions: tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]] = param(
        mdp_lib.PAPER_TRANSITIONS,
        "P_hat rows [P(s1|s,a), P(s2|s,a)] for (s1,a1), (s1,a2), (s2,a1), (s2,a2) (Appendix A).",
    )
    d0: tuple[float, float] = param((0.5, 0.5), "Start distribution [d0(s1), d0(s2)].")
    num_policies: int = param(40, "Policies sampled uniformly on the policy square (train + test).")
    num_train: int = param(20, "How many of the sampled policies the PVN trains on; the rest test it.")
    hidden_size: int = param(50, "Hidden ReLU units of the PVN.")
    learning_rate: float = param(0.01, "RMSProp learning rate of the PVN.")
    train_steps: int = param(20000, "PVN training steps.")
    batch_size: int = param(32, "Minibatch size (sampled with replacement from the train set).")
    log_every: int = param(100, "Record train and test loss every this many training steps.")
    ascent_start: tuple[float, float] = param((0.5, 0.0), "Start policy [P(a1|s1), P(a1|s2)].")
    ascent_learning_rate: float = param(0.1, "SGD step size of gradient ascent (exact and learned).")
    ascent_steps: int = param(100, "Gradient ascent steps.")
    grid_size: int = param(20, "Arrows per side of the gradient-field grid.")
    num_polytope_points: int = param(5000, "Policies drawn to paint the value polytope.")

    def __post_init__(self) -> None:
        check_finite(self)
        check_limits(self, POLYTOPE_LIMITS)
        check(self.num_policies >= 2, "num_policies must be at least 2 (train and test).")
        check(
            1 <= self.num_train < self.num_policies,
            f"num_train must be between 1 and num_policies - 1 = {self.num_policies - 1}.",
        )
        for name in ("hidden_size", "train_steps", "batch_size", "log_every", "grid_size"):
            check(getattr(self, name) >= 1, f"{name} must be at least 1.")
        check(self.ascent_steps >= 0, "ascent_steps must be 0 or more.")
        check(self.num_polytope_points >= 10, "num_polytope_points must be at least 10.")
        check(self.learning_rate > 0, "learning_rate must be positive.")
        check(self.ascent_learning_rate > 0, "ascent_learning_rate must be positive.")
        check(
            all(0.0 <= p <= 1.0 for p in self.ascent_start),
            "ascent_start entries are probabilities: keep them in [0, 1].",
        )
        self.mdp()  # validates gamma, P, r and d0 with a clear message

    def mdp(self) -> mdp_lib.TabularMDP:
        return mdp_lib.TabularMDP.from_flat(self.rewards, self.transitions, self.gamma, self.d0)


@dataclass(frozen=True)
class AscentPath:
    """Gradient ascent iterates x_t (T+1, 2) with exact values and (optionally) predicted J."""

    policies: np.ndarray
    values: np.ndarray  # exact V at each iterate, (T+1, 2)
    exact_J: np.ndarray  # (T+1,)
    predicted_J: np.ndarray | None = None  # J_hat through the PVN, (T+1,)


@dataclass(frozen=True)
class ExactView:
    """Everything on the page that needs only exact math (instant to recompute)."""

    cloud_policies: np.ndarray  # (N, 2)
    cloud_values: np.ndarray  # (N, 2)
    cloud_J: np.ndarray  # (N,)
    edges: list[np.ndarray]  # images of the 4 sides of the policy square, each (E, 2)
    corner_policies: np.ndarray  # (4, 2) as x = P(a1|s)
    corner_values: np.ndarray  # (4, 2)
    corner_J: np.ndarray  # (4,)
    optimal_policy: np.ndarray  # (2,)
    optimal_J: float
    grid: np.ndarray  # (G,) coordinates on each axis of the policy square
    field: np.ndarray  # (G, G, 2): dJ/dx at (grid[i], grid[j]) for x = (grid[i], grid[j])
    ascent: AscentPath


@dataclass(frozen=True)
class TrainedPolytopePVN:
    """A PVN trained on exact values of sampled policies, with its loss curves."""

    net: TinyMLP
    train_policies: np.ndarray  # (num_train, 2)
    test_policies: np.ndarray  # (num_test, 2)
    train_values: np.ndarray  # exact V, (num_train, 2)
    test_values: np.ndarray
    logged_steps: np.ndarray  # (E,) the training steps the losses were logged at
    train_loss: np.ndarray  # MSE on the whole train set, (E,)
    test_loss: np.ndarray
    seconds: float

    def predict_values(self, x: np.ndarray) -> np.ndarray:
        return self.net.forward(np.asarray(x, dtype=float))


@dataclass(frozen=True)
class LearnedView:
    """The PVN's gradient field and the ascent through it."""

    field: np.ndarray  # (G, G, 2)
    ascent: AscentPath
    train_predicted: np.ndarray  # PVN values of the train policies, (num_train, 2)
    test_predicted: np.ndarray


def gradient_ascent(
    grad_fn: Callable[[np.ndarray], np.ndarray], start: np.ndarray, learning_rate: float, steps: int
) -> np.ndarray:
    """Projected SGD x <- clip(x + lr * grad(x), 0, 1); returns iterates (steps + 1, 2)."""
    path = np.empty((steps + 1, len(start)))
    path[0] = start
    for t in range(steps):
        path[t + 1] = np.clip(path[t] + learning_rate * grad_fn(path[t][None])[0], 0.0, 1.0)
    return path


def _grid_points(grid_size: int) -> tuple[np.ndarray, np.ndarray]:
    grid = np.linspace(0.0, 1.0, grid_size)
    xx = np.stack(np.meshgrid(grid, grid, indexing="ij"), axis=-1)  # (G, G, 2)
    return grid, xx.reshape(-1, 2)


def _path(mdp: mdp_lib.TabularMDP, policies: np.ndarray, predicted: np.ndarray | None) -> AscentPath:
    V = mdp_lib.values(mdp, mdp_lib.policy_matrix(policies))
    return AscentPath(policies, V, V @ mdp.d0, predicted)


def exact_view(config: PolytopeConfig, seed: int = 0) -> ExactView:
    """The polytope, its corners and optimum, the exact field and the exact ascent."""
    mdp = config.mdp()
    rng = np.random.default_rng(seed)
    cloud = mdp_lib.sample_policies(rng, config.num_polytope_points)
    V = mdp_lib.values(mdp, mdp_lib.policy_matrix(cloud))
    t = np.linspace(0.0, 1.0, 101)
    sides = [(t, 0 * t), (t, 0 * t + 1), (0 * t, t), (0 * t + 1, t)]
    edges = [mdp_lib.values(mdp, mdp_lib.policy_matrix(np.stack(s, 1))) for s in sides]
    corners = mdp_lib.deterministic_policies(mdp)[:, :, 0]  # x = P(a1|s)
    corner_V = mdp_lib.values(mdp, mdp_lib.policy_matrix(corners))
    best_pi, best_J = mdp_lib.optimal_policy(mdp)
    grid, points = _grid_points(config.grid_size)
    field = mdp_lib.gradient(mdp, points).reshape(config.grid_size, config.grid_size, 2)
    path = gradient_ascent(
        lambda x: mdp_lib.gradient(mdp, x),
        np.asarray(config.ascent_start, dtype=float),
        config.ascent_learning_rate,
        config.ascent_steps,
    )
    return ExactView(
        cloud_policies=cloud,
        cloud_values=V,
        cloud_J=V @ mdp.d0,
        edges=edges,
        corner_policies=corners,
        corner_values=corner_V,
        corner_J=corner_V @ mdp.d0,
        optimal_policy=best_pi[:, 0],
        optimal_J=best_J,
        grid=grid,
        field=field,
        ascent=_path(mdp, path, None),
    )


def train_polytope_pvn(
    config: PolytopeConfig, seed: int = 0, on_progress: ProgressFn = no_progress
) -> TrainedPolytopePVN:
    """Sample policies, split train/test, regress exact values with the PVN (Fig. 2)."""
    mdp = config.mdp()
    rng = np.random.default_rng(seed)
    policies = mdp_lib.sample_policies(rng, config.num_policies)
    targets = mdp_lib.values(mdp, mdp_lib.policy_matrix(policies))
    train_x, test_x = policies[: config.num_train], policies[config.num_train :]
    train_y, test_y = targets[: config.num_train], targets[config.num_train :]
    net = TinyMLP.init(rng, 2, config.hidden_size, 2)
    batches = rng.integers(0, config.num_train, size=(config.train_steps, config.batch_size))
    logged_steps, train_loss, test_loss = [], [], []
    report_every = max(config.train_steps // 50, 1)
    last_report = [0]

    def evaluate(step: int) -> None:
        logged_steps.append(step)
        train_loss.append(float(np.mean((net.forward(train_x) - train_y) ** 2)))
        test_loss.append(float(np.mean((net.forward(test_x) - test_y) ** 2)))
        if step and (step - last_report[0] >= report_every or step == config.train_steps):
            last_report[0] = step
            on_progress(step, config.train_steps, Report(Stage.TRAIN_POLYTOPE_PVN, f"test MSE {test_loss[-1]:.2e}"))

    start = time.perf_counter()
    evaluate(0)
    train_rmsprop(net, train_x, train_y, batches, config.learning_rate, evaluate, every=config.log_every)
    return TrainedPolytopePVN(
        net=net,
        train_policies=train_x,
        test_policies=test_x,
        train_values=train_y,
        test_values=test_y,
        logged_steps=np.array(logged_steps),
        train_loss=np.array(train_loss),
        test_loss=np.array(test_loss),
        seconds=time.perf_counter() - start,
    )


def learned_view(config: PolytopeConfig, trained: TrainedPolytopePVN) -> LearnedView:
    """Gradient field of J_hat = d0 . PVN(x) and ascent through it, judged by the exact J."""
    mdp = config.mdp()
    d0 = mdp.d0

    def grad_fn(x: np.ndarray) -> np.ndarray:
        return trained.net.input_gradient(x, d0)

    _, points = _grid_points(config.grid_size)
    field = grad_fn(points).reshape(config.grid_size, config.grid_size, 2)
    path = gradient_ascent(
        grad_fn,
        np.asarray(config.ascent_start, dtype=float),
        config.ascent_learning_rate,
        config.ascent_steps,
    )
    predicted = trained.predict_values(path) @ d0
    return LearnedView(
        field=field,
        ascent=_path(mdp, path, predicted),
        train_predicted=trained.predict_values(trained.train_policies),
        test_predicted=trained.predict_values(trained.test_policies),
    )


@dataclass(frozen=True)
class PolytopeResult:
    """The whole Section 6.1 experiment, as the CLI runs it."""

    config: PolytopeConfig
    seed: int
    exact: ExactView
    trained: TrainedPolytopePVN
    learned: LearnedView
    timings: dict[str, float]

    def summary(self) -> dict:
        exact_end = self.exact.ascent
        learned_end = self.learned.ascent
        return {
            "experiment": "polytope",
            "seed": self.seed,
            "optimal_policy": self.exact.optimal_policy.tolist(),
            "optimal_J": self.exact.optimal_J,
            "exact_ascent_final_policy": exact_end.policies[-1].tolist(),
            "exact_ascent_final_J": float(exact_end.exact_J[-1]),
            "pvn_final_train_loss": float(self.trained.train_loss[-1]),
            "pvn_final_test_loss": float(self.trained.test_loss[-1]),
            "pvn_initial_test_loss": float(self.trained.test_loss[0]),
            "learned_ascent_final_policy": learned_end.policies[-1].tolist(),
            "learned_ascent_final_exact_J": float(learned_end.exact_J[-1]),
            "learned_ascent_final_predicted_J": float(learned_end.predicted_J[-1]),
            "timings_seconds": self.timings,
        }


def run_polytope(config: PolytopeConfig, seed: int = 0, on_progress: ProgressFn = no_progress) -> PolytopeResult:
    """Exact view, PVN training and learned view in one call (the headless run)."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    exact = exact_view(config, seed)
    timings["exact"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    trained = train_polytope_pvn(config, seed, on_progress)
    timings["train_pvn"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    learned = learned_view(config, trained)
    timings["learned"] = time.perf_counter() - t0
    timings["total"] = sum(timings.values())
    return PolytopeResult(config, seed, exact, trained, learned, timings)


TRAINING_FIELDS = (
    "gamma",
    "rewards",
    "transitions",
    "d0",
    "num_policies",
    "num_train",
    "hidden_size",
    "learning_rate",
    "train_steps",
    "batch_size",
    "log_every",
)


def training_key(config: PolytopeConfig) -> PolytopeConfig:
    """The config with every field that PVN training ignores set to its default.

    Two configs with the same key train the same PVN, so a cache keyed on it does
    not retrain when only the ascent or the drawing changes.
    """
    defaults = PolytopeConfig()
    names = [f.name for f in dataclasses.fields(PolytopeConfig)]
    ignored = {f: getattr(defaults, f) for f in names if f not in TRAINING_FIELDS}
    return dataclasses.replace(config, **ignored)

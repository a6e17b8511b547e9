"""The few lines a headless run ends with: what ran, its key numbers beside the paper's, where it is saved.

The paper's numbers (Harb et al., ICML 2020): Section 6.1 and Fig. 3 (the polytope: learned and exact ascent
from [0.5, 0] both reach the optimum), Section 6.2 and Fig. 4 (CartPole: the fingerprint PVN's policies near-optimal,
close to 100 with MLP [30] policies, around 70 with linear ones; flattened weights do not work with the MLP), and
Section 6.3 and Fig. 5 (Swimmer: all 5 starts above the best Spinning Up baseline, DDPG's 143, the best around 250).
Every number of the run is in its ``summary.json`` (``--json`` prints it instead).
"""

from __future__ import annotations

from typing import Any

PAPER = {
    "polytope": "the paper (Section 6.1, Fig. 3): learned and exact ascent from [0.5, 0] both reach the optimum",
    "cartpole": (
        "the paper (Section 6.2, Fig. 4): fingerprint close to 100, flattened weights far below (MLP [30]); "
        "both around 70 (linear)"
    ),
    "swimmer": (
        "the paper (Section 6.3, Fig. 5): all 5 starts above the best baseline (DDPG, 143), the best around 250"
    ),
}
SWIMMER_BASELINE = 143.0  # DDPG's Swimmer return in Spinning Up's benchmarks, the best baseline of Fig. 5
INPUT_NAMES = {"fingerprint": "fingerprint PVN", "flattened": "flattened-weights PVN"}


def _number(value: Any, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"


def _policy(values: Any) -> str:
    if not isinstance(values, list):
        return "?"
    return "[" + ", ".join(_number(v, 2) for v in values) + "]"


def headline(experiment: str, preset: str | None, seed: int, summary: dict[str, Any], folder: str) -> list[str]:
    """The lines that end a run of ``experiment`` (``preset`` for the environments, None for the polytope)."""
    seconds = summary.get("timings_seconds", {}).get("total")
    took = f", {_number(seconds)} s" if isinstance(seconds, (int, float)) else ""
    what = f"{experiment}, preset {preset}, seed {seed}" if preset else f"{experiment}, seed {seed}"
    lines = [f"{what}{took}:"]
    if experiment == "polytope":
        lines += _polytope(summary)
    else:
        lines += _environment(experiment, summary)
    if experiment in PAPER:
        lines.append(f"  {PAPER[experiment]}")
    lines.append(f"saved in {folder} (every number in its summary.json)")
    return lines


def _polytope(s: dict[str, Any]) -> list[str]:
    optimum = s.get("optimal_J")
    return [
        f"  exact ascent:   J = {_number(s.get('exact_ascent_final_J'), 3)} at "
        f"{_policy(s.get('exact_ascent_final_policy'))}",
        f"  learned ascent: J = {_number(s.get('learned_ascent_final_exact_J'), 3)} at "
        f"{_policy(s.get('learned_ascent_final_policy'))} (the PVN's test MSE "
        f"{_number(s.get('pvn_final_test_loss'), 5)})",
        f"  the optimum:    J = {_number(optimum, 3)} at {_policy(s.get('optimal_policy'))}",
        *_polytope_beyond(s),
    ]


def _polytope_beyond(s: dict[str, Any]) -> list[str]:
    """The active rounds' line of a ``--preset beyond`` run (none for the paper's)."""
    if "beyond_checks" not in s:
        return []
    episodes = s.get("beyond_check_episodes")
    how = "exact checks" if episodes == 0 else f"checks of {episodes} episodes per state"
    return [
        f"  active rounds:  J = {_number(s.get('beyond_best_exact_J'), 3)} at {_policy(s.get('beyond_best_policy'))}, "
        f"the best of {s.get('beyond_checks')} {how} in {s.get('beyond_rounds')} rounds"
    ]


def _environment(experiment: str, s: dict[str, Any]) -> list[str]:
    lines = []
    if "num_policies" in s:
        limit = s.get("return_limit")
        kept = f", the training set's limit {_number(limit)}" if isinstance(limit, (int, float)) else ""
        fresh = s.get("kept_best_fresh_return")
        again = f" ({_number(fresh)} on fresh episodes)" if fresh is not None else ""
        lines.append(
            f"  dataset: {s.get('num_kept', '?')} of {s['num_policies']} policies kept, best "
            f"{_number(s.get('kept_best_mean_return'))}{again}{kept}"
        )
    for name, numbers in (s.get("inputs") or {}).items():
        if not isinstance(numbers, dict):
            continue
        fresh = numbers.get("fresh_return_per_start") or []
        line = (
            f"  {INPUT_NAMES.get(name, name)}: best along the ascent {_number(numbers.get('best_mean_return'))} "
            f"(from {_number(numbers.get('start_mean_return'))} at the start), "
            f"{_number(numbers.get('fresh_mean_return'))} on fresh episodes"
        )
        chosen = numbers.get("best_return_per_start") or []
        if len(fresh) == len(chosen) > 1 and all(isinstance(v, (int, float)) for v in [*fresh, *chosen]):
            from pvnviz.core.ascent import returned_start  # torch: only once a run has its numbers

            k = returned_start(chosen)
            line += f"; Algorithm 3 returns start {k + 1}'s policy: {_number(fresh[k])} on fresh episodes"
        if experiment == "swimmer" and fresh:
            above = sum(1 for value in fresh if isinstance(value, (int, float)) and value > SWIMMER_BASELINE)
            line += f"; {above} of {len(fresh)} starts above DDPG's {SWIMMER_BASELINE:.0f}"
        lines.append(line)
    return lines

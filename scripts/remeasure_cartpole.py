"""Re-measure CartPole seed records in plain gymnasium, with no code of pvnviz (Section 6.2's policies).

An independent check of what ``python -m pvnviz.runs.seed_records cartpole ...`` wrote: each record's chosen
policies (one flat parameter vector per start) are rebuilt here from the layout alone and run for new episodes
in ``gymnasium.make("CartPole-v1", max_episode_steps=HORIZON)``, one step at a time.

The layout (as ``pvnviz.core.policies`` stores a policy): an MLP obs (4) -> hidden ReLU layers -> 2 logits,
flat ``[W1 (in*out, row-major: W1[i, j] is input i to unit j), b1 (out), W2, b2, ...]``; the action is sampled
from the softmax of the logits (action 1 when a uniform draw is at least p(action 0)).

    python scripts/remeasure_cartpole.py data/claims/cartpole-beyond-500-549.jsonl

prints one row per seed (its mean over the starts, and each start's) and the seeds' lowest and mean. Where the
records hold each start's selection estimate (``best_return_per_start``), it also prints Algorithm 3's answer,
``return argmax_theta(Theta)``: the start whose estimate is highest (ties: the first), re-measured like the others.
"""

from __future__ import annotations

import argparse
import json
import sys

import gymnasium
import numpy as np

OBS_DIM, ACT_DIM = 4, 2


def hidden_sizes(num_params: int) -> tuple[int, ...]:
    """The one hidden layer of h units (or none) whose flat size is ``num_params``: 4h + h + 2h + 2 = 7h + 2."""
    if num_params == OBS_DIM * ACT_DIM + ACT_DIM:
        return ()
    h, rest = divmod(num_params - ACT_DIM, OBS_DIM + 1 + ACT_DIM)
    if rest or h < 1:
        raise ValueError(f"{num_params} parameters are neither a linear policy nor one hidden layer")
    return (h,)


def layers(params: np.ndarray, hidden: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (W (in, out), b (out,)) of each layer of one flat policy (P,)."""
    sizes = [OBS_DIM, *hidden, ACT_DIM]
    out, start = [], 0
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = params[start : start + fan_in * fan_out].reshape(fan_in, fan_out)
        start += fan_in * fan_out
        b = params[start : start + fan_out]
        start += fan_out
        out.append((w, b))
    if start != len(params):
        raise ValueError(f"the layers take {start} parameters, the policy has {len(params)}")
    return out


def action_probabilities(weights: list[tuple[np.ndarray, np.ndarray]], obs: np.ndarray) -> np.ndarray:
    """Softmax over the 2 logits of observations (..., 4) -> (..., 2)."""
    h = np.asarray(obs, dtype=np.float32)
    for i, (w, b) in enumerate(weights):
        h = h @ w + b
        if i < len(weights) - 1:
            h = np.maximum(h, 0.0)
    h = h - h.max(axis=-1, keepdims=True)
    e = np.exp(h)
    return e / e.sum(axis=-1, keepdims=True)


def episode_returns(params: np.ndarray, episodes: int, horizon: int, seed: int) -> np.ndarray:
    """Returns (episodes,) of one policy (P,) in CartPole-v1 capped at ``horizon`` steps, one step at a time."""
    weights = layers(np.asarray(params, dtype=np.float32), hidden_sizes(len(params)))
    env = gymnasium.make("CartPole-v1", max_episode_steps=horizon)
    rng = np.random.default_rng(seed)
    returns = np.zeros(episodes)
    for e in range(episodes):
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        done = False
        while not done:
            p = action_probabilities(weights, obs)
            obs, reward, terminated, truncated, _ = env.step(int(rng.random() >= p[0]))
            returns[e] += reward
            done = terminated or truncated
    env.close()
    return returns


def remeasure(records: list[dict], input_mode: str, episodes: int, horizon: int, seed: int) -> dict[int, np.ndarray]:
    """Per seed, the returns (A, ``episodes``) of each start's chosen policy on new episodes."""
    out = {}
    for r in records:
        chosen = r["inputs"][input_mode]["chosen_params"]
        out[r["seed"]] = np.stack(
            [episode_returns(np.array(p), episodes, horizon, seed + 1000 * r["seed"] + a) for a, p in enumerate(chosen)]
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", help="a seed-records JSONL file (one JSON object a line)")
    parser.add_argument("--input", default="fingerprint", help="which PVN input's chosen policies (fingerprint)")
    parser.add_argument("--episodes", type=int, default=100, help="new episodes per chosen policy (100)")
    parser.add_argument("--horizon", type=int, default=100, help="episode cap, the preset's horizon (100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the episodes' starts and action draws (0)")
    args = parser.parse_args(argv)
    try:
        with open(args.records) as f:
            records = [json.loads(line) for line in f if line.strip()]
        returns = remeasure(records, args.input, args.episodes, args.horizon, args.seed)
    except (OSError, ValueError, KeyError) as e:
        print(f"cannot re-measure {args.records}: {e!r}", file=sys.stderr)
        return 2
    if not returns:
        print(f"{args.records} holds no records", file=sys.stderr)
        return 2
    answers = returned_starts(records, args.input)
    print("seed  mean   per start" + ("   (returned: start, its mean)" if answers else ""))
    for seed, per_start in returns.items():
        row = f"{seed:<5} {per_start.mean():5.1f}  " + ", ".join(f"{v:.1f}" for v in per_start.mean(axis=1))
        if answers:
            k = answers[seed]
            row += f"   (returned: {k + 1}, {per_start[k].mean():.1f})"
        print(row)
    if answers:
        chosen = [float(returns[seed][k].mean()) for seed, k in answers.items()]
        at_90 = sum(v >= 90 for v in chosen)
        print(f"returned policies: lowest {min(chosen):.1f}, mean {np.mean(chosen):.1f}, {at_90} at 90 or more")
    seed_means = [float(v.mean()) for v in returns.values()]
    print(f"seeds {len(seed_means)}: lowest {min(seed_means):.1f}, mean {np.mean(seed_means):.1f}")
    return 0


def returned_starts(records: list[dict], input_mode: str) -> dict[int, int]:
    """Per seed, the start Algorithm 3 returns (argmax of the selection estimates, the first on ties); empty
    where any record lacks the estimates."""
    found = {}
    for r in records:
        estimates = r["inputs"][input_mode].get("best_return_per_start")
        if estimates is None:
            return {}
        found[r["seed"]] = int(np.argmax(estimates))
    return found


if __name__ == "__main__":
    raise SystemExit(main())

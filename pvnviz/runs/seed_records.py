"""Seed records: what one run of a preset on one seed ended with, small enough to ship for every seed a
document quotes.

A results table over many seeds (Algorithm 3's chosen policies, their fresh-episode returns, the env steps the
checks spent) takes too long to re-run in CI. Its record does not: one JSON line per seed with, for each
input, the fresh return per start, the best true return each start saw along its ascent (the paper's
result; optional, records may predate it), the share of the dataset's env steps spent beyond it, and the chosen
policies' flat parameters (A, P), so a test can recompute the table from the records and re-measure the chosen
policies in plain gymnasium, and a long run can regenerate the records from the command itself.

    python -m pvnviz.runs.seed_records cartpole beyond 300-319 --inputs fingerprint --out data/claims/X.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from pvnviz.core.config_fields import ConfigError, apply_overrides
from pvnviz.runs.config import ExperimentConfig
from pvnviz.runs.pipeline import ExperimentResult, run_experiment
from pvnviz.runs.presets import PRESETS


def preset_config(
    env_name: str, preset: str, inputs: tuple[str, ...] | None = None, overrides: tuple[str, ...] = ()
) -> ExperimentConfig:
    """The preset's config, restricted to ``inputs`` if given, with the ``key=value`` ``overrides`` (``--set``)."""
    config = apply_overrides(PRESETS[env_name][preset](), list(overrides))
    return config if inputs is None else dataclasses.replace(config, inputs=tuple(inputs))


def seed_record(
    env_name: str, preset: str, seed: int, result: ExperimentResult, overrides: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One JSON-ready line: the run's identity (its ``--set`` overrides under "set", where any), its dataset's
    best mean return and, per input, what Algorithm 3 chose and what it scored."""
    full = result.summary()
    summary = full["inputs"]
    inputs = {}
    for name, trace in result.traces.items():
        best = trace.best_params  # (A, P) the chosen iterate of each start
        inputs[name] = {
            "fresh_return_per_start": [round(float(r), 3) for r in trace.fresh_returns],
            "best_return_per_start": [round(float(r), 3) for r in trace.best_returns],
            "fresh_episodes": int(summary[name]["fresh_episodes"]),
            "beyond_dataset_fraction": float(summary[name]["beyond_dataset_fraction"]),
            "chosen_params": [[float(v) for v in row] for row in best],
        }
    best = float(full["dataset_best_mean_return"])  # the best policy the PVN could have been trained on
    record = {"env": env_name, "preset": preset, "seed": int(seed)}
    if overrides:
        record["set"] = list(overrides)
    return {**record, "dataset_best_mean_return": best, "inputs": inputs}


def best_mean_returns(config: ExperimentConfig, seed: int) -> dict[str, float]:
    """Per input, the best true return along the ascent, mean over the starts (Algorithm 3's result): what
    docs/results.md's seed tables print (``pvnviz.core.seed_map.seed_map`` runs it over many seeds)."""
    result = run_experiment(config, seed=seed)
    return {name: float(trace.best_returns.mean()) for name, trace in result.traces.items()}


def write_records(
    env_name: str,
    preset: str,
    seeds: list[int],
    out: Path,
    inputs: tuple[str, ...] | None = None,
    overrides: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """Run the preset (with ``overrides``) on every seed and write one line each to ``out`` (rewritten after each
    seed, so an interrupted run keeps the seeds it finished)."""
    config = preset_config(env_name, preset, inputs, overrides)
    records = []
    for seed in seeds:
        records.append(seed_record(env_name, preset, seed, run_experiment(config, seed=seed), overrides))
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
        tmp.replace(out)
    return records


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of ``path``, in seed order as written."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _seeds(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pvnviz.runs.seed_records", description=__doc__.split("\n\n")[0])
    parser.add_argument("env_name", metavar="env", choices=sorted(PRESETS))
    parser.add_argument("preset")
    parser.add_argument("seeds", help="a seed or a range FIRST-LAST")
    parser.add_argument("--inputs", nargs="+", help="PVN inputs to run (default: the preset's)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one of the preset's settings; repeatable")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    presets = PRESETS[args.env_name]
    if args.preset not in presets:
        print(f"no preset {args.preset!r} for {args.env_name}: pick one of {', '.join(presets)}", file=sys.stderr)
        return 2
    overrides = tuple(args.overrides)
    try:
        preset_config(args.env_name, args.preset, None, overrides)
    except ConfigError as err:
        print(f"--set: {err}", file=sys.stderr)
        return 2
    inputs = tuple(args.inputs) if args.inputs else None
    write_records(args.env_name, args.preset, _seeds(args.seeds), args.out, inputs, overrides)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

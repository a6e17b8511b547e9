"""The same environment-step budget for random search and for the PVN (beyond the paper).

``pvnviz compare [--env cartpole|swimmer|gym:ID] --seed S`` (or ``python -m pvnviz.cli.compare``) runs the PVN's
zero-shot preset
(CartPole ``paper``, Swimmer ``budget-10000x1``) and its ``beyond`` preset on one dataset (dataset +
Algorithm 3's checks), ARS V1-t and V2-t (Mania et al., 2018; ``SETTINGS``, untuned) with the larger
of the two PVN budgets, and best-of-random-policies (the best policy of the dataset, no limit). Every
final policy is re-measured on fresh episodes from a stream no method used. Prints one JSON line per
method; ``data/cartpole-compare.jsonl`` (seeds 10-14) and ``data/swimmer-compare.jsonl`` hold the shipped
comparisons, drawn on the pages by ``pvnviz.baselines.compare.load_rows`` and
``pvnviz.figures.beyond.budget_figure``. ``--beyond PRESET`` runs that one PVN preset (and best-of-random on its
dataset) instead of the two, ARS with its policy shape; ``--ars V1-t`` runs one ARS version only. The comparison
itself is ``pvnviz.baselines.compare``.
"""

from __future__ import annotations

import json

from pvnviz.baselines.compare import ARS_VERSIONS, SETTINGS, compare, setting_for
from pvnviz.cli.argtypes import OneLineParser, non_negative_int
from pvnviz.cli.collect import saved_dataset
from pvnviz.core.config_fields import ConfigError, apply_overrides
from pvnviz.runs.presets import presets_for
from pvnviz.runs.store import RunError


def _env_name(text: str) -> str:
    """An ``argparse`` type: a built-in environment of ``SETTINGS``, or a gym: name that qualifies (canonical)."""
    import argparse

    from pvnviz.envs.gym_id import EnvRefused, check_qualifies, is_gym_name, parse_env_name

    if text in SETTINGS:
        return text
    if not is_gym_name(text):
        raise argparse.ArgumentTypeError(f"choose {', '.join(sorted(SETTINGS))} or gym:ID, got {text!r}")
    try:
        gym_id = parse_env_name(text)
        check_qualifies(gym_id)
    except EnvRefused as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return gym_id.name


def _parser(prog: str) -> OneLineParser:
    """The command line of ``pvnviz compare``: seeds, environment, saved datasets, one PVN preset, ARS versions,
    settings of the PVN presets, and the chart's file."""
    parser = OneLineParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=non_negative_int, nargs="+", default=[0], help="one or more seeds (default 0)")
    parser.add_argument(
        "--env",
        dest="env_name",
        type=_env_name,
        default="cartpole",
        help=f"environment: {', '.join(sorted(SETTINGS))} or gym:ID (default cartpole)",
    )
    parser.add_argument(
        "--dataset-from",
        nargs="*",
        default=[],
        help="one saved run per seed (e.g. a budget-10000x1 run) whose dataset.npz the PVN presets use",
    )
    parser.add_argument(
        "--beyond",
        metavar="PRESET",
        help="run this one PVN preset of --env (with best-of-random on its dataset) instead of the two",
    )
    parser.add_argument(
        "--ars",
        nargs="*",
        choices=ARS_VERSIONS,
        default=list(ARS_VERSIONS),
        help=f"the ARS versions to run (default: {' '.join(ARS_VERSIONS)}; none: --ars alone)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one setting of the PVN presets, as `run --set` does; repeatable (named in the PVN row)",
    )
    parser.add_argument("--html", help="also write the chart (returns against env steps) to this HTML file")
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m pvnviz.cli.compare") -> int:
    """``pvnviz compare``: one JSON line per method and seed on stdout; returns the exit status (2: bad input)."""
    parser = _parser(prog)
    args = parser.parse_args(argv)
    rows = []
    if args.dataset_from and len(args.dataset_from) != len(args.seed):
        parser.error("--dataset-from needs one run per --seed")
    presets = presets_for(args.env_name)
    if args.beyond is not None and args.beyond not in presets:
        parser.error(f"--beyond: choose one of {', '.join(presets)}, got {args.beyond!r}")
    first = setting_for(args.env_name).zero_shot if args.beyond is None else args.beyond
    try:
        first_config = apply_overrides(presets[first](), args.overrides)
    except ConfigError as err:
        parser.error(f"--set: {err}")
    for i, seed in enumerate(args.seed):
        dataset = None
        if args.dataset_from:  # checked as `run --dataset-from` checks it: same seed and dataset settings
            try:
                dataset = saved_dataset(args.dataset_from[i], args.env_name, seed, first_config)
            except (ConfigError, RunError, ValueError) as err:
                parser.error(f"--dataset-from {args.dataset_from[i]}: {err}")
        for row in compare(seed, args.env_name, dataset, args.beyond, tuple(args.ars), tuple(args.overrides)):
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.html:
        from pvnviz.figures.beyond import budget_figure

        budget_figure(rows).write_html(args.html)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

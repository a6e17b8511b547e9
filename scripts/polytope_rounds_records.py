"""The per-seed records of docs/results.md's "Polytope beyond zero-shot" rows over seeds 100-199, which
tests/test_polytope_rounds.py re-derives the table from (and re-runs a sample of):

    .venv/bin/python scripts/polytope_rounds_records.py

writes data/claims/polytope-rounds-{exact,100-episodes,10-episodes,std0.1}-100-199.jsonl
(``pvnviz.polytope.survey.write_beyond_records``: about 0.7 s a seed, over the cores).
"""

from pathlib import Path

import pvnviz  # noqa: F401  first: the pinned kernels (pvnviz.kernels)
from pvnviz.polytope.rounds import PolytopeRoundsConfig
from pvnviz.polytope.survey import write_beyond_records

ROOT = Path(__file__).resolve().parents[1]
SEEDS = range(100, 200)
RECORDS = {  # file name part -> the rounds' settings
    "exact": {},
    "100-episodes": {"check_episodes": 100},
    "10-episodes": {"check_episodes": 10},
    "std0.1": {"perturbation_std": 0.1},
}


def path_of(name: str) -> Path:
    return ROOT / "data" / "claims" / f"polytope-rounds-{name}-{SEEDS.start}-{SEEDS.stop - 1}.jsonl"


if __name__ == "__main__":
    for name, changes in RECORDS.items():
        result = write_beyond_records(PolytopeRoundsConfig(**changes), SEEDS, path_of(name))
        print(path_of(name).name, f"near-optimal {len(result.near_optimal)} of {len(result.ends)}", flush=True)

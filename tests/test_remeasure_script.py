"""scripts/remeasure_cartpole.py, the re-measurement of CartPole seed records that imports nothing of pvnviz:
its policies are pvnviz's policies, and what it prints is what docs/beyond.md says."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "remeasure_cartpole.py"


def load_script():
    spec = importlib.util.spec_from_file_location("remeasure_cartpole", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_imports_nothing_of_pvnviz():
    imported = set()
    for node in ast.walk(ast.parse(SCRIPT.read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "argparse", "json", "sys", "gymnasium", "numpy"}, imported


@pytest.mark.parametrize("hidden", [(30,), ()])
def test_the_scripts_policy_is_pvnvizs_forward_on_random_params(hidden):
    """The script's layout and softmax against pvnviz.core.policies.forward_numpy: random (not Glorot, biases
    non-zero) parameters of 7 policies at 50 random observations each."""
    from pvnviz.core.policies import PolicyArch, forward_numpy

    script = load_script()
    arch = PolicyArch(4, 2, hidden, True)
    rng = np.random.default_rng(3)
    params = rng.normal(0, 0.7, (7, arch.num_params)).astype(np.float32)
    obs = rng.normal(0, 1.5, (7, 50, 4)).astype(np.float32)
    want = forward_numpy(arch, params, obs)
    assert script.hidden_sizes(arch.num_params) == hidden
    for k in range(len(params)):
        got = script.action_probabilities(script.layers(params[k], hidden), obs[k])
        np.testing.assert_allclose(got, want[k], rtol=1e-5, atol=1e-6)
    assert want[..., 0].std() > 0.1  # the probabilities vary: a transposed layout would not pass


def test_the_script_refuses_a_missing_file_in_one_line(tmp_path, capsys):
    assert load_script().main([str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot re-measure" in err


def summing_pages() -> str:
    """docs/beyond.md and docs/held-out-20.md, where the held-out sets are summed up, whitespace collapsed."""
    return " ".join(" ".join((ROOT / "docs" / page).read_text() for page in ("beyond.md", "held-out-20.md")).split())


def quoted_remeasure(records: str) -> tuple[float, float, int]:
    """The mean, lowest and lowest seed docs/beyond.md (or docs/held-out-20.md, for the sets run with 20 episodes a
    check) quotes for the script's re-measurement of ``records``."""
    text = summing_pages()
    match = re.search(
        rf"`python scripts/remeasure_cartpole.py {re.escape(records)}`[^:]*: "
        r"mean ([\d.]+), lowest ([\d.]+) \(seed (\d+)",
        text,
    )
    assert match, f"neither docs/beyond.md nor docs/held-out-20.md quotes a re-measurement of {records}"
    return float(match.group(1)), float(match.group(2)), int(match.group(3))


def shipped_output(records: str) -> tuple[dict[int, str], str]:
    """The script's output on ``records`` as shipped beside them (``X.remeasured.txt``): seed -> its printed row,
    and the closing summary line."""
    lines = (ROOT / records.replace(".jsonl", ".remeasured.txt")).read_text().splitlines()
    rows = {int(line.split()[0]): line for line in lines if line[:1].isdigit()}
    return rows, lines[-1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "records",
    [
        f"data/claims/cartpole-beyond-{seeds}.jsonl"
        for seeds in ("300-319", "500-549", "600-649", "ep10-650-699", "ep10-500-549", "logp-leaky-700-749",
                      "logp-leaky-500-549")
    ],
)
def test_the_script_measures_what_docs_beyond_md_says(records, tmp_path, capsys, monkeypatch):
    """docs/beyond.md quotes the mean and lowest seed of the script's output on the shipped records, with its
    defaults (100 episodes, horizon 100, seed 0), shipped beside them: that output covers every record, its
    summary line is its rows', and the script run again on every tenth record prints those records' rows
    exactly (each seed's episodes are its own), each seed's mean agreeing with the record's fresh mean within
    the two samples' error."""
    script = load_script()
    shipped = [json.loads(line) for line in (ROOT / records).read_text().splitlines() if line.strip()]
    rows, summary = shipped_output(records)
    assert list(rows) == [r["seed"] for r in shipped]
    means = {seed: float(row.split()[1]) for seed, row in rows.items()}
    low = min(means, key=means.get)
    lowest, mean = re.fullmatch(rf"seeds {len(rows)}: lowest ([\d.]+), mean ([\d.]+)", summary).groups()
    assert float(lowest) == means[low] and abs(float(mean) - np.mean(list(means.values()))) < 0.05
    assert quoted_remeasure(records) == (float(mean), float(lowest), low)
    returned = [line for line in (ROOT / records.replace(".jsonl", ".remeasured.txt")).read_text().splitlines()
                if line.startswith("returned policies:")]  # fmt: skip
    if "best_return_per_start" in shipped[0]["inputs"]["fingerprint"]:  # Algorithm 3's answer, as the docs quote it
        answers = [float(re.search(r"\(returned: \d+, ([\d.]+)\)", row).group(1)) for row in rows.values()]
        for r in shipped:
            estimates = r["inputs"]["fingerprint"]["best_return_per_start"]
            assert f"(returned: {int(np.argmax(estimates)) + 1}, " in rows[r["seed"]], r["seed"]
        (line,) = returned
        pattern = r"returned policies: lowest ([\d.]+), mean ([\d.]+), (\d+) at 90 or more"
        low_a, mean_a, at_90 = re.fullmatch(pattern, line).groups()
        assert float(low_a) == min(answers) and abs(float(mean_a) - np.mean(answers)) < 0.05
        assert int(at_90) == sum(v >= 90 for v in answers) or min(abs(v - 90) for v in answers) < 0.05
        assert returned[0] in summing_pages()
    else:
        assert returned == []

    sample = shipped[::10]
    measured = script.remeasure(sample, "fingerprint", 100, 100, 0)
    for r, returns in zip(sample, measured.values()):
        fresh = np.mean(r["inputs"]["fingerprint"]["fresh_return_per_start"])
        error = np.sqrt(np.mean(returns.var(axis=1, ddof=1)) * (2 / 100) / len(returns))
        assert abs(returns.mean() - fresh) < 4 * error + 0.5, (r["seed"], returns.mean(), fresh)

    def same_episodes(got: list[dict], input_mode: str, episodes: int, horizon: int, seed: int) -> dict:
        assert (got, input_mode, episodes, horizon, seed) == (sample, "fingerprint", 100, 100, 0)
        return measured

    monkeypatch.setattr(script, "remeasure", same_episodes)
    part = tmp_path / "sample.jsonl"
    part.write_text("".join(json.dumps(r) + "\n" for r in sample))
    assert script.main([str(part)]) == 0
    again = {int(line.split()[0]): line for line in capsys.readouterr().out.splitlines() if line[:1].isdigit()}
    assert again == {r["seed"]: rows[r["seed"]] for r in sample}

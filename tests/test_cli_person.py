"""The CLI speaks to a person (``pvnviz.cli``): a run ends with a headline (``--json`` for scripts), ``settings``
lists the presets and takes ``--preset``, hints name the app's real port, help texts carry no history, a number
that is too big is named so with what is echoed cut, an interrupted run leaves nothing but what ``--resume``
needs, and ``pvnviz app`` starts the Makefile's server from any folder."""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pvnviz.cli.main import main
from pvnviz.runs.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
POLYTOPE = ["run", "polytope", "--seed", "4", "--set", "train_steps=300", "--quiet"]


def test_a_run_ends_with_a_short_headline_against_the_paper(tmp_path, capsys):
    out = tmp_path / "r"
    assert main([*POLYTOPE, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    lines = text.strip().splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert 3 <= len(lines) <= 10, text
    assert lines[0].startswith("polytope, seed 4"), lines[0]
    assert f"J = {summary['learned_ascent_final_exact_J']:.3f}" in text  # the learned ascent's end
    assert f"J = {summary['optimal_J']:.3f}" in text and "the paper (Section 6.1" in text
    assert lines[-1].startswith(f"saved in {out}"), lines[-1]
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_json_prints_the_summary_for_scripts(tmp_path, capsys):
    out = tmp_path / "r"
    assert main([*POLYTOPE, "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((out / "summary.json").read_text())


def test_an_environment_runs_headline_names_each_input_and_the_papers_numbers(capsys):
    from pvnviz.cli.headline import headline

    summary = json.loads((ROOT / "data" / "cartpole-quick" / "summary.json").read_text())
    lines = headline("cartpole", "quick", 0, summary, "runs/q")
    text = "\n".join(lines)
    assert lines[0].startswith("cartpole, preset quick, seed 0")
    best = summary["inputs"]["fingerprint"]["best_mean_return"]
    assert f"fingerprint PVN: best along the ascent {best:.1f}" in text
    assert "flattened-weights PVN" in text and "close to 100" in text and len(lines) <= 8
    swimmer = json.loads((ROOT / "data" / "swimmer-budget-2000x5" / "summary.json").read_text())
    above = sum(v > 143 for v in swimmer["inputs"]["fingerprint"]["fresh_return_per_start"])
    assert f"{above} of 5 starts above DDPG's 143" in "\n".join(headline("swimmer", "paper", 0, swimmer, "x"))


def test_settings_lists_the_presets_and_takes_one(capsys):
    assert main(["settings", "cartpole", "--preset", "quick"]) == 0
    out = capsys.readouterr().out
    for name in PRESETS["cartpole"]:
        assert re.search(rf"^#\s+{re.escape(name)}\b", out, re.M), name
    assert re.search(r"^num_policies = 300\b", out, re.M)  # quick's, not paper's
    assert main(["settings", "cartpole"]) == 0
    assert re.search(r"^num_policies = 1000\b", capsys.readouterr().out, re.M)


def test_settings_refuses_an_unknown_preset_naming_the_presets(capsys):
    assert main(["settings", "cartpole", "--preset", "nope"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "unknown preset" in lines[0] and "quick" in lines[0], lines


def test_the_open_hint_names_the_port_the_app_starts_on(tmp_path, monkeypatch):
    from pvnviz.cli.collect import open_hint

    monkeypatch.setenv("PORT", "8700")
    hint = open_hint("cartpole", str(tmp_path / "r"))
    assert "localhost:8700/cartpole" in hint and "8501" not in hint
    assert "localhost:8700/polytope" in open_hint("polytope", str(tmp_path / "r"))
    monkeypatch.delenv("PORT")
    assert "localhost:8501/cartpole" in open_hint("cartpole", str(tmp_path / "r"))


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", [[], ["run"], ["settings"], ["compare"], ["manifest"], ["app"]])
def test_help_texts_carry_no_history(command, capsys):
    text = _help([*command, "--help"], capsys)
    assert "usage:" in text
    assert not re.search(r"\bissues?\s*#?\d+|\bitem \d+\)|\bcommit [0-9a-f]{7}|\bused to\b", text, re.I), text


@pytest.mark.parametrize("module", ["browserbench.ui", "browserbench.load", "browserbench.redraw", "pvnviz.bench.ray"])
def test_benchmark_help_texts_carry_no_history(module, capsys):
    import importlib

    with pytest.raises(SystemExit) as stop:
        importlib.import_module(module).main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert "usage:" in text
    assert not re.search(r"\bissues?\s*#?\d+|\bitem \d+\)|\bused to\b", text, re.I), text


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--set", "num_policies=" + "9" * 5000], "num_policies is too big"),
        (["--set", "learning_rate=" + "9" * 5000], "learning_rate is too big"),
        (["--set", "num_policies=" + "9" * 100], "num_policies is too big: at most 10,000,000"),
        (["--set", "num_policies=20000000"], "num_policies is too big: at most 10,000,000; got 20,000,000"),
        (["--seed", "9" * 5000], "--seed: too big"),
        (["--seed", "9" * 25], "--seed: too big"),
        (["--chunk-policies", "9" * 5000], "--chunk-policies: too big"),
    ],
)
def test_a_number_too_big_is_named_so_and_its_echo_is_cut(argv, words, tmp_path, capsys):
    try:
        status = main(["run", "cartpole", "--preset", "quick", "--quiet", "--out", str(tmp_path / "r"), *argv])
    except SystemExit as stop:  # argparse's refusals
        status = stop.code
    assert status == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], lines
    assert len(lines[0]) < 300, len(lines[0])
    assert not (tmp_path / "r").exists() and not list(tmp_path.iterdir())


def test_a_failed_run_leaves_no_staging_folder(tmp_path, capsys, monkeypatch):
    import pvnviz.polytope.experiment as polytope

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(polytope, "run_polytope", interrupted)
    assert main([*POLYTOPE, "--out", str(tmp_path / "r")]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "marker", "allowed"),
    [
        (["polytope", "--set", "train_steps=1000000"], b"train polytope PVN", set()),
        (["cartpole", "--preset", "quick", "--set", "train_steps=200000"], b"train PVN", {".r.chunks"}),
    ],
    ids=["polytope", "cartpole-quick"],
)
def test_ctrl_c_leaves_nothing_but_what_resume_needs(argv, marker, allowed, tmp_path):
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pvnviz", "run", *argv, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen = b""
    while marker not in seen:  # the progress bar: the run is under way, its staging folder made
        byte = proc.stderr.read(1)
        assert byte, seen[-500:]
        seen += byte
    assert (tmp_path / ".r.partial").is_dir()
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == 130, (seen + rest)[-1000:]
    left = set(os.listdir(tmp_path))
    assert left <= allowed, left
    if ".r.chunks" in left:  # what --resume keeps: whole chunks
        assert list((tmp_path / ".r.chunks").glob("chunk-*.npz"))


def _makefile_run_command() -> list[str]:
    """The Makefile's ``run`` recipe, after its python: the server ``make run`` starts."""
    text = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^run:.*\n\t(.+)$", text, re.M).group(1)
    words = shlex.split(recipe)
    return [w.replace("$(PORT)", "{port}") for w in words[words.index("-m") :]]


def test_app_starts_the_makefiles_server_from_any_folder(tmp_path, monkeypatch, capsys):
    from pvnviz.runs import paths

    calls = []

    def execve(path, argv, env):
        calls.append((path, argv, env, os.getcwd()))
        raise SystemExit(0)  # the process would be the server now

    monkeypatch.setattr(os, "execve", execve)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PORT", raising=False)
    for argv, env_port, port in ((["app", "--port", "8765"], None, "8765"), (["app"], "8701", "8701")):
        if env_port:
            monkeypatch.setenv("PORT", env_port)
        with pytest.raises(SystemExit):
            main(argv)
        path, args, env, cwd = calls.pop()
        assert path == sys.executable and args[0] == sys.executable
        assert args[1:] == [w.format(port=port) for w in _makefile_run_command()]
        assert Path(cwd) == paths.app_root() and (Path(cwd) / ".streamlit" / "config.toml").is_file()
        monkeypatch.chdir(tmp_path)
    assert main(["app", "--port", "0"]) == 2
    assert "from 1 to 65535" in capsys.readouterr().err

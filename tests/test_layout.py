"""The layers are a stack (scripts/layout.py, ``make layout``): core imports nothing else of the project, envs only
core, the polytope only core, runs never workers, ui never cli, pvnviz never browserbench, no module takes another's
private name, and no two packages import each other. The project keeps to it, and each rule catches its breach."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def layout():
    spec = importlib.util.spec_from_file_location("layout", ROOT / "scripts" / "layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_import_of_the_project_keeps_to_the_stack(layout):
    assert layout.violations() == []


# A small project with the real one's folders: each module's source (the packages' __init__.py are added empty).
CLEAN = {
    "pvnviz/core/ascent.py": "from pvnviz.core import policies\n",
    "pvnviz/core/policies.py": "def sample():\n    pass\n",
    "pvnviz/envs/batched.py": "from pvnviz.core.policies import sample\n",
    "pvnviz/polytope/experiment.py": "from pvnviz.core import policies\n",
    "pvnviz/runs/pipeline.py": "from pvnviz.envs import batched\n\n\ndef _rng():\n    pass\n\n\ndef stage_rng():\n    pass\n",  # noqa: E501
    "pvnviz/workers/tasks.py": 'TASKS = {"experiment": "pvnviz.runs.pipeline:run"}\n',
    "pvnviz/cli/compare.py": "from pvnviz.runs import pipeline\n\npipeline.stage_rng()\n",
    "pvnviz/bench/__init__.py": "import subprocess\n",
    "ui/beyond.py": "from pvnviz.runs.pipeline import stage_rng\nfrom pvnviz.workers import tasks\n",
    "browserbench/load.py": "from pvnviz.cli import compare\n",
    "app.py": "import ui.beyond\n",
}
BREACHES = {
    "core imports envs": ("pvnviz/core/ascent.py", "from pvnviz.envs.batched import BatchedEnv\n"),
    "envs imports runs": ("pvnviz/envs/batched.py", "def f():\n    from pvnviz.runs import pipeline\n"),
    "polytope imports runs": ("pvnviz/polytope/experiment.py", "from pvnviz.runs.pipeline import stage_rng\n"),
    "runs imports workers": ("pvnviz/runs/pipeline.py", "import pvnviz.workers.tasks\n"),
    "ui imports cli": ("ui/beyond.py", "from pvnviz.cli.compare import load_rows\n"),
    "pvnviz imports browserbench": ("pvnviz/bench/__init__.py", "from browserbench import load\n"),
    "a private name imported": ("pvnviz/cli/compare.py", "from pvnviz.runs.pipeline import _rng\n"),
    "a private name through its module": ("ui/beyond.py", "from pvnviz.runs import pipeline\n\npipeline._rng()\n"),
    "a private name by its dotted path": (
        "pvnviz/cli/compare.py",
        "import pvnviz.runs.pipeline\n\npvnviz.runs.pipeline._rng()\n",
    ),
    "two packages import each other": ("pvnviz/runs/pipeline.py", 'TASK = "pvnviz.cli.compare:main"\n'),
}

RULES = {  # what the line says of each breach of a rule on who imports whom
    "core imports envs": "pvnviz.core.ascent imports pvnviz.envs.batched: pvnviz.core imports nothing else",
    "envs imports runs": "pvnviz.envs.batched imports pvnviz.runs.pipeline: pvnviz.envs imports only pvnviz.core",
    "polytope imports runs": "imports pvnviz.runs.pipeline: pvnviz.polytope imports only pvnviz.core",
    "runs imports workers": "imports pvnviz.workers.tasks: pvnviz.runs does not import pvnviz.workers",
    "ui imports cli": "ui.beyond imports pvnviz.cli.compare: ui does not import pvnviz.cli",
    "pvnviz imports browserbench": "pvnviz.bench imports browserbench.load: pvnviz does not import browserbench",
}


def build(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for folder in path.relative_to(root).parents:
            if folder != Path(".") and not (root / folder / "__init__.py").exists():
                (root / folder / "__init__.py").write_text("")


def check(layout, root: Path) -> list[str]:
    return layout.violations(layout.project_modules(root), root)


def test_a_clean_tree_has_no_violation(layout, tmp_path):
    build(tmp_path, CLEAN)
    assert check(layout, tmp_path) == []


@pytest.mark.parametrize("breach", list(BREACHES))
def test_each_breach_is_one_line_naming_the_file_and_the_rule(layout, tmp_path, breach):
    path, text = BREACHES[breach]
    build(tmp_path, {**CLEAN, path: CLEAN[path] + text})
    found = check(layout, tmp_path)
    if breach == "two packages import each other":
        assert found == ["packages import each other: pvnviz.cli, pvnviz.runs"]
        return
    # the import itself, on one line; a package-level cycle it closes is named on a line of its own
    named = [line for line in found if line.startswith(f"{path}:")]
    assert len(named) == 1 and all(line.startswith("packages import each other") for line in found if line not in named)
    if "private" in breach:
        assert "pvnviz.runs.pipeline._rng" in named[0] and "another module's private name" in named[0]
    else:
        assert named[0].endswith(RULES[breach]), named


def test_a_module_may_use_its_own_private_names(layout, tmp_path):
    own = "def _helper():\n    pass\n\n\n_helper()\n"
    build(tmp_path, {**CLEAN, "pvnviz/runs/pipeline.py": CLEAN["pvnviz/runs/pipeline.py"] + own})
    assert check(layout, tmp_path) == []


def test_make_layout_exits_non_zero_on_a_violation(layout, tmp_path, capsys):
    build(tmp_path, CLEAN)
    assert layout.main([], root=tmp_path) == 0
    path, text = BREACHES["ui imports cli"]
    build(tmp_path, {path: CLEAN[path] + text})
    assert layout.main([], root=tmp_path) == 1
    out = capsys.readouterr().out
    assert "ui/beyond.py:3: ui.beyond imports pvnviz.cli.compare: ui does not import pvnviz.cli" in out

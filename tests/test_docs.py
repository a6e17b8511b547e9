"""The README and docs/ name only what exists: files, modules, links, sections; the generated pages are current.

Every repository path the docs name (in prose, code spans, code blocks or links: ``pvnviz/...``, ``pages/...``,
``ui/...``, ``browserbench/...``, ``tests/...``, ``data/...``, ``scripts/...``, ``docs/...``) must exist; every
dotted name under ``pvnviz``, ``ui`` or ``browserbench`` must be a module (found by ``importlib.util.find_spec``,
which imports only the packages on the way) or a name defined at the top of one; every relative link must reach
a file, and its ``#anchor`` a heading there. The README stays a front door (under 150 lines, linking every page
of docs/), and docs/architecture.md and docs/modules.md are what ``make layout`` writes from the sources now.

A docs page is what holds now, not how it came to be: none is over 300 lines, none names an issue number or a
commit hash (git keeps the history), and every figure on the measurement pages (speed.md, sharing.md) comes
with the ``python -m pvnviz.bench`` command that prints it (a command the benchmarks' parser takes), or, for a
limit the code sets, the file or constant that sets it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 150
PAGE_MAX_LINES = 300
# Pages another engineer is turning into current-state pages (results.md, beyond.md), and the generated map.
HISTORY_EXEMPT = {"architecture.md", "modules.md"}  # generated: module names only
MEASURED = ("speed.md", "sharing.md")  # pages of measured figures: each section names its benchmark command
PAGES = sorted((ROOT / "docs").glob("*.md"))

ISSUE_REF = re.compile(r"\bissues?\s*#?\d+", re.I)
# A commit-like hash: 7-40 hex digits with at least one digit and one letter (so no plain number or word).
COMMIT = re.compile(r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
# A measured figure: a number with a unit of time, rate, size or a ratio ("12 ms", "1.5 s", "4 MB", "1.27 times").
FIGURE = re.compile(r"\b\d[\d,.]*\s?(?:ms|s|MB|GB|kB|times|x|fps|frames a second|env-steps/s)\b")
CONSTANT = re.compile(r"`[A-Z][A-Z0-9_]{2,}`|`[a-zA-Z]+\.[a-zA-Z]+ = [^`]+`")  # `MAX_BYTES`, `maxUploadSize = 50`
BENCH_COMMAND = re.compile(r"python -m pvnviz\.bench ([^`\n]*)")

# A repository path: one of these folders, a slash, then path characters (globs and placeholders allowed).
PATH = re.compile(r"(?<![\w./~-])(?:pvnviz|pages|ui|browserbench|tests|data|scripts|docs)/[\w.*/-]*")
ROOT_FILES = re.compile(r"(?<![\w./~-])(?:app\.py|Makefile|pyproject\.toml|requirements(?:-dev)?\.txt)(?![\w.-])")
DOTTED = re.compile(r"(?<![\w./~-])(?:pvnviz|ui|browserbench)(?:\.[A-Za-z_]\w*)+")
FILE_SUFFIXES = {"py", "js", "md", "json", "toml", "txt", "npz", "pt", "png", "jsonl"}
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def named_paths(text: str) -> set[str]:
    """Every repository path the text names, as written (``path:line`` and ``#anchor`` tails cut off)."""
    found = set(ROOT_FILES.findall(text))
    for match in PATH.findall(text):
        path = re.sub(r"(#.*|:\d+(-\d+)?)$", "", match).rstrip(".")
        found.add(path)
    return found


MADE_BY_TESTS = "tests/artifacts/"  # git-ignored: what the browser tests write (screenshots), absent before they run


def missing_paths(text: str) -> list[str]:
    missing = []
    for path in sorted(named_paths(text)):
        if path.startswith(MADE_BY_TESTS):
            continue
        exists = any(ROOT.glob(path.rstrip("/"))) if "*" in path else (ROOT / path).exists()
        if not exists:
            missing.append(path)
    return missing


def top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def names_a_module(dotted: str) -> bool:
    """``pvnviz.runs.pipeline`` or ``pvnviz.runs.pipeline.run_experiment``: the longest module prefix is found,
    and what follows it must be defined at the top of that module. Only packages are imported on the way."""
    parts = dotted.split(".")
    spec = None
    for i in range(1, len(parts) + 1):
        if spec is not None and spec.submodule_search_locations is None:  # a module: the rest is an attribute
            return parts[i - 1] in top_level_names(Path(spec.origin))
        try:
            found = importlib.util.find_spec(".".join(parts[:i]))
        except ModuleNotFoundError:
            found = None
        if found is None:
            return spec is not None and spec.origin is not None and parts[i - 1] in top_level_names(Path(spec.origin))
        spec = found
    return True


def unknown_modules(text: str) -> list[str]:
    dotted = {d for d in DOTTED.findall(text) if d.rsplit(".", 1)[-1] not in FILE_SUFFIXES}
    return sorted(d for d in dotted if not names_a_module(d))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation (backticks included) dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def broken_links(text: str, doc: Path) -> list[str]:
    broken = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, fragment = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists():
            broken.append(target)
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(target)
    return broken


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_named_exists(doc):
    assert missing_paths(doc.read_text()) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_module_named_exists(doc):
    assert unknown_modules(doc.read_text()) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(doc):
    assert broken_links(doc.read_text(), doc) == []


def test_readme_is_a_front_door():
    text = README.read_text()
    assert len(text.splitlines()) < README_MAX_LINES
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in LINK.findall(text)}
    assert [p.name for p in DOCS[1:] if p.resolve() not in linked] == []  # every page of docs/ is linked
    assert "docs/screenshot.png" in named_paths(text)


def test_architecture_is_what_make_layout_writes():
    spec = importlib.util.spec_from_file_location("layout", ROOT / "scripts" / "layout.py")
    layout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layout)
    pages = {"architecture.md": layout.architecture_markdown(), "modules.md": layout.modules_markdown()}
    for page, expected in pages.items():
        assert (ROOT / "docs" / page).read_text() == expected, f"docs/{page} is stale: run make layout"


def test_the_checks_catch_what_does_not_exist():
    """The checks above can fail: a wrong path, module, link or section is reported, a right one is not."""
    doc = ROOT / "docs" / "results.md"
    text = (
        "`pvnviz/run_checks.py` and pvnviz/runs/files.py:146-161, `data/*-compare.jsonl`, `data/*-nothing.jsonl`; "
        "`pvnviz.runs.pipeline.run_experiment`, `pvnviz.runs.checks`, `pvnviz.runs.pipeline.no_such_name`, "
        "`pvnviz.envs.scene.Replay`; [a](beyond.md#presets) [b](nope.md) [c](beyond.md#no-such-section) "
        "[d](../README.md#pages) [e](#polytope) [f](https://example.org/x) "
        "`browserbench/browser.py`, `browserbench/nothing.py`, `browserbench.browser.launch`, `browserbench.nothing`"
    )
    assert missing_paths(text) == ["browserbench/nothing.py", "data/*-nothing.jsonl", "pvnviz/run_checks.py"]
    assert unknown_modules(text) == ["browserbench.nothing", "pvnviz.runs.checks", "pvnviz.runs.pipeline.no_such_name"]
    assert broken_links(text, doc) == ["nope.md", "beyond.md#no-such-section"]


def history(text: str) -> list[str]:
    """Every issue number and commit-like hash the text names."""
    return ISSUE_REF.findall(text) + COMMIT.findall(text)


def sections(text: str) -> list[tuple[str, str]]:
    """The page's ``##``/``###`` sections as (heading, body); the text before the first heading is ``""``."""
    parts = re.split(r"^(#{2,3} .+)$", text, flags=re.M)
    return [("", parts[0])] + list(zip(parts[1::2], parts[2::2], strict=True))


def unsourced_figures(text: str) -> list[str]:
    """The lines that state a figure with nothing to re-derive it: no ``python -m pvnviz.bench`` command in their
    section, and no code on the line itself (a repository path, or an UPPER_CASE constant, that sets or tests it)."""
    unsourced = []
    for _, body in sections(text):
        if BENCH_COMMAND.search(body):
            continue
        for line in body.splitlines():
            if FIGURE.search(line) and not (PATH.search(line) or CONSTANT.search(line)):
                unsourced.append(line.strip())
    return unsourced


def bad_bench_commands(text: str) -> list[str]:
    """Every ``python -m pvnviz.bench ...`` command the text names that the benchmarks refuse: an unknown
    benchmark, or ``load`` flags its own parser does not take (parsed by that parser, nothing measured)."""
    from unittest import mock

    from browserbench import load
    from pvnviz.bench import BENCHMARKS

    class Parsed(Exception):
        pass

    parse_args = load.OneLineParser.parse_args

    def parse_only(self, args=None, namespace=None):
        parse_args(self, args, namespace)
        raise Parsed

    bad = []
    for command in BENCH_COMMAND.findall(text):
        words = command.split("#")[0].split()
        if not words or words[0] not in BENCHMARKS:
            bad.append(command)
        elif words[0] == "load":
            with mock.patch.object(load.OneLineParser, "parse_args", parse_only), mock.patch("sys.stderr"):
                try:
                    load.main(words[1:])
                except Parsed:
                    continue
                except SystemExit:
                    pass
            bad.append(command)
    return bad


@pytest.mark.parametrize("doc", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_is_over_300_lines(doc):
    assert len(doc.read_text().splitlines()) <= PAGE_MAX_LINES


@pytest.mark.parametrize("doc", [README, *PAGES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_holds_history(doc):
    if doc.name in HISTORY_EXEMPT:
        pytest.skip(f"{doc.name} is generated from the sources")
    assert history(doc.read_text()) == []


@pytest.mark.parametrize("name", MEASURED)
def test_every_figure_names_the_command_that_measures_it(name):
    text = (ROOT / "docs" / name).read_text()
    assert unsourced_figures(text) == []
    assert BENCH_COMMAND.search(text)
    assert bad_bench_commands(text) == []


def test_the_history_and_figure_checks_can_fail():
    """Issue numbers, hashes, unsourced figures and wrong bench commands are reported; identifiers are not."""
    # the references are made here at run time, so no line of this file reads as one
    ref, hashed_ref, first, then = "is" + "sue 17", "Is" + "sue #9", "7b5b" + "0fd", "b442" + "8ee"
    text = f"fixed in {ref} ({first}, then {then}); see {hashed_ref}. Not: 1000000, deadbeef, sha256, e5"
    assert history(text) == [ref, hashed_ref, first, then]
    assert history("`PVN_WORKERS=2`, 10^9 env-steps, 5,000 policies, 2026-11-27, a0-b1") == []
    page = "# T\n\nIntro.\n\n## Load\n\n4 runs in 12.1 s.\n\n## Drag\n\n`python -m pvnviz.bench ui`: 16 ms.\n"
    assert unsourced_figures(page) == ["4 runs in 12.1 s."]
    assert unsourced_figures("## Limits\n\n50 MB (`MAX_ZIP_BYTES`), 64 MB in `ui/served_memory.py`\n") == []
    assert bad_bench_commands("`python -m pvnviz.bench nothing` and `python -m pvnviz.bench ui`") == ["nothing"]
    assert bad_bench_commands("`python -m pvnviz.bench load --sessions 1 8 --no-such-flag`") != []
    assert bad_bench_commands("`python -m pvnviz.bench load --sessions 1 8 --same-seed --repeat 3`") == []

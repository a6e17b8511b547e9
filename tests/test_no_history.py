"""Source files state contracts; git keeps the history.

No tracked source file (code, tests, build and CI files, the JavaScript components) names an issue number (the
word issue and a number, "#" optional) or a commit hash (7 to 40 hex digits holding both a digit and a letter, not a
``#`` colour or a ``0x`` literal). The docs pages (``docs/*.md``, ``README.md``; ``tests/test_docs.py`` checks
them) and the shipped data (``data/``) are outside this check; the checks' own examples are made at run time,
so this file is checked too.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXCLUDED = re.compile(r"^(?:docs/[^/]*\.md|README\.md|data/)")
ISSUE = re.compile(r"\bissues?\s*#?\s*[0-9]+", re.I)
# A commit-like hash: lowercase hex, 7-40 long, with a digit and a letter (so no plain numbers and no words
# such as "defaced"), not a "#rrggbb" colour.
HASH = re.compile(r"(?<![#\w])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?!\w)")


def tracked_sources() -> list[Path]:
    """The tracked text files this check reads, as absolute paths."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    paths = []
    for name in listed.splitlines():
        path = ROOT / name
        if EXCLUDED.match(name) or not path.is_file():
            continue
        raw = path.read_bytes()
        if b"\0" in raw:
            continue
        paths.append(path)
    return paths


def history_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) for every line naming an issue number or a commit-like hash."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)
            if ISSUE.search(line) or HASH.search(line)]


# The samples are templates filled here at run time ({ref}: an issue reference, {hash}: a commit-like hash), so
# that this file names no history itself, not even in the words of a sample.
REFS = {"ref": "is" + "sue 17", "Ref": "Is" + "sue 18", "hashed_ref": "Is" + "sue #9", "hash": "aef3" + "193"}


@pytest.mark.parametrize(("template", "found"), [
    ("# polling their runs ({ref}).", True),
    ('"""{Ref}, item 5: every policy is sent once."""', True),
    ("up to {hash}", True),
    ("see {hashed_ref}", True),
    ("a page loaded before {hash}.", True),
    ("colour = '#1f77b4'", False),
    ("rng = np.random.default_rng(20200304)", False),
    ("LCG_MULTIPLIER = np.uint64(6364136223846793005)", False),
    ("mask = 0xdeadbeef1", False),
    ("the {word} counted frames by hand", False),
])
def test_history_lines_finds_issue_numbers_and_hashes(template: str, found: bool) -> None:
    line = template.format(word="is" + "sue", **REFS)
    assert bool(history_lines(line)) is found


def test_no_issue_numbers_or_commit_hashes_in_source_files() -> None:
    found = []
    for path in tracked_sources():
        text = path.read_text(errors="replace")
        found += [f"{path.relative_to(ROOT)}:{number}: {line}" for number, line in history_lines(text)]
    assert not found, "history belongs to git, not the source:\n" + "\n".join(found)

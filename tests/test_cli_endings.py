"""How ``python -m pvnviz`` ends, in real processes: SIGINT and SIGTERM at any moment, and a really full disk.

The promise (``pvnviz.cli.main``): every ending is one line on stderr and a distinct status, 130 for SIGINT,
143 for SIGTERM, 1 for a full disk that the line names with its path. The references are independent of the
code under test: the kernel's exit status, the text on stderr, ``load_result`` opening what is in --out, and
a tmpfs of a few dozen KiB mounted in a private mount namespace (``unshare -m``) that fills for real.
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pvnviz.runs.files import load_result

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--preset", "quick",
    "--set", "num_policies=40", "--set", "num_episodes=5", "--set", "train_steps=100", "--set", "ascent_steps=20",
    "--set", "eval_every=10", "--set", "eval_episodes=5", "--set", "num_starts=2", "--set", "inputs=fingerprint",
]  # fmt: skip
SIGTERM_BIT = 1 << (signal.SIGTERM - 1)  # in /proc/PID/status SigCgt: the handlers of pvnviz.cli.endings are in place


def _cli(out: Path, quiet: bool) -> list[str]:
    return [sys.executable, "-m", "pvnviz", "run", "cartpole", "--out", str(out), *TINY, *(["--quiet"] * quiet)]


def _handlers_in_place(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Wait until the process catches SIGTERM, i.e. its first lines ran (interpreter start-up comes before)."""
    status = Path(f"/proc/{proc.pid}/status")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            caught = next(line for line in status.read_text().splitlines() if line.startswith("SigCgt:"))
        except (OSError, StopIteration):
            time.sleep(0.2)  # no /proc: give the interpreter time to start
            return
        if int(caught.split()[1], 16) & SIGTERM_BIT:
            return
        time.sleep(0.0005)


def _wait_for(path_test, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline and not path_test():
        time.sleep(0.0005)


def _check_ending(proc: subprocess.Popen, signum: int, out: Path) -> str:
    """Send ``signum`` unless the run already ended; the ending must be the promised one. Returns what happened."""
    if proc.poll() is not None:  # it finished first: nothing was sent
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        load_result(out, "cartpole")
        return "finished before the signal"
    proc.send_signal(signum)
    stdout, err = proc.communicate(timeout=120)
    if proc.returncode == 0 and out.exists() and "error:" not in err:
        # The signal came after the process's last look at pending signals (pvnviz.cli.endings._last_word), or
        # as the kernel was ending it: it is discarded with the process. Any moment close to the end can land
        # there, a random one too. The run must be whole.
        load_result(out, "cartpole")
        return "finished as the signal came"
    expected = {signal.SIGINT: 130, signal.SIGTERM: 143}[signum]
    assert proc.returncode == expected, (proc.returncode, err)
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    name = {signal.SIGINT: "interrupted (Ctrl-C)", signal.SIGTERM: "terminated (SIGTERM)"}[signum]
    assert name in lines[0], lines[0]
    if out.exists():  # the run was published before the signal: it must be whole, and the line must say so
        assert "saved" in lines[0] or "work was done" in lines[0], lines[0]
        load_result(out, "cartpole")
    else:
        assert "saved:" not in lines[0] and not stdout.strip(), lines[0]
    return lines[0]


@pytest.mark.slow
def test_sigint_and_sigterm_at_random_moments_end_in_one_line_with_130_or_143(tmp_path):
    # One whole run: how long a run lives on this machine now (imports, collection, training, saving, exit).
    started = time.monotonic()
    reference = subprocess.run(_cli(tmp_path / "reference", True), cwd=ROOT, capture_output=True, timeout=300)
    assert reference.returncode == 0, reference.stderr
    lifetime = time.monotonic() - started
    rng = random.Random(17)
    count = 14
    # Stratified over the lifetime, from the first moment the process's own code runs to just before its end.
    delays = [lifetime * 0.95 * (i + rng.random()) / count for i in range(count)]
    moments: list[tuple[str, object]] = [(f"{d:.2f} s", d) for d in delays]
    # And three moments the random ones may miss: collecting, saving, and after the run was moved into --out.
    moments += [("first chunk", ".out.chunks/chunk-00000.npz"), ("saving", ".out.partial/dataset.npz"), ("exit", "out")]
    results = []
    for index, (label, when) in enumerate(moments):
        signum = (signal.SIGINT, signal.SIGTERM)[index % 2]
        out = tmp_path / f"case{index}" / "out"
        out.parent.mkdir()
        proc = subprocess.Popen(
            _cli(out, quiet=index % 3 != 0), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        _handlers_in_place(proc)
        if isinstance(when, float):
            time.sleep(when)
        else:
            _wait_for((out.parent / when).exists, proc)
        results.append((label, signum.name, _check_ending(proc, signum, out)))
    for row in results:
        print(*row, sep=" | ")
    delivered = [r for r in results if not r[2].startswith("finished")]
    assert len(delivered) >= 12, results


def _mount_command() -> list[str] | None:
    """A command prefix that runs ``sh -c`` in a private mount namespace where tmpfs can be mounted, or None."""
    if shutil.which("unshare") is None:
        return None
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):  # root, then an unprivileged user namespace
        probe = subprocess.run([*prefix, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True)
        if probe.returncode == 0:
            return prefix
    return None


@pytest.mark.parametrize(
    "size, full_at",
    [
        ("16k", ".out.chunks"),  # the collection's chunks: numpy's OSError(ENOSPC)
        ("80k", ".out.partial"),  # dataset.npz fits, the PVN does not: torch.save's RuntimeError
    ],
)
def test_a_full_disk_ends_with_1_and_names_the_disk(tmp_path, size, full_at):
    prefix = _mount_command()
    if prefix is None:
        if os.environ.get("CI"):
            pytest.fail("CI must allow a mount namespace (unshare -m as root, or unshare -rm) for the full-disk test")
        pytest.skip("no mount namespace here (unshare -m / -rm): cannot make a small file system")
    disk = tmp_path / "disk"
    disk.mkdir()
    # In the namespace: mount, run the CLI, then list what the run left beside --out (the mount dies with it).
    script = 'd="$2"; mount -t tmpfs -o size="$1" tmpfs "$d" || exit 99; shift 2; "$@"; status=$?; '
    script += 'ls -A "$d" 1>&2; exit $status'
    proc = subprocess.run(
        [*prefix, "sh", "-c", script, "sh", size, str(disk), *_cli(disk / "out", True)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "the disk is full" in lines[0] and str(disk / full_at) in lines[0], lines[0]
    listing = proc.stderr.splitlines()[lines and proc.stderr.splitlines().index(lines[0]) + 1 :]
    assert ".out.partial" not in listing and "out" not in listing, proc.stderr  # the space is free again
    if full_at == ".out.partial":  # the network filled the disk, after the collection: its chunks stay for --resume
        assert listing == [".out.chunks"], proc.stderr
        assert "enforce fail" not in proc.stderr


# The rules of pvnviz.cli.endings, each in a small process of its own (no torch: ~0.1 s each).
RULES = {
    "a signal in the exit work after a success": (
        "atexit.register(lambda: os.kill(os.getpid(), signal.SIGTERM))\nendings.finish(0)",
        143,
        "terminated (SIGTERM) as the CLI was exiting",
    ),
    "a signal in the exit work after an error line": (
        "print('error: bad input', file=sys.stderr)\n"
        "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))\nendings.finish(2)",
        2,
        "bad input",
    ),
    "a second signal while the first one's ending is written": (
        "try:\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(5)\nexcept KeyboardInterrupt:\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n    time.sleep(0.2)\n"
        "    print('error: interrupted', file=sys.stderr)\nendings.finish(130)",
        130,
        "interrupted",
    ),
    "a half-closed file complaining after the signal": (
        "class File:\n    def __del__(self):\n        raise ValueError('seek of closed file')\n"
        "try:\n    f = File()\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(5)\nexcept KeyboardInterrupt:\n"
        "    del f\n    print('error: interrupted', file=sys.stderr)\nendings.finish(130)",
        130,
        "interrupted",
    ),
    # torch.save's C++ writer calls back into Python: a signal there is held until the block ends, then raised.
    "a signal held while saving, raised after it": (
        "done = []\ntry:\n    with endings.deferred():\n        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        time.sleep(0.2)\n        done.append('saved')\nexcept KeyboardInterrupt as err:\n"
        "    print(f'error: {err} after {done}', file=sys.stderr)\nendings.finish(143)",
        143,
        "terminated (SIGTERM) after ['saved']",
    ),
    # Python code of torch or mujoco may be running under their C++ (pybind11 ends the process if an exception
    # crosses it): a signal there is raised once the main thread is back in other code. A module under a folder
    # named torch stands for it (the real torch is not shadowed: it is loaded from its file, under another name).
    "a signal inside a native library's Python code, raised once back in ours": (
        "import importlib.util, pathlib, tempfile, threading\n"
        "folder = pathlib.Path(tempfile.mkdtemp()) / 'torch'\nfolder.mkdir()\n"
        "(folder / 'slow.py').write_text('import time\\ndef work(done):\\n    end = time.time() + 0.5\\n'\n"
        "    '    while time.time() < end:\\n        pass\\n    done.append(\"returned\")\\n')\n"
        "spec = importlib.util.spec_from_file_location('slow', folder / 'slow.py')\n"
        "slow = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(slow)\ndone = []\n"
        "try:\n    threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()\n    slow.work(done)\n"
        "    time.sleep(5)\nexcept KeyboardInterrupt as err:\n"
        "    print(f'error: {err} after {done}', file=sys.stderr)\nendings.finish(130)",
        130,
        "interrupted (Ctrl-C) after ['returned']",
    ),
}


@pytest.mark.parametrize("rule", RULES)
def test_the_endings_rules_one_line_and_the_signals_status(rule):
    body, status, words = RULES[rule]
    code = "import atexit, os, signal, sys, time\nfrom pvnviz.cli import endings\nendings.install()\n" + body
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == status, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_end_the_cli_in_one_line_and_keep_the_earlier_run(sig, status, tmp_path):
    out = tmp_path / "run"
    quick = [sys.executable, "-m", "pvnviz", "run", "cartpole", "--preset", "quick", "--quiet", "--out", str(out)]
    assert subprocess.run(quick, cwd=ROOT, capture_output=True, timeout=300).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    slow = [a for a in quick if a != "--quiet"] + ["--overwrite", "--set", "train_steps=200000"]
    proc = subprocess.Popen(slow, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = b""
    while b"train PVN" not in seen:  # the progress bar: imports done, handlers set, training under way
        byte = proc.stderr.read(1)
        assert byte, seen[-500:]
        seen += byte
    proc.send_signal(sig)
    _, rest = proc.communicate(timeout=120)
    err = (seen + rest).decode(errors="replace")
    assert proc.returncode == status, err[-2000:]
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    assert lines[-1].startswith("error:") and "Traceback" not in err, lines[-3:]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the earlier run, byte for byte

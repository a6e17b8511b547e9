"""What ``python -m pvnviz.bench load`` (``browserbench/load.py``) reads and prints: one measurement's
numbers (``LoadResult``), processes' CPU and peak memory from ``/proc``, the report, and the last session's result
against one session's ("8 sessions with the same seed finish in about one run's time").
"""

from __future__ import annotations

import contextlib
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

SETTLE_S = 2.0  # seconds after the last result before each tab's CPU is read: its figures are drawn by then


@dataclass
class LoadResult:
    sessions: int
    same_seed: bool
    times: list[float | None] = field(default_factory=list)  # click to result, per session (None: timed out)
    delivered: list[float | None] = field(default_factory=list)  # click to the result's message at the tab
    tabs_cpu: float | None = None  # CPU s of the sessions' Chromium renderers from the clicks to settled
    server_cpu: float = 0.0
    server_peak_mb: float = 0.0
    idle_open: float | None = None  # the first session's page on the idle server
    idle_switch: tuple[float, float] | None = None  # (seconds to the redraw, seconds to idle after its rerun)
    loaded_switch: tuple[float, float] | None = None
    visitor_open: float | None = None
    stop_latency: float | None = None
    stop_rerun: float | None = None  # from the click to the Run button enabled again (the panel's rerun)
    jobs: list[tuple[str, float, float]] = field(default_factory=list)  # (label and end, waited s, ran s) per job
    workers_ready: list[float] = field(default_factory=list)  # seconds each run worker took to start, from the log


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command's name (state first, then the parent's pid)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of one process (not its children)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def renderers_cpu() -> dict[int, float]:
    """{pid: CPU seconds} of this benchmark's Chromium renderers (``--type=renderer`` processes descending from this
    process; one per browser context, never shared between two), every thread's, from ``/proc``: Chromium's own
    task durations are wall time, which counts the seconds a task waited for a core on a busy machine."""
    parents, renderers = {}, []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int(_stat(int(entry.name))[1])
            if b"--type=renderer" in (entry / "cmdline").read_bytes():
                renderers.append(int(entry.name))
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
    out = {}
    for pid in renderers:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, os.getpid()):
            ancestor = parents.get(ancestor)
        if ancestor == os.getpid():
            with contextlib.suppress(OSError):
                out[pid] = proc_cpu(pid)
    return out


def cpu_since(before: dict[int, float]) -> float | None:
    """CPU seconds the renderers of ``before`` used since, summed over those still running (None if none is)."""
    used = []
    for pid, cpu in before.items():
        with contextlib.suppress(OSError):  # a renderer that ended: left out
            used.append(proc_cpu(pid) - cpu)
    return sum(used) if used else None


def _fmt(value: float | None, cap: float) -> str:
    return f"> {cap:.0f}" if value is None else f"{value:.1f}"


def _fmt_switch(value: tuple[float, float] | None) -> str:
    if value is None:
        return "not measured"
    return f"redraw {value[0] * 1000:.0f} ms, idle after its rerun {value[1]:.2f} s"


def report(label: str, r: LoadResult, timeout_s: float) -> str:
    times = ", ".join(_fmt(t, timeout_s) for t in r.times)
    done = last_result(r)
    last = f"{done:.1f} s" if done is not None else f"> {timeout_s:.0f} s"
    return "\n".join(
        [
            f"{label}: {r.sessions} sessions, {'one seed' if r.same_seed else 'own seeds'}",
            f"  click to result (s): {times}; all done after {last}",
            "  click to the result's message at the tab (s; the server's part): "
            + (", ".join(_fmt(t, timeout_s) for t in r.delivered) or "not measured"),
            f"  the sessions' tabs from the clicks to {SETTLE_S:.0f} s after the last result: "
            + (
                f"{r.tabs_cpu:.1f} s of Chromium's CPU, {r.tabs_cpu / r.sessions:.2f} s per tab (they share this "
                "machine's 2 cores with the server and its workers; a class's tabs run on their own laptops)"
                if r.tabs_cpu is not None
                else "not measured"
            ),
            f"  server process: {r.server_cpu:.1f} s CPU over the runs, peak memory {r.server_peak_mb:.0f} MB",
            f"  queue full: new visitor's page {_fmt(r.visitor_open, timeout_s)} s (goal < 6; idle server "
            f"{_fmt(r.idle_open, timeout_s)} s)",
            f"  view switch, queue full: {_fmt_switch(r.loaded_switch)}; idle server: {_fmt_switch(r.idle_switch)} "
            "(goal: within 2x)",
            f"  Stop with every worker busy: {_fmt(r.stop_latency, timeout_s)} s to 'Run stopped' (goal < 1), "
            f"{_fmt(r.stop_rerun, timeout_s)} s to Run enabled again (the panel's rerun)",
            "  run workers ready (s after their start; the clicks wait for them): "
            + (", ".join(f"{t:.1f}" for t in r.workers_ready) or "not logged"),
            "  jobs in the server's log (waited, ran): "
            + ("; ".join(f"{label} {w:.1f} s, {t:.1f} s" for label, w, t in r.jobs) or "none logged"),
        ]
    )


def last_result(result: LoadResult) -> float | None:
    """Seconds from the clicks to the last session's result (None if one timed out)."""
    return None if None in result.times or not result.times else max(result.times)


def ratios(runs: dict[int, LoadResult]) -> dict[int, float]:
    """{sessions: the last session's result against one session's}, for every session count measured beside one
    session (on one seed: "8 sessions with the same seed finish in about one run's time")."""
    one = last_result(runs[1]) if 1 in runs else None
    if not one:
        return {}
    return {n: last / one for n, r in sorted(runs.items()) if n > 1 and (last := last_result(r)) is not None}


def ratio_lines(label: str, runs: dict[int, LoadResult]) -> tuple[list[str], dict[int, float]]:
    """The lines saying each session count's ratio (``ratios``), or why it has none; and the ratios."""
    found = ratios(runs)
    lines = [f"{label}: the last of {n} sessions at {r:.2f} times one session's" for n, r in found.items()]
    for n in sorted(runs):
        if n > 1 and n not in found:
            why = "one session was not measured" if 1 not in runs else "a session timed out"
            lines.append(f"{label}: no ratio for {n} sessions ({why})")
    return lines, found


def median_lines(label: str, repeats: list[dict[int, float]]) -> list[str]:
    """Each session count's median ratio over the repeats that have one."""
    lines = []
    for n in sorted({n for found in repeats for n in found}):
        values = sorted(found[n] for found in repeats if n in found)
        shown = ", ".join(f"{v:.2f}" for v in values)
        lines.append(
            f"{label}: the last of {n} sessions at {statistics.median(values):.2f} times one session's "
            f"(median of {len(values)} of {len(repeats)} runs: {shown})"
        )
    return lines

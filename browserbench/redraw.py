"""Browser redraw benchmark: ``python -m pvnviz.bench redraw [--events 20]``.

Starts ``streamlit run scripts/bench/redraw_app.py`` (three ``plotly_view`` figures, each with a benchmark slider)
and drives Debian's Chromium at 1280x720. For each figure it fires ``input`` events on the slider, one at a time,
and reads the time the page itself measured from the event (``performance.now()`` in the slider's listener) to
the redraw's promise resolving (``promise``), to the ``requestAnimationFrame`` after it (``frame``: the number
asked for) and to the task after that frame (``task``, roughly after the paint); it prints the median and p95
(nearest rank) of each. The figures:

* ``line101``: ``Plotly.restyle`` of a 101-point line's y;
* ``gl5000``: ``Plotly.react`` of 5,000 ``Scattergl`` markers plus a 400-arrow quiver (one line trace, None gaps);
* ``svg5000``: the same with ``Scatter`` (SVG) markers.

``measure_redraw`` works for any range input whose listener records its times in ``window.pvnRedrawTimes[name]``
(``{promise: [...], frame: [...], task: [...]}``, as scripts/bench/redraw_slider.js does).

``--keys`` measures the polytope page's discount key instead: the app served as ``make run`` serves it, the
page opened fresh in each repetition, ``--presses`` presses of an arrow key on the discount's input, each after the
last one's redraw, timed by the page from the key press to the animation frame after the redraw
(``browserbench.instrument.keyboard``: the frame after the figures change has been painted). With ``--baseline
DIR`` a second checkout (``git worktree add DIR REV``) is measured the same way, alternating with this one in
every repetition, so both see the same machine load. It prints the median and p95 of all presses, and each
repetition's median and p95.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from browserbench.browser import IDLE, launch, start_server, stop_server
from pvnviz.cli.argtypes import OneLineParser, positive_int

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "scripts/bench/redraw_app.py"
CASES = {
    "line101": "restyle, 101-point line",
    "gl5000": "react, 5,000 Scattergl + 400-arrow quiver",
    "svg5000": "react, 5,000 Scatter (SVG) + 400-arrow quiver",
}
KINDS = ("promise", "frame", "task")
DISPATCH = """([name, value]) => {
  const input = document.querySelector(`input[data-target="${name}"]`);
  input.value = String(value);
  input.dispatchEvent(new Event("input", { bubbles: true }));
}"""
DONE = "([name, n]) => (window.pvnRedrawTimes?.[name]?.task.length ?? 0) >= n"


def measure_redraw(page, name: str, events: int = 20, warmup: int = 2, pause_ms: int = 50) -> dict[str, list[float]]:
    """Fire ``warmup + events`` input events, one after the other's redraw (and ``pause_ms`` later), on the range
    input ``input[data-target=name]``, with the figure ``name`` scrolled to the middle of the window; returns the
    last ``events`` times in ms by kind (``promise``, ``frame``, ``task``)."""
    page.wait_for_function(f"window.pvnPlotly?.views.has({name!r})", timeout=60_000)
    page.evaluate("(name) => window.pvnPlotly.views.get(name).el.scrollIntoView({ block: 'center' })", name)
    page.wait_for_timeout(500)  # the figure on screen, as a user sees it while dragging (the slider may not be)
    for i in range(1, warmup + events + 1):
        page.evaluate(DISPATCH, [name, 10 * i])
        page.wait_for_function(DONE, arg=[name, i], timeout=60_000)
        page.wait_for_timeout(pause_ms)
    times = page.evaluate("(name) => window.pvnRedrawTimes[name]", name)
    return {kind: values[warmup:] for kind, values in times.items()}


def summary(values: list[float]) -> tuple[float, float]:
    """(median, p95 by nearest rank) of ``values``."""
    ranked = sorted(values)
    return statistics.median(ranked), ranked[math.ceil(0.95 * len(ranked)) - 1]


def run(events: int) -> dict[str, dict[str, list[float]]]:
    """Every case's times, measured in one Chromium page of a fresh server."""
    from playwright.sync_api import sync_playwright

    proc, url = start_server(ROOT, watch_files=False, script=SCRIPT)
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            page.goto(url)
            page.wait_for_selector(IDLE, timeout=120_000)
            page.wait_for_function(f"window.pvnPlotly?.views.size === {len(CASES)}", timeout=120_000)
            results = {name: measure_redraw(page, name, events) for name in CASES}
            browser.close()
    finally:
        stop_server(proc)
    return results


def discount_keys(browser, url: str, presses: int) -> list[float]:
    """Input-to-redraw times (ms) of ``presses`` discount key presses on a fresh polytope page of ``url``; the page
    closes once the PVN retrained after them is drawn (its work is not left to the next measurement)."""
    from browserbench.instrument import ROOT as INSTRUMENT
    from browserbench.instrument import keyboard

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(f"{url}/polytope")
        page.wait_for_selector(IDLE, timeout=180_000)
        page.wait_for_selector(f"{INSTRUMENT}[data-drawn]", timeout=180_000)
        page.wait_for_timeout(1500)
        times, _ = keyboard(page, "gamma", presses)
        page.wait_for_function(f"document.querySelector('{INSTRUMENT}').dataset.stale === 'false'", timeout=120_000)
        page.wait_for_selector(IDLE, timeout=180_000)
        return times
    finally:
        page.close()


def run_keys(roots: dict[str, Path], presses: int, repeats: int) -> dict[str, list[list[float]]]:
    """Each root's key times, one list per repetition, the roots alternating within each repetition."""
    from playwright.sync_api import sync_playwright

    servers = {name: start_server(root) for name, root in roots.items()}
    times: dict[str, list[list[float]]] = {name: [] for name in roots}
    try:
        with sync_playwright() as p:
            browser = launch(p)
            for _ in range(repeats):
                for name, (_, url) in servers.items():
                    times[name].append(discount_keys(browser, url, presses))
            browser.close()
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    return times


def print_keys(roots: dict[str, Path], times: dict[str, list[list[float]]], presses: int) -> None:
    print(f"Polytope page, discount key (γ, arrow key on its input): key press to the frame after the redraw, "
          f"{presses} presses x {len(next(iter(times.values())))} page opens, Chromium 1280x720 (ms)")  # fmt: skip
    for name, runs in times.items():
        pooled = [t for run in runs for t in run]
        median, p95 = summary(pooled)
        each = ", ".join("{:.1f}/{:.1f}".format(*summary(run)) for run in runs if run)
        print(f"  {name:<8} {roots[name]}: median {median:6.1f}, p95 {p95:6.1f} over {len(pooled)} presses "
              f"(goal 50 / 100); each open's median/p95: {each}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m pvnviz.bench redraw", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=positive_int, default=20, help="measured input events per figure")
    parser.add_argument("--keys", action="store_true", help="the polytope page's discount key instead (see above)")
    parser.add_argument("--presses", type=positive_int, default=12, help="--keys: key presses per page open")
    parser.add_argument("--repeats", type=positive_int, default=5, help="--keys: page opens per checkout")
    parser.add_argument("--root", default=str(ROOT), help="--keys: the checkout to serve (default: this one)")
    parser.add_argument("--baseline", default="", help="--keys: a second checkout measured alternately")
    args = parser.parse_args(argv)
    if args.keys:
        roots = {"now": Path(args.root)} | ({"baseline": Path(args.baseline)} if args.baseline else {})
        print_keys(roots, run_keys(roots, args.presses, args.repeats), args.presses)
        return 0
    results = run(args.events)
    print(f"Redraw after an input event, Chromium 1280x720, {args.events} events each (ms: median / p95)")
    for name, label in CASES.items():
        cells = [(kind, *summary(results[name][kind])) for kind in KINDS]
        print(f"  {label:<46} " + "   ".join(f"{kind} {median:6.1f} / {p95:6.1f}" for kind, median, p95 in cells))
    return 0

"""UI benchmark: ``python -m pvnviz.bench ui``, the app's pages in Chromium from input to redraw.

Starts ``streamlit run app.py`` on a free port with the repository's own settings (as ``make run`` does) and
drives Debian's Chromium with Playwright. It prints:

* the polytope instrument (``browserbench.instrument``): the in-page time from an input event to the end of its
  redraw, over 20 key presses and a 20-move mouse drag of the ascent start and of the discount (median, p95,
  server reruns meanwhile), and after the discount's release the time until the retrained PVN is drawn;
* each browser player's frames a second while playing, and the server reruns meanwhile (``browserbench.playback``);
* each view switch of a player (``browserbench.views``): the probing states' axes and the replay's start and PVN,
  from the change to the redraw, and the server reruns meanwhile;
* the time to open each page first on a fresh server, to an idle page with the figures of its first screen drawn
  (a MutationObserver in the page records the last change of the script state before the page stays idle for a
  second, so the number does not include the benchmark's own polling).

``--baseline DIR`` opens the pages of a second checkout (e.g. ``git worktree add /tmp/before main``) too,
alternating with this one, and prints the ratio: the machine's load is shared by both.
"""

from __future__ import annotations

import itertools
import statistics
import time
from pathlib import Path

from browserbench.browser import FIRST_SCREEN_DRAWN, IDLE, draw_every_figure, launch, start_server, stop_server
from pvnviz.cli.argtypes import OneLineParser, positive_int

ROOT = Path(__file__).resolve().parents[1]
# page -> (URL path, whether it has figures (open: those of its first screen drawn), goal in seconds)
PAGES = {
    "home": ("", False, 6.0),
    "polytope": ("polytope", True, 6.0),
    "cartpole": ("cartpole", True, 6.0),
    "swimmer": ("swimmer", True, 6.0),
}
INSTRUMENT = {  # measurement -> (the polytope instrument's control, whether the PVN retrains on its release)
    "ascent start P(a1|s1)": ("start1", False),
    "discount γ": ("gamma", True),
}

OBSERVER = """() => {
  window.__pvnStates = [];
  const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => window.__pvnStates.push(
      [performance.now(), app.getAttribute('data-test-script-state')]))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


def wait_settled(page, since_ms: float, charts: bool = False, quiet_ms: int = 1000, timeout_s: float = 180) -> float:
    """Seconds from ``since_ms`` (page clock) to the last switch to idle, once idle for ``quiet_ms`` (and, with
    ``charts``, the figures of the first screen drawn)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
        if charts:
            page.wait_for_function(FIRST_SCREEN_DRAWN, timeout=timeout_s * 1000)
        states = page.evaluate("window.__pvnStates || []")
        now = page.evaluate("performance.now()")
        idle = page.evaluate(f'document.querySelector("{IDLE}") !== null')
        last_change = max((t for t, _ in states), default=since_ms)
        if idle and now - last_change >= quiet_ms:
            idle_times = [t for t, s in states if s == "notRunning" and t >= since_ms]
            return ((idle_times[-1] if idle_times else last_change) - since_ms) / 1000
        page.wait_for_timeout(200)
    raise TimeoutError("the page did not become idle")


def first_open(browser, root: Path, path: str, charts: bool) -> float:
    """A fresh server, a fresh tab: seconds from navigation start to the idle page with its first screen drawn."""
    proc, url = start_server(root)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.add_init_script(
            "document.addEventListener('DOMContentLoaded', () => {"
            " const wait = () => { const app = document.querySelector(\"[data-testid='stApp']\");"
            " if (!app) { requestAnimationFrame(wait); return; } window.__pvnStates = [];"
            " new MutationObserver(() => window.__pvnStates.push([performance.now(),"
            " app.getAttribute('data-test-script-state')])).observe(app, {attributes: true,"
            " attributeFilter: ['data-test-script-state']}); }; wait(); });"
        )
        page.goto(f"{url}/{path}", wait_until="commit")
        seconds = wait_settled(page, 0.0, charts)
        page.close()
        return seconds
    finally:
        stop_server(proc)


def open_polytope(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{url}/polytope")
    page.wait_for_selector(IDLE, timeout=180_000)
    page.wait_for_selector(".pvn-poly[data-drawn]", timeout=180_000)
    page.wait_for_timeout(1500)
    return page


def slider_move(page, label: str) -> float:
    """Move a Streamlit slider one step (Right, or Left when it is at its end); seconds until the page is idle."""
    thumb = page.locator("[data-testid='stSlider']").filter(has_text=label).first.locator("input[type='range']")
    at_end = thumb.input_value() == thumb.get_attribute("max")
    page.evaluate(OBSERVER)
    thumb.focus()
    since = page.evaluate("performance.now()")
    thumb.press("ArrowLeft" if at_end else "ArrowRight")
    return wait_settled(page, since)


def _print_instrument(browser, url: str, repeats: int) -> None:
    """The polytope instrument: input event to redraw, by keyboard and by mouse drag (this checkout only: a
    checkout whose controls are Streamlit sliders has no such stamps)."""
    from browserbench.instrument import drag, keyboard, summary

    for name, (control, retrains) in INSTRUMENT.items():
        page = open_polytope(browser, url)
        keys, drags, key_reruns, drag_reruns, learned = [], [], 0, 0, []
        for _ in range(repeats):
            times, reruns = keyboard(page, control)
            keys += times
            key_reruns = max(key_reruns, reruns)
            page.wait_for_selector(IDLE, timeout=180_000)
            times, reruns, seconds = drag(page, control, release_wait=retrains)
            drags += times
            drag_reruns = max(drag_reruns, reruns)
            if seconds is not None:
                learned.append(seconds)
            page.wait_for_selector(IDLE, timeout=180_000)
        print(f"  instrument {name}: keyboard {summary(keys)}, reruns <= {key_reruns} per 20 keys "
              f"(a key press is a release); drag {summary(drags)}, reruns {drag_reruns} "
              "(goal: 50 ms median, 100 ms p95, 0 reruns)", flush=True)  # fmt: skip
        if learned:
            print(f"  instrument {name}: release to learned overlays {statistics.median(learned):.2f} s "
                  f"(goal < 1.5 s; runs {', '.join(f'{t:.2f}' for t in learned)})", flush=True)  # fmt: skip
        page.close()


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m pvnviz.bench ui", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="repetitions of each measurement (median shown)"
    )
    parser.add_argument("--root", default=str(ROOT), help="checkout to serve (default: this one)")
    parser.add_argument(
        "--baseline",
        default="",
        help="a second checkout (e.g. the code before a change) measured in the same process, alternating "
        "with --root on every repetition so both see the same machine load; a ratio is printed",
    )
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated pages to time the first open of")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of: {', '.join(PARTS)}")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    if parts - set(PARTS):
        parser.error(f"unknown parts {', '.join(sorted(parts - set(PARTS)))}; choose from {', '.join(PARTS)}")
    unknown = sorted(set(args.pages.split(",")) - set(PAGES))
    if unknown:
        parser.error(f"unknown pages {', '.join(unknown)}; choose from {', '.join(PAGES)}")
    roots = {"now": Path(args.root)}
    if args.baseline:
        roots["baseline"] = Path(args.baseline)
    from playwright.sync_api import sync_playwright

    print(f"UI benchmark: {', '.join(f'{k} = {v}' for k, v in roots.items())}; "
          f"median of {args.repeats}, Chromium 1280x720")  # fmt: skip
    with sync_playwright() as p:
        browser = launch(p)
        servers = {name: start_server(root) for name, root in roots.items()}
        try:
            if "instrument" in parts:
                _print_instrument(browser, servers["now"][1], args.repeats)
            if "playback" in parts:
                _print_playback(browser, {name: url for name, (_, url) in servers.items()}, args.repeats)
            if "views" in parts:
                _print_views(browser, servers["now"][1], args.repeats)
        finally:
            for proc, _ in servers.values():
                stop_server(proc)
        for name in args.pages.split(",") if "open" in parts else ():
            path, charts, goal = PAGES[name]
            times = {k: [] for k in roots}
            for _ in range(args.repeats):
                for k, root in roots.items():
                    times[k].append(first_open(browser, root, path, charts))
            _print(f"first open on a fresh server: {name}", times, goal)
        browser.close()
    return 0


# page (with its query) -> its players' captions
PLAYERS = {"polytope": ("ascent step",), "polytope?beyond=true": ("round",), "cartpole": ("snapshot", "time step")}
DRAWN = """(caption) => [...document.querySelectorAll('.pvn-player')]
  .some((r) => r.querySelector('.pvn-player-caption')?.textContent.includes(caption) && r.dataset.drawn)"""
PARTS = ("instrument", "playback", "views", "open")  # what --parts may name
VIEWS = {  # page -> (player caption, drop-down label) switched in the page
    "cartpole": (("snapshot", "Horizontal axis"), ("time step", "Start"), ("time step", "Ascent through")),
    "swimmer": (("snapshot", "Vertical axis"), ("time step", "Start")),
}


def _print_views(browser, url: str, repeats: int) -> None:
    """The players' view switches (the probing states' axes, the replay's start and PVN): change to redraw.
    Each switch is drawn in the browser, not by a server rerun that draws the figures again."""
    from browserbench.instrument import summary
    from browserbench.views import switches

    for path, views in VIEWS.items():
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/{path}")
        page.wait_for_selector(IDLE, timeout=300_000)
        draw_every_figure(page, 1)
        page.wait_for_function("document.body.innerText.includes('time step 0 (1 of')", timeout=300_000)
        for caption, label in views:
            times, reruns = [], 0
            for _ in range(repeats):
                ms, n = switches(page, caption, label)
                times += ms
                reruns = max(reruns, n)
            print(f"  view switch {path} {label}: {summary(times)}, server reruns {reruns} per 10 switches "
                  "(one per switch, for the URL, after the redraw; goal 50 ms median, 100 ms p95)",
                  flush=True)  # fmt: skip
        page.close()



def _print_playback(browser, urls: dict[str, str], repeats: int) -> None:
    """Frames a second and server reruns while each browser player plays, for each checkout served (``urls``:
    name -> URL; a player made of server reruns has no frame stamps to count)."""
    from browserbench.playback import playback, player

    for (path, captions), (name, url) in itertools.product(PLAYERS.items(), urls.items()):
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/{path}")
        page.wait_for_selector(IDLE, timeout=300_000)
        draw_every_figure(page, 1)
        for caption in captions:
            player(page, caption).scroll_into_view_if_needed()  # drawn once it is near: then it can play
            page.wait_for_function(DRAWN, arg=caption, timeout=300_000)
            runs = [playback(page, caption) for _ in range(repeats)]
            fps = statistics.median(r[0] for r in runs)
            print(
                f"  playback {path} ({caption}, {name}): {fps:5.1f} frames/s (goal >= 30; runs "
                + ", ".join(f"{r[0]:.1f}" for r in runs)
                + f"), server reruns while playing {max(r[1] for r in runs)} (goal 0)",
                flush=True,
            )
        page.close()


def _print(name: str, times: dict[str, list[float]], goal: float) -> None:
    median = {k: statistics.median(v) for k, v in times.items()}
    line = f"  {name:<46} {median['now']:6.2f} s  (goal < {goal:g} s; runs "
    line += ", ".join(f"{t:.2f}" for t in times["now"]) + ")"
    if "baseline" in median:
        line += f"  baseline {median['baseline']:.2f} s (runs " + ", ".join(f"{t:.2f}" for t in times["baseline"])
        line += f"), ratio baseline/now {median['baseline'] / median['now']:.2f}x"
    print(line, flush=True)

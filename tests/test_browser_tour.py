"""A screenshot tour: every page in a real Chromium at 1280x720 and 1920x1080, in projector mode too.

Each visit saves a full-page screenshot under tests/artifacts/tour/ for a person to look at, and fails on what a
program can see there:

- text cut short: a plotly title, axis title, annotation, tick label or legend entry drawn past its figure's
  svg (plotly clips it there), a legend entry past the legend's box, or a Streamlit metric label whose text is
  wider than its box (Streamlit ends it with an ellipsis), a metric's value, a button or a sidebar page link
  cut so;
- a figure beside an empty column (half its row wasted), or two figures with the same title;
- an exception on the page, or the app's "error id" message (``ui.errors``);
- in projector mode, a widget label, tick label or legend entry under 18 px;
- a page icon in the sidebar's navigation drawn from an emoji (missing from a browser without an emoji font)
  rather than a Material icon.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from browserbench.browser import SCROLL_THROUGH
from conftest import wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
TOUR = ROOT / "tests" / "artifacts" / "tour"
PAGES = {"": "home", "polytope": "polytope", "cartpole": "cartpole", "swimmer": "swimmer", "any_env": "any-env"}
VIEWPORTS = {"1280x720": (1280, 720), "1920x1080": (1920, 1080)}
MODES = {"normal": "", "projector": "projector=true"}

# Every text element of a drawn plotly figure that sticks out of its box: [{figure title, what, text, by}, ...].
# A figure's box is its first .main-svg (plotly clips there); a legend entry's is also its legend's background.
CUT_PLOTLY_TEXT = """() => {
  const cut = [];
  const visible = (el) => el.checkVisibility() && !el.closest('details:not([open]) > :not(summary)');
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const svg = plot.querySelector('.main-svg');
    if (!svg || !visible(plot)) continue;
    const box = svg.getBoundingClientRect();
    if (box.width < 10) continue;
    const name = plot.querySelector('.gtitle')?.textContent || '(untitled figure)';
    const check = (el, what, outer) => {
      const text = el.textContent.trim();
      if (!text) return;
      const r = el.getBoundingClientRect();
      if (r.width === 0) return;
      const by = Math.max(outer.left - r.left, r.right - outer.right, outer.top - r.top, r.bottom - outer.bottom);
      if (by > 1.5) cut.push({figure: name, what, text, by: Math.round(by)});
    };
    const kinds = [['.gtitle', 'title'], ['[class^="g-x"][class$="title"] text, [class^="g-y"][class$="title"] text',
      'axis title'], ['.annotation-text', 'annotation'],
      ['.xtick text, .ytick text', 'tick label'], ['.legendtext', 'legend entry']];
    for (const [selector, what] of kinds) {
      for (const el of plot.querySelectorAll(selector)) check(el, what, box);
    }
    for (const legend of plot.querySelectorAll('.legend')) {
      const bg = legend.querySelector('.bg');
      if (!bg) continue;
      const outer = bg.getBoundingClientRect();
      // the legend's scroll box clips its entries at its background: an entry wider than it is cut
      for (const el of legend.querySelectorAll('.legendtext')) {
        const r = el.getBoundingClientRect();
        if (r.right > outer.right + 1.5) check(el, 'legend entry (past the legend box)', outer);
      }
    }
  }
  return cut;
}"""

# Streamlit metric labels and values, widget labels, buttons and the sidebar's page links whose text is wider than
# their box.
CUT_LABELS = """() => {
  const cut = [];
  const labels = ["stMetricLabel", "stMetricValue", "stWidgetLabel", "stSidebarNavLink"];
  const selector = labels.map((id) => `[data-testid='${id}']`).join(", ") + ", [data-testid^='stBaseButton']";
  for (const label of document.querySelectorAll(selector)) {
    for (const el of [label, ...label.querySelectorAll('*')]) {
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
        cut.push({text: label.textContent.trim(), scroll: el.scrollWidth, client: el.clientWidth});
        break;
      }
    }
  }
  return cut;
}"""

# Rows (st.columns) where a figure sits beside an empty column, and figure titles drawn twice on the page.
WASTED_AND_REPEATED = """() => {
  const half = [];
  for (const row of document.querySelectorAll("[data-testid='stMain'] [data-testid='stHorizontalBlock']")) {
    const columns = [...row.querySelectorAll(":scope > [data-testid='stColumn']")];
    const figures = columns.filter((c) => c.querySelector('.pvn-plotly-view'));
    const empty = columns.filter((c) => c.getBoundingClientRect().height > 0 && c.innerText.trim() === ''
      && !c.querySelector('.pvn-plotly-view, .pvn-player, .pvn-poly, canvas, img'));
    if (figures.length && empty.length) half.push(figures[0].querySelector('.gtitle')?.textContent || '(figure)');
  }
  const titles = [...document.querySelectorAll('.js-plotly-plot .gtitle')].map((t) => t.textContent);
  const repeated = [...new Set(titles.filter((t, i) => titles.indexOf(t) !== i))];
  return {half, repeated};
}"""

# The smallest text sizes on the page (px): a sidebar widget label, a figure's tick labels, a legend entry.
TEXT_SIZES = """() => {
  const px = (el) => parseFloat(el.style.fontSize || getComputedStyle(el).fontSize);
  const least = (selector) => Math.min(...[...document.querySelectorAll(selector)].map(px));
  const label = document.querySelector("[data-testid='stSidebar'] [data-testid='stWidgetLabel'] p");
  // per figure its largest tick label: plotly draws a log axis's in-between labels (2, 5) at 3/4 of the size
  const ticks = [...document.querySelectorAll('.js-plotly-plot')].map((plot) => Math.max(
    ...[...plot.querySelectorAll('.xtick text, .ytick text')].map(px)));
  const legend = least('.js-plotly-plot .legendtext');
  const tick = Math.min(...ticks.filter(Number.isFinite));
  return Object.fromEntries(Object.entries({label: label ? px(label) : 0, tick, legend})
    .filter(([, size]) => Number.isFinite(size)));
}"""
PROJECTOR_PX = 18  # projector mode's smallest text: 12 px ticks and legends, 14 px widget labels, scaled

# The sidebar navigation's icons: emoji ones (stIconEmoji, or an emoji character in a link's text) and all of them.
NAV_ICONS = r"""() => {
  const nav = document.querySelector("[data-testid='stSidebarNav']");
  if (!nav) return {links: 0, emoji: ['no sidebar navigation']};
  const emoji = nav.querySelectorAll("[data-testid='stIconEmoji']").length ? ['stIconEmoji'] : [];
  for (const link of nav.querySelectorAll("[data-testid='stSidebarNavLink']")) {
    const pictographs = link.textContent.match(/\p{Extended_Pictographic}/gu);
    if (pictographs) emoji.push(...pictographs);
  }
  const links = nav.querySelectorAll("[data-testid='stSidebarNavLink']").length;
  const material = nav.querySelectorAll("[data-testid='stIconMaterial']").length;
  return {links, material, emoji};
}"""

# Every plotly view and player on the page is drawn (after the page was scrolled by them).
ALL_DRAWN = """() => [...document.querySelectorAll('.pvn-plotly-view, .pvn-player-stage, .pvn-poly')]
  .filter((el) => el.checkVisibility() && !el.closest('details:not([open]) > :not(summary)'))
  .every((el) => el.querySelector('.main-svg') !== null)"""
# The height of the page's content: Streamlit scrolls its main block, so a full-page screenshot of the window
# holds one screen; the window is made this tall for the screenshot.
CONTENT_HEIGHT = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  const side = document.querySelector("[data-testid='stSidebarContent']");
  return Math.max(main ? main.scrollHeight : 0, side ? side.scrollHeight : 0, innerHeight);
}"""
MAX_SHOT_HEIGHT = 16_000  # pixels: Chromium's screenshots stop somewhere above this


def visit(browser, server: str, path: str, viewport: str, mode: str) -> tuple[list[str], Path]:
    """Open one page, draw every figure on it, save a full-page screenshot; the problems the checks found."""
    width, height = VIEWPORTS[viewport]
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    query = MODES[mode]
    page.goto(f"{server}/{path}" + (f"?{query}" if query else ""))
    wait_idle(page)
    deadline = time.monotonic() + 60
    while True:  # the figures below the fold are drawn as the page scrolls by them
        page.evaluate(SCROLL_THROUGH)
        page.wait_for_timeout(200)
        if page.evaluate(ALL_DRAWN) or time.monotonic() > deadline:
            break
    wait_idle(page)
    problems = ["not every figure drawn within 60 s"] if not page.evaluate(ALL_DRAWN) else []
    problems += [f"{c['what']} cut short by {c['by']} px: {c['text']!r}" for c in page.evaluate(CUT_PLOTLY_TEXT)]
    problems += [f"label cut short ({c['scroll']} px in {c['client']} px): {c['text']!r}"
                 for c in page.evaluate(CUT_LABELS)]  # fmt: skip
    layout = page.evaluate(WASTED_AND_REPEATED)
    problems += [f"a figure beside an empty column: {title!r}" for title in layout["half"]]
    problems += [f"two figures with one title: {title!r}" for title in layout["repeated"]]
    problems += [f"exception: {text[:300]}" for text in page.locator("[data-testid='stException']").all_inner_texts()]
    problems += [
        f"error: {t[:300]}" for t in page.locator("[data-testid='stAlert']").all_inner_texts() if "error id" in t
    ]
    problems += [f"browser error: {e}" for e in errors]
    if mode == "projector":
        sizes = page.evaluate(TEXT_SIZES)  # None: no such text on the page
        problems += [f"{what} text of {px} px in projector mode" for what, px in sizes.items() if px < PROJECTOR_PX]
    nav = page.evaluate(NAV_ICONS)
    if nav["emoji"]:
        problems.append(f"page icons drawn from emoji: {nav['emoji']}")
    if nav["links"] < len(PAGES) or nav.get("material", 0) < len(PAGES):
        problems.append(f"sidebar navigation without a Material icon per page: {nav}")
    TOUR.mkdir(parents=True, exist_ok=True)
    shot = TOUR / f"{PAGES[path]}-{viewport}-{mode}.png"
    page.set_viewport_size({"width": width, "height": min(page.evaluate(CONTENT_HEIGHT), MAX_SHOT_HEIGHT)})
    page.wait_for_timeout(300)
    page.evaluate(SCROLL_THROUGH)  # a taller window shows figures not drawn yet
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    return problems, shot


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("path", list(PAGES))
def test_tour(server, browser, path, viewport, mode):
    problems, shot = visit(browser, server, path, viewport, mode)
    assert shot.stat().st_size > 10_000, shot
    assert not problems, f"{shot.name}:\n" + "\n".join(problems)


# The polytope figures' corner names (π=(a?,a?), painted on a canvas by components/canvas_layer.js, which
# records each label's box): pairs of them less than 2 px apart, and any reaching out of its figure.
CORNER_CLASHES = """() => {
  const out = [];
  for (const plot of document.querySelectorAll('.pvn-poly .js-plotly-plot')) {
    const title = plot.querySelector('.gtitle')?.textContent;
    const notes = (plot.pvnNotes ?? []).filter((n) => n.text.startsWith('π='));
    if (!plot.pvnNotes) out.push(`${title}: no label boxes recorded`);
    for (const [i, a] of notes.entries()) {
      if (a.left < 0 || a.left + a.width > plot._fullLayout.width) out.push(`${title}: ${a.text} cut at the side`);
      for (const b of notes.slice(i + 1)) {
        if (a.left < b.left + b.width + 2 && b.left < a.left + a.width + 2 && a.top < b.top + b.height + 2
            && b.top < a.top + a.height + 2) out.push(`${title}: ${a.text} and ${b.text} overlap`);
      }
    }
  }
  return out;
}"""


@pytest.mark.parametrize("mode", list(MODES))
def test_corner_names_stay_apart_after_random_mdps(server, browser, mode):
    """Random MDPs put corners of the value polytope close together: their names are placed apart."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{server}/polytope?seed=4" + (f"&{MODES[mode]}" if MODES[mode] else ""))
    wait_idle(page)
    clashes = []
    for draw in range(3):
        page.get_by_role("button", name="Random MDP").click()
        wait_idle(page)
        page.wait_for_function("document.querySelectorAll('.pvn-poly .js-plotly-plot').length >= 3", timeout=60_000)
        page.wait_for_timeout(500)
        clashes += [f"random MDP {draw + 1}: {clash}" for clash in page.evaluate(CORNER_CLASHES)]
    page.close()
    assert not clashes, clashes

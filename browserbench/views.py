"""The players' view switches, for ``python -m pvnviz.bench ui``.

``components/player.js`` stamps each switch of a view (a drop-down above a player: the probing states'
axes, the replay's start and PVN): ``data-switch-ms`` is the time from the select's change event to the
animation frame after the redraw, ``data-switched`` counts them. Here a drop-down is stepped through its options
(one redraw awaited each) and the server reruns that begin meanwhile are counted: each switch is reported once, so
the server can put it into the URL; the redraw does not wait for it.
"""

from __future__ import annotations

from browserbench.instrument import COUNT_RERUNS


def switches(page, caption: str, label: str, count: int = 10) -> tuple[list[float], int]:
    """(ms from each switch to its redraw, server reruns) over ``count`` switches of the drop-down ``label`` of
    the player whose caption names ``caption``, cycling through its options."""
    from browserbench.playback import player as find

    player = find(page, caption)
    player.scroll_into_view_if_needed()  # drawn, with its drop-downs, once near the screen
    select = player.locator("label", has_text=label).locator("select")
    select.scroll_into_view_if_needed()
    options = select.locator("option").count()
    page.evaluate(COUNT_RERUNS)
    times = []
    for k in range(count):
        before = int(player.get_attribute("data-switched") or 0)
        current = int(select.input_value())
        select.select_option(index=(current + 1 + k % max(options - 1, 1)) % options)
        page.wait_for_function(
            "([el, n]) => Number(el.dataset.switched || 0) > n", arg=[player.element_handle(), before], timeout=10_000
        )
        times.append(float(player.get_attribute("data-switch-ms")))
        page.wait_for_timeout(300)  # a student reads the figure before the next switch
    return times, page.evaluate("window.__pvnReruns")

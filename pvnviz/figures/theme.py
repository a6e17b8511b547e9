"""One colour per concept, shared by every page's figures; common layout and animation controls."""

import plotly.graph_objects as go
import plotly.io as pio

EXACT = "#1f77b4"  # exact math / true (Monte Carlo) return
LEARNED = "#ff7f0e"  # anything predicted by a PVN
TRAIN = "#2ca02c"  # policies the PVN trains on (kept by the filter)
TEST = "#9467bd"  # held-out policies (test / validation split)
FILTERED = "#d62728"  # policies dropped by the training-set filter
LIMIT = "#d62728"  # the training-set performance limit line
FINGERPRINT = "#ff7f0e"  # PVN fed with probing-state fingerprints
FLATTENED = "#7f7f7f"  # PVN fed with flattened weights (the baseline)
OPTIMUM = "#f0c000"
# Markers drawn on both Streamlit themes (white and dark): mid greys with a white outline, never black.
CORNER = "#8c8c8c"
START = "#8c8c8c"  # the start of an ascent path
NEUTRAL = "#8c8c8c"  # reference lines (diagonals)
OUTLINE = dict(width=1.5, color="white")
BASELINE = "#8c8c8c"
PROBE = "#e377c2"
LABEL_BG = "rgba(255,255,255,0.7)"  # behind text labels drawn over markers (a dark theme may darken it)
HIGHLIGHT = "#e0115f"  # the frame or policy a player or a picker selects, ringed in every figure showing it

FONT = dict(size=13)
PROJECTOR_SCALE = 1.6  # fonts, markers and lines in projector mode
# The page's look (components/plotly_lib.js, Streamlit's theme at a 16 px root): title 16 px bold, axis
# titles 14 px, tick labels and legend 12 px. A figure's own layout wins over that look, so projector mode sets each.
TITLE_PX, AXIS_TITLE_PX, SMALL_PX = 16, 14, 12
# Characters of a 16 px bold title line in the narrowest figure a page draws (half of a 1280 px wide page); a
# projector title line holds this over the scale.
TITLE_CHARS = 46
TITLE_LINE = 1.35  # a title line's height, in font sizes


def wrap_title(text: str, chars: int) -> list[str]:
    """``text`` (plotly's ``<br>`` line breaks dropped) as lines of at most ``chars`` characters, broken at spaces
    (a longer word keeps its own line)."""
    import textwrap

    flat = " ".join(part.strip() for part in text.replace("<br />", "<br>").split("<br>"))
    return textwrap.wrap(flat, chars, break_long_words=False, break_on_hyphens=False) or [""]


def projector(fig: go.Figure, scale: float = PROJECTOR_SCALE) -> go.Figure:
    """The figure for a lecture-hall projector: fonts (title, axis titles, tick labels, legend, annotations),
    marker sizes and line widths times ``scale`` (in place); the title wrapped to lines that fit the figure's
    width on the narrowest page (half of it, or all of it for a ``style(wide=True)`` figure), the top margin and
    height grown to hold them.

    Applies to the layout, every trace and every animation frame's traces, so a builder needs no
    parameter of its own; the pages call it when the sidebar's projector toggle is on.
    """

    def bigger(trace) -> None:
        data = trace.to_plotly_json()
        size = data.get("marker", {}).get("size")
        if isinstance(size, (int, float)):
            trace.update(marker_size=size * scale)
        width = data.get("line", {}).get("width")
        if isinstance(width, (int, float)):
            trace.update(line_width=width * scale)
        elif data.get("type") == "scatter" and "lines" in data.get("mode", "lines"):
            trace.update(line_width=2 * scale)  # plotly's default scatter line width is 2

    size = (fig.layout.font.size or FONT["size"]) * scale
    title_px = TITLE_PX * scale
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    lines = wrap_title(fig.layout.title.text or "", int(meta.get("title_chars", TITLE_CHARS) / scale))
    fig.update_layout(
        font=dict(size=size),
        title=dict(text="<br>".join(lines), font=dict(size=title_px)),
        legend=dict(font=dict(size=SMALL_PX * scale)),
    )
    fig.update_xaxes(tickfont_size=SMALL_PX * scale, title_font_size=AXIS_TITLE_PX * scale)
    fig.update_yaxes(tickfont_size=SMALL_PX * scale, title_font_size=AXIS_TITLE_PX * scale)
    fig.update_annotations(font_size=size * 0.9)
    for trace in fig.data:
        bigger(trace)
    for frame in fig.frames or ():
        for trace in frame.data:
            bigger(trace)
    top = fig.layout.margin.t
    extra = (len(lines) - 1) * TITLE_LINE * title_px + 1.5 * (title_px - TITLE_PX)  # the title's added lines, size
    if any(a.yref == "paper" and a.yanchor == "bottom" and (a.y or 0) >= 1 for a in fig.layout.annotations):
        extra += TITLE_LINE * size * 0.9  # panel titles (make_subplots') between the title and the panels
    if fig.layout.title.text and top is not None:
        fig.update_layout(margin=dict(t=int(top + extra)))  # the title stays centred in the top margin
    height = fig.layout.height
    if height:
        fig.update_layout(height=int(height * 1.25 + (extra if fig.layout.title.text else 0)))
    return fig


# Every figure's template, set once for the process: plotly then applies it when a figure is serialised,
# instead of validating and copying it into each figure (a cost every figure of a polytope rerun would pay).
pio.templates.default = "plotly_white"


def style(fig, title: str, height: int = 420, wide: bool = False):
    """Common layout: title, white background (the default template, above), legend on top. ``wide``: the page draws
    the figure across its whole width, so a projector title line holds twice as much (``projector``)."""
    fig.update_layout(
        meta={"title_chars": TITLE_CHARS * (2 if wide else 1)},
        title=dict(text=title, x=0.01),
        height=height,
        margin=dict(l=60, r=20, t=60, b=40),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0.0),
        font=FONT,
    )
    return fig


def play_controls(
    fig: go.Figure, frame_names: list[str], prefix: str, duration: int = 80, below_axis_title: bool = False
) -> None:
    """Play/Pause buttons and a step slider under an animated figure (frames named by frame_names).

    These are plotly's own client-side controls, for a figure shown or exported on its own; the app's pages
    step animations with ``ui.browser_player`` instead. ``below_axis_title`` moves them clear of an x-axis title.
    """
    drop = 0.1 if below_axis_title else 0.0
    fig.update_layout(
        updatemenus=[
            dict(
                type="buttons",
                showactive=False,
                x=0.0,
                y=-0.2 - drop,
                xanchor="left",
                yanchor="top",
                direction="left",
                buttons=[
                    dict(
                        label="▶ Play",
                        method="animate",
                        args=[None, dict(frame=dict(duration=duration, redraw=True), transition=dict(duration=0))],
                    ),
                    dict(
                        label="❚❚ Pause",
                        method="animate",
                        args=[[None], dict(frame=dict(duration=0, redraw=False), mode="immediate")],
                    ),
                ],
            )
        ],
        sliders=[
            dict(
                active=len(frame_names) - 1,
                x=0.2,
                y=-0.12 - drop,
                len=0.8,
                currentvalue=dict(prefix=prefix),
                steps=[
                    dict(
                        label=n,
                        method="animate",
                        args=[[n], dict(mode="immediate", frame=dict(duration=0, redraw=True))],
                    )
                    for n in frame_names
                ],
            )
        ],
    )


def frame_steps(num_frames: int, every: int) -> list[int]:
    """Every ``every``-th frame index, always ending on the last one."""
    steps = list(range(0, num_frames, every))
    if steps[-1] != num_frames - 1:
        steps.append(num_frames - 1)
    return steps


def rgba(hex_color: str, alpha: float) -> str:
    """``#rrggbb`` with opacity ``alpha``, as plotly's ``rgba(r,g,b,a)``."""
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"

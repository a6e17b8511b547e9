"""One colour per concept, shared by every page's figures."""

EXACT = "#1f77b4"  # exact math / true (Monte Carlo) return
LEARNED = "#ff7f0e"  # anything predicted by a PVN
TRAIN = "#2ca02c"  # policies the PVN trains on (kept by the filter)
TEST = "#9467bd"  # held-out policies (test / validation split)
FILTERED = "#d62728"  # policies dropped by the training-set filter
LIMIT = "#d62728"  # the training-set performance limit line
FINGERPRINT = "#ff7f0e"  # PVN fed with probing-state fingerprints
FLATTENED = "#7f7f7f"  # PVN fed with flattened weights (the baseline)
OPTIMUM = "#f0c000"
CORNER = "#222222"
BASELINE = "#555555"
PROBE = "#e377c2"

FONT = dict(size=13)


def style(fig, title: str, height: int = 420):
    """Common layout: title, white background, legend on top."""
    fig.update_layout(
        title=dict(text=title, x=0.01),
        template="plotly_white",
        height=height,
        margin=dict(l=60, r=20, t=60, b=40),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0.0),
        font=FONT,
    )
    return fig

"""``python -m pvnviz``: the headless runs of Section 6 at paper scale."""

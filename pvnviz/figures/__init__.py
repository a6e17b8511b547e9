"""Plotly figure builders: pure functions from pvnviz result dataclasses to go.Figure.

Kept apart from the compute core, which never imports plotly. Colours for the same
thing are the same on every page (``pvnviz.figures.theme``).
"""

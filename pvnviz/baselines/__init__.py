"""Baselines the paper's method is compared with (Section 6), kept apart from the method in ``pvnviz.core``."""

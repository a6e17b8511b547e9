"""A Section 6 experiment end to end: settings, presets, Algorithm 1 collection, pipeline, run files."""
